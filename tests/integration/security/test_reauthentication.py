"""connections.max.reauth.ms (KIP-368): the session lifetime is announced, clients re-authenticate on the
same connection, and a connection that does not is closed at its next request."""

import struct
import time

import pytest
from confluent_kafka import Producer

from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import decode_response, encode_request
from support.clients import create_topic, kcat
from support.wire import read_frame
from .conftest import SECURE_LISTENERS, security_overrides

pytestmark = pytest.mark.integration


def _call(sock, api_key, version, msg, corr):
    sock.sendall(encode_request(msg, version, corr, "reauth-test"))
    return decode_response(api_key, version, read_frame(sock))[1]


def test_session_lifetime_reauthentication_and_expiry(cluster_factory, ca):
    import socket
    c = cluster_factory(1, extra_listeners=SECURE_LISTENERS,
                        overrides=security_overrides(ca, **{"connections.max.reauth.ms": "3000"}))
    create_topic(c.bootstrap, "re")
    port = int(c.bootstrap_on("SASL_PLAINTEXT").split(":")[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        hs = _call(s, ApiKey.SaslHandshake, 1, request_class(ApiKey.SaslHandshake)[1](mechanism="PLAIN"), 1)
        assert hs.error_code == 0 and hs.mechanisms == ["PLAIN"]
        auth = _call(s, ApiKey.SaslAuthenticate, 1, request_class(ApiKey.SaslAuthenticate)[1](
            auth_bytes=b"\x00alice\x00alice-secret"), 2)
        assert auth.error_code == 0 and auth.session_lifetime_ms == 3000
        md = _call(s, ApiKey.Metadata, 1, request_class(ApiKey.Metadata)[1](topics=None), 3)
        assert [t.name for t in md.topics] == ["re"]
        time.sleep(3.5)  # the session expires; this client does not re-authenticate
        s.sendall(encode_request(request_class(ApiKey.Metadata)[1](topics=None), 1, 4, "reauth-test"))
        with pytest.raises(ConnectionError):
            read_frame(s)

    # librdkafka re-authenticates by itself: a producer keeps working across several session lifetimes.
    p = Producer({"bootstrap.servers": c.bootstrap_on("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
                  "sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"})
    errors = []
    for i in range(8):
        p.produce("re", f"r{i}".encode(), on_delivery=lambda err, msg: errors.append(err))
        p.flush(30)
        time.sleep(1)
    assert errors == [None] * 8
    assert kcat(c.bootstrap, "-C", "-t", "re", "-o", "beginning", "-e", "-q").stdout.split() == \
        [f"r{i}" for i in range(8)]
    # Only the raw client lost its connection to expiry: librdkafka re-authenticated in time.
    assert c.brokers[0].log_path.read_text().count("SASL session expired") == 1
