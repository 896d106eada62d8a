"""SCRAM exchanges against RFC 7677's SCRAM-SHA-256 example and round trips for both mechanisms."""

import base64

import pytest

from pylog.security.scram import ScramClient, ScramCredential, ScramError, ScramServer, make_credential


def test_rfc7677_example_exchange():
    # RFC 7677 section 3: user "user", password "pencil", i=4096.
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    cred = make_credential("SCRAM-SHA-256", "pencil", 4096, salt)
    server = ScramServer("SCRAM-SHA-256", lambda u: cred if u == "user" else None)
    first = server.first(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first.startswith(b"r=rOprNGfwEbeRWgbNEkqO") and b",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096" in first
    # Replay the RFC's server nonce to check the proof and signature bytes it lists.
    server._nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    server._server_first = f"r={server._nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = server.final(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                         b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.username == "user"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_round_trip_and_wrong_password(mechanism):
    cred = make_credential(mechanism, "alice-secret", 4096)
    assert ScramCredential.from_text(cred.to_text()) == cred
    client, server = ScramClient(mechanism, "alice", "alice-secret"), ScramServer(mechanism, {"alice": cred}.get)
    client.verify(server.final(client.final(server.first(client.first()))))
    assert server.complete

    bad, server = ScramClient(mechanism, "alice", "nope"), ScramServer(mechanism, {"alice": cred}.get)
    with pytest.raises(ScramError, match="invalid credentials") as info:
        server.final(bad.final(server.first(bad.first())))
    assert "nope" not in str(info.value)


def test_unknown_user_fails_only_at_the_proof():
    server = ScramServer("SCRAM-SHA-256", lambda u: None)
    client = ScramClient("SCRAM-SHA-256", "mallory", "x")
    first = server.first(client.first())
    assert b",s=" in first and b",i=4096" in first
    with pytest.raises(ScramError, match="invalid credentials"):
        server.final(client.final(first))


@pytest.mark.parametrize("message", [b"", b"\xff\xfe", b"n,,", b"x,,n=a,r=b", b"n,,r=abc", b"n,,n=a=5,r=b",
                                     b"n,a=b,n=a,r=c", b"n,,n=a,r=b,c"])
def test_malformed_client_first_is_refused(message):
    with pytest.raises(ScramError):
        ScramServer("SCRAM-SHA-256", lambda u: None).first(message)


@pytest.mark.parametrize("message", [b"", b"c=biws", b"c=biws,r=wrong,p=AAAA", b"c=biws,r=NONCE,p=!!"])
def test_malformed_client_final_is_refused(message):
    cred = make_credential("SCRAM-SHA-256", "pw", 4096)
    server = ScramServer("SCRAM-SHA-256", lambda u: cred)
    server.first(b"n,,n=a,r=abc")
    with pytest.raises(ScramError):
        server.final(message.replace(b"NONCE", server._nonce.encode()))
    assert not server.complete


def test_credential_text_is_kafkas_form():
    cred = make_credential("SCRAM-SHA-512", "pw", 8192, b"\x01" * 16)
    text = cred.to_text()
    assert text.startswith("salt=AQEBAQEBAQEBAQEBAQEBAQ==,stored_key=") and text.endswith(",iterations=8192")
    assert ",server_key=" in text
    with pytest.raises(ValueError):
        ScramCredential.from_text("salt=AQ==,iterations=1")
