"""A local CA and clusters with SSL, SASL_PLAINTEXT and SASL_SSL listeners next to PLAINTEXT."""

from __future__ import annotations

import pytest

from pylog.security.certs import LocalCA

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SECURE_LISTENERS = {"SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}


@pytest.fixture(scope="session")
def ca(tmp_path_factory) -> LocalCA:
    """A CA, a broker keystore (CN=localhost, SAN 127.0.0.1) and client certificates, made with openssl."""
    authority = LocalCA(tmp_path_factory.mktemp("ca"))
    authority.issue("broker", "/CN=localhost")
    authority.issue("alice", "/CN=alice/OU=eng/O=pylog")
    authority.issue("expired", "/CN=old", days=-1, not_before_days_ago=10)
    return authority


def security_overrides(ca: LocalCA, **extra: str) -> dict[str, str]:
    """Broker settings for the secure listeners: PEM keystore/truststore, client certs on SSL, SASL logins."""
    return {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(ca.dir / "broker.keystore.pem"),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.cert),
            "listener.name.ssl.ssl.client.auth": "required",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS, **extra}


@pytest.fixture
def secure_cluster(cluster_factory, ca):
    """One broker with PLAINTEXT, SSL (client certificates required), SASL_PLAINTEXT and SASL_SSL listeners."""
    return cluster_factory(1, overrides=security_overrides(ca), extra_listeners=SECURE_LISTENERS)
