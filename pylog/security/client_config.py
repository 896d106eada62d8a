"""A tool's --command-config (Kafka client properties) as TLS and SASL settings for its connections.

Understood: security.protocol, ssl.truststore.location (PEM or PKCS12 as ssl.truststore.type says, or
librdkafka's ssl.ca.location), ssl.keystore.location (PEM key + certificate, or PKCS12) with
ssl.keystore.password / ssl.key.password, ssl.endpoint.identification.algorithm,
sasl.mechanism, and the login as sasl.jaas.config (username="..." password="...", and `tokenauth=true` for a
delegation token's id and HMAC, as Kafka's ScramLoginModule) or sasl.username / sasl.password. Anything unusable is a clear error naming the key.
"""

from __future__ import annotations

import ssl
from typing import Mapping

from pylog.client.aio import ConnectSecurity
from pylog.common.configdef import ConfigError
from pylog.security.sasl_client import client_mechanism
from pylog.security.settings import SUPPORTED_MECHANISMS, parse_jaas
from pylog.security.stores import load_keystore, load_truststore

__all__ = ["client_security"]


def _tls(props: Mapping[str, str]) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    # Kafka's clients default both store types to JKS; a bare PEM path (librdkafka's habit) is read as PEM.
    truststore = props.get("ssl.truststore.location")
    if truststore:
        load_truststore(ctx, props.get("ssl.truststore.type", _guess(truststore)), truststore,
                        props.get("ssl.truststore.password"))
    elif props.get("ssl.ca.location"):
        load_truststore(ctx, "PEM", props["ssl.ca.location"], None)
    else:
        ctx.load_default_certs()
    keystore = props.get("ssl.keystore.location")
    if keystore:
        load_keystore(ctx, props.get("ssl.keystore.type", _guess(keystore)), keystore,
                      props.get("ssl.keystore.password"), props.get("ssl.key.password"))
    ctx.check_hostname = props.get("ssl.endpoint.identification.algorithm", "https") != ""
    return ctx


def _guess(location: str) -> str:
    """The store type of a file whose type the properties do not name: by its extension, else PEM."""
    ext = location.rsplit(".", 1)[-1].lower()
    return {"p12": "PKCS12", "pfx": "PKCS12", "pkcs12": "PKCS12", "jks": "JKS"}.get(ext, "PEM")


def client_security(props: Mapping[str, str]) -> ConnectSecurity | None:
    """ConnectSecurity for these client properties (None for PLAINTEXT)."""
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ConfigError(f"Invalid value {protocol} for configuration security.protocol", key="security.protocol")
    if protocol == "PLAINTEXT":
        return None
    tls = _tls(props) if protocol.endswith("SSL") else None
    sasl = None
    if protocol.startswith("SASL_"):
        mech = props.get("sasl.mechanism", props.get("sasl.mechanisms", "GSSAPI")).upper()
        if mech not in SUPPORTED_MECHANISMS:
            raise ConfigError(f"sasl.mechanism={mech} is not supported by pylog's tools; use "
                              f"{', '.join(SUPPORTED_MECHANISMS)}", key="sasl.mechanism")
        user, password = props.get("sasl.username"), props.get("sasl.password")
        token_auth = False
        if "sasl.jaas.config" in props:
            jaas = parse_jaas(props["sasl.jaas.config"])
            login = jaas.client_login
            if login is not None:
                user, password = login
            # ScramLoginModule's tokenauth=true: user and password are a delegation token's id and HMAC
            token_auth = str(jaas.options.get("tokenauth", "")).lower() == "true"
        if user is None or password is None:
            raise ConfigError("SASL needs a login: sasl.jaas.config with username and password (or sasl.username "
                              "and sasl.password)", key="sasl.jaas.config")
        sasl = lambda: client_mechanism(mech, user, password, token_auth)  # noqa: E731
    return ConnectSecurity(tls, sasl)
