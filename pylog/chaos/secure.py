"""Chaos with the brokers talking to each other over SASL_SSL (SCRAM-SHA-512 over TLS).

The replica fetchers and the controller's requests then go through TLS and SASL re-connections at
every kill, restart and session expiry; the producer and the verification stay on PLAINTEXT, so what
is checked is exactly the plaintext run's. The CA lives in the run's directory.
"""

from __future__ import annotations

from pathlib import Path

from pylog.security.certs import LocalCA
from pylog.security.credentials import write_user_credentials
from pylog.security.scram import make_credential
from pylog.zk.client import ZkClient

__all__ = ["INTER_BROKER_LISTENERS", "SecureSetup"]

INTER_BROKER_LISTENERS = ("PLAINTEXT", "SASL_SSL")
_USER, _PASSWORD = "broker", "chaos-broker-secret"


class SecureSetup:
    """Broker overrides and listeners for a SASL_SSL inter-broker listener, and the credential to store first."""

    def __init__(self, base_dir: Path) -> None:
        """Make the CA and the brokers' keystore under base_dir/ca."""
        ca = LocalCA(base_dir / "ca", "pylog-chaos-ca")
        ca.issue("broker", "/CN=localhost")
        login = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{_USER}" '
                 f'password="{_PASSWORD}";')
        self.extra_listeners = {"SASL_SSL": "SASL_SSL"}
        self.overrides = {
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(ca.dir / "broker.keystore.pem"),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.cert),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512", "inter.broker.listener.name": "SASL_SSL",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": login}

    @staticmethod
    def store_credential(zk: ZkClient) -> None:
        """The brokers' SCRAM credential in /config/users, before they start (as with Kafka)."""
        write_user_credentials(zk, _USER, {"SCRAM-SHA-512": make_credential("SCRAM-SHA-512", _PASSWORD)}, [])

