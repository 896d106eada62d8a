"""Per-listener security settings: JAAS logins, listener.name.* overrides and refusals of unusable settings."""

import ssl

import pytest

from pylog.common.config import BrokerConfig
from pylog.common.configdef import ConfigError
from pylog.security.certs import LocalCA
from pylog.security.settings import build_listener_security, parse_jaas

ZK = {"zookeeper.connect": "127.0.0.1:2181"}
PLAIN = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
         'password="a\\"b" user_admin="a\\"b" user_alice=alice-secret;')


def test_parse_jaas():
    login = parse_jaas(PLAIN)
    assert login.module == "org.apache.kafka.common.security.plain.PlainLoginModule"
    assert login.users == {"admin": 'a"b', "alice": "alice-secret"} and login.client_login == ("admin", 'a"b')
    assert "alice-secret" not in repr(login)
    with pytest.raises(ConfigError, match="not terminated by semi-colon"):
        parse_jaas('x.Y required a="b"')
    with pytest.raises(ConfigError, match="expected"):
        parse_jaas("nonsense")


@pytest.fixture(scope="module")
def keystore(tmp_path_factory):
    return LocalCA(tmp_path_factory.mktemp("ca")).issue("b", "/CN=localhost")


def test_listener_overrides_and_tls_settings(keystore):
    c = BrokerConfig.from_props({**ZK, "listeners": "PLAINTEXT://:9092,SSL://:9093,SASL_SSL://:9094",
                                 "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore.path),
                                 "ssl.enabled.protocols": "TLSv1.3", "listener.name.ssl.ssl.client.auth": "required",
                                 "ssl.truststore.location": str(keystore.cert), "ssl.truststore.type": "PEM",
                                 "sasl.enabled.mechanisms": "SCRAM-SHA-256",
                                 "listener.name.sasl_ssl.connections.max.reauth.ms": "60000"})
    sec = build_listener_security(c)
    assert sec["PLAINTEXT"].ssl_context is None and sec["SSL"].ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert sec["SASL_SSL"].ssl_context.verify_mode == ssl.CERT_NONE
    assert sec["SSL"].ssl_context.minimum_version == ssl.TLSVersion.TLSv1_3
    assert sec["SASL_SSL"].mechanisms == ["SCRAM-SHA-256"] and sec["SASL_SSL"].reauth_ms == 60000


@pytest.mark.parametrize("props,message", [
    ({"listeners": "PLAINTEXT://:1,SSL://:2", "ssl.keystore.location": "/k"}, "ssl.keystore.type=JKS is not supported"),
    ({"listeners": "PLAINTEXT://:1,SSL://:2"}, "ssl.keystore.location is not set"),
    ({"listeners": "PLAINTEXT://:1,SSL://:2", "ssl.keystore.type": "PEM", "ssl.keystore.location": "/nope.pem"},
     "Cannot load the PEM keystore /nope.pem"),
    ({"listeners": "PLAINTEXT://:1,SASL_PLAINTEXT://:2"}, "sasl.enabled.mechanisms=GSSAPI is not supported"),
    ({"listeners": "PLAINTEXT://:1,SASL_PLAINTEXT://:2", "sasl.enabled.mechanisms": "PLAIN"},
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({"listeners": "SASL_PLAINTEXT://:2", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol": "PLAIN"},
     "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms"),
    ({"listeners": "SASL_PLAINTEXT://:2", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"},
     "needs username and password"),
    ({"listeners": "PLAINTEXT://:1,SSL://:2", "ssl.keystore.type": "PEM", "ssl.enabled.protocols": "TLSv1"},
     None),
])
def test_unusable_settings_are_refused_with_the_key(props, message, keystore):
    if message is None:  # TLSv1: refused by name once a keystore loads
        props = {**props, "ssl.keystore.location": str(keystore.path)}
        message = "pylog supports TLSv1.2, TLSv1.3"
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        build_listener_security(BrokerConfig.from_props({**ZK, **props}))
