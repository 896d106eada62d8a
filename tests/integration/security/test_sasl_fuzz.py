"""Random SaslHandshake / SaslAuthenticate frames, raw garbage and broken TLS handshakes against a broker.

Whatever arrives, the connection never gets past authentication (a Metadata request after the
sequence is never answered), the broker never logs an unexpected error, and it keeps serving.
"""

import random
import socket
import ssl
import struct

import pytest

from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import encode_request
from support.clients import kcat
from support.wire import read_frame

pytestmark = pytest.mark.integration

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "", "x" * 200]


def _tokens(rnd: random.Random) -> bytes:
    return rnd.choice([
        rnd.randbytes(rnd.randrange(0, 300)),
        b"\x00alice\x00" + rnd.randbytes(8),
        b"alice\x00alice\x00alice-secretX",
        b"\x00\x00",
        f"n,,n=alice,r={rnd.randbytes(6).hex()}".encode(),
        f"n,a=bob,n=alice,r={rnd.randbytes(6).hex()}".encode(),
        b"c=biws,r=abc,p=" + rnd.randbytes(20).hex().encode(),
        "n,,n=\u00e9=ZZ,r=\x7f".encode(),
    ])


def _attempt(sock: socket.socket, rnd: random.Random) -> bool:
    """Random SASL traffic, then Metadata: True when the broker answered the Metadata request."""
    corr = 1
    try:
        if rnd.random() < 0.15:
            sock.sendall(struct.pack(">i", 12) + rnd.randbytes(12))  # not even a request header
        else:
            hs = request_class(ApiKey.SaslHandshake)[1](mechanism=rnd.choice(MECHANISMS))
            sock.sendall(encode_request(hs, rnd.choice([0, 1]), corr, "fuzz"))
            read_frame(sock)
            for _ in range(rnd.randrange(1, 4)):
                corr += 1
                v = rnd.choice([0, 1, 2])
                auth = request_class(ApiKey.SaslAuthenticate)[v](auth_bytes=_tokens(rnd))
                sock.sendall(encode_request(auth, v, corr, "fuzz"))
                read_frame(sock)
        md = request_class(ApiKey.Metadata)[1](topics=None)
        sock.sendall(encode_request(md, 1, corr + 1, "fuzz"))
        while True:
            frame = read_frame(sock)
            if struct.unpack(">i", frame[:4])[0] == corr + 1:
                return True
    except (ConnectionError, OSError):
        return False


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_sasl_fuzz_never_authenticates_never_crashes(secure_cluster, ca, listener):
    c = secure_cluster
    port = int(c.bootstrap_on(listener).split(":")[1])
    ctx = ssl.create_default_context(cafile=str(ca.cert))
    rnd = random.Random(listener)
    for _ in range(60):
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1") if listener == "SASL_SSL" else raw
        with sock:
            assert not _attempt(sock, rnd)
    assert kcat(c.bootstrap, "-L").returncode == 0
    log = c.brokers[0].log_path.read_text()
    assert "Unexpected error" not in log and "Traceback" not in log


def test_broken_tls_handshakes_do_not_hurt(secure_cluster, ca):
    c = secure_cluster
    port = int(c.bootstrap_on("SASL_SSL").split(":")[1])
    rnd = random.Random(7)
    hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
    for i in range(40):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(rnd.choice([rnd.randbytes(rnd.randrange(1, 600)), hello + rnd.randbytes(300), hello]))
            if i % 3 == 0:
                continue  # hang up mid-handshake
            s.settimeout(1)  # an incomplete hello waits for more (ssl_handshake_timeout); don't wait it out
            try:
                while s.recv(4096):
                    pass
            except OSError:
                pass
    assert kcat(c.bootstrap, "-L").returncode == 0
    log = c.brokers[0].log_path.read_text()
    assert "Unexpected error" not in log and "Traceback" not in log
