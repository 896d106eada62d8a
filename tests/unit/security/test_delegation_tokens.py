"""Delegation tokens' pure rules (Kafka 3.9's DelegationTokenManagerZk), their znode JSON, SCRAM with `tokenauth=true`."""

import base64
import hashlib
import hmac
import json

import pytest

from pylog.common.errors import ErrorCode
from pylog.security.delegation_tokens import (
    TokenInfo, TokenSettings, create_token, decode_token, encode_token, expire_token, hmac_text, may_describe,
    new_token_id, renew_token, token_hmac,
)
from pylog.security.sasl import SaslSession
from pylog.security.scram import ScramClient, ScramError, ScramServer, make_credential
from pylog.security.settings import ListenerSecurity
from pylog.security.token_store import TokenAuth, TokenCache

DAY, WEEK = 24 * 3600 * 1000, 7 * 24 * 3600 * 1000
SETTINGS = TokenSettings("secret")
T0 = 1_700_000_000_000


def _token(**kw) -> TokenInfo:
    base = dict(token_id="tok", owner="User:alice", requester="User:alice", renewers=("User:bob",), issue_ms=T0,
                max_ms=T0 + WEEK, expiry_ms=T0 + DAY)
    return TokenInfo(**{**base, **kw})


def test_hmac_is_hmac_sha512_of_the_id_and_ids_are_kafka_uuids():
    assert token_hmac("abc", "secret") == hmac.new(b"secret", b"abc", hashlib.sha512).digest()
    assert base64.b64decode(hmac_text(token_hmac("abc", "secret"))) == token_hmac("abc", "secret")
    ids = {new_token_id() for _ in range(20)}
    assert len(ids) == 20 and all(len(i) == 22 and "=" not in i and "/" not in i for i in ids)


def test_znode_json_is_kafkas_v3_with_sanitized_principals():
    info = _token(renewers=("User:bob", "User:c d"))
    js = json.loads(encode_token(info))
    assert js == {"version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice",
                  "renewers": ["User%3Abob", "User%3Ac%20d"], "issueTimestamp": T0, "maxTimestamp": T0 + WEEK,
                  "expiryTimestamp": T0 + DAY, "tokenId": "tok"}
    assert decode_token(encode_token(info)) == info
    v1 = {k: v for k, v in js.items() if k != "tokenRequester"} | {"version": 1}
    assert decode_token(json.dumps(v1).encode()).requester == "User:alice"  # v1/v2: the owner asked
    assert decode_token(b"") is None
    with pytest.raises(ValueError, match="Invalid delegation token znode"):
        decode_token(json.dumps(js | {"version": 4}).encode())


@pytest.mark.parametrize("asked, max_ms, expiry_ms", [
    (-1, T0 + WEEK, T0 + DAY),             # the server's max lifetime
    (3600_000, T0 + 3600_000, T0 + 3600_000),  # shorter than a day: expiry is the max
    (30 * DAY, T0 + WEEK, T0 + DAY),       # capped by delegation.token.max.lifetime.ms
])
def test_create_caps_lifetimes(asked, max_ms, expiry_ms):
    info = create_token(SETTINGS, "User:alice", "User:admin", ["User:bob"], asked, T0, token_id="t")
    assert (info.max_ms, info.expiry_ms, info.requester, info.renewers) == (max_ms, expiry_ms, "User:admin",
                                                                             ("User:bob",))


def test_renew_and_expire_rules():
    info = _token()
    assert renew_token(SETTINGS, info, "User:carol", 1000, T0)[0] == ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    code, renewed, expiry = renew_token(SETTINGS, info, "User:bob", 1000, T0 + 10)
    assert code == ErrorCode.NONE and renewed.expiry_ms == expiry == T0 + 1010
    assert renew_token(SETTINGS, info, "User:alice", -1, T0)[2] == T0 + DAY  # default renew period
    assert renew_token(SETTINGS, info, "User:alice", 30 * DAY, T0)[2] == T0 + WEEK  # never past the max
    assert renew_token(SETTINGS, info, "User:alice", 1, T0 + 2 * DAY)[0] == ErrorCode.DELEGATION_TOKEN_EXPIRED

    assert expire_token(info, "User:carol", -1, T0)[0] == ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    assert expire_token(info, "User:alice", -1, T0 + 5) == (ErrorCode.NONE, None, T0 + 5)  # delete now
    code, changed, expiry = expire_token(info, "User:bob", 500, T0)
    assert code == ErrorCode.NONE and changed.expiry_ms == expiry == T0 + 500
    assert expire_token(info, "User:alice", 500, T0 + 2 * DAY)[0] == ErrorCode.DELEGATION_TOKEN_EXPIRED


def test_who_may_describe():
    info = _token()
    never = lambda _: False  # noqa: E731
    assert may_describe(info, "User:alice", None, never, never)
    assert may_describe(info, "User:bob", None, never, never)  # a renewer
    assert not may_describe(info, "User:carol", None, never, never)
    assert may_describe(info, "User:carol", None, lambda tid: tid == "tok", never)  # DESCRIBE on the token
    assert may_describe(info, "User:carol", None, never, lambda owner: owner == "User:alice")  # DESCRIBE_TOKENS
    assert not may_describe(info, "User:alice", ["User:dave"], never, never)  # not an owner asked for
    assert may_describe(info, "User:alice", ["User:bob"], never, never)


def _cache() -> tuple[TokenCache, str, str]:
    cache = TokenCache("secret")
    cache.put(_token(token_id="tid1", expiry_ms=T0 + DAY))
    return cache, "tid1", hmac_text(token_hmac("tid1", "secret"))


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_with_tokenauth_authenticates_as_the_owner(mechanism):
    cache, token_id, password = _cache()
    assert cache.by_hmac(token_hmac("tid1", "secret")).token_id == token_id
    users = {"tid1": make_credential(mechanism, "not-the-hmac")}  # a user named like the token: not used
    client = ScramClient(mechanism, token_id, password, token_auth=True)
    assert client.first().endswith(b",tokenauth=true")
    server = ScramServer(mechanism, users.get, lambda tid: cache.auth(mechanism, tid))
    client.verify(server.final(client.final(server.first(client.first()))))
    assert server.complete and server.token_owner == "User:alice" and server.token_expiry_ms == T0 + DAY

    # Without the extension the id is a plain user name: the user's credential, and the HMAC is wrong for it.
    plain = ScramClient(mechanism, token_id, password)
    server = ScramServer(mechanism, users.get, lambda tid: cache.auth(mechanism, tid))
    with pytest.raises(ScramError, match="invalid credentials"):
        server.final(plain.final(server.first(plain.first())))


def test_unknown_or_removed_token_fails_at_the_first_message():
    cache, token_id, password = _cache()
    cache.remove(token_id)
    assert cache.by_hmac(token_hmac("tid1", "secret")) is None
    server = ScramServer("SCRAM-SHA-256", lambda u: None, lambda tid: cache.auth("SCRAM-SHA-256", tid))
    with pytest.raises(ScramError, match="Token Authentication failed: Invalid tokenId : tid1"):
        server.first(ScramClient("SCRAM-SHA-256", token_id, password, token_auth=True).first())


def test_sasl_session_principal_is_the_owner_and_ends_with_the_token(monkeypatch):
    cache, token_id, password = _cache()
    listener = ListenerSecurity("SASL_PLAINTEXT", "SASL_PLAINTEXT", mechanisms=["SCRAM-SHA-256"])
    session = SaslSession(listener, lambda m, u: None, "peer", cache.auth)
    monkeypatch.setattr("pylog.security.sasl.time.time", lambda: (T0 + DAY - 60_000) / 1000)
    session.handshake(1, "SCRAM-SHA-256")
    client = ScramClient("SCRAM-SHA-256", token_id, password, token_auth=True)
    reply, _ = session.authenticate(client.first())
    final, lifetime = session.authenticate(client.final(reply))
    client.verify(final)
    assert session.principal == "User:alice" and session.token_authenticated
    assert lifetime == 60_000  # a token session ends with the token, even without connections.max.reauth.ms


def test_token_auth_record_is_what_the_server_reads():
    cache, token_id, _ = _cache()
    auth = cache.auth("SCRAM-SHA-512", token_id)
    assert isinstance(auth, TokenAuth) and auth.owner == "User:alice" and auth.credential.iterations == 4096
    assert cache.auth("SCRAM-SHA-512", "nope") is None


def test_old_change_notifications_are_purged():
    from types import SimpleNamespace

    from pylog.security.token_store import CHANGES_PATH, purge_notifications

    class Zk:
        def __init__(self):
            self.nodes = {CHANGES_PATH: 0, f"{CHANGES_PATH}/token_change_0000000001": 1_000,
                          f"{CHANGES_PATH}/token_change_0000000002": 900_000 + 5_000}

        def exists(self, path):
            return SimpleNamespace(ctime=self.nodes[path]) if path in self.nodes else None

        def get_children(self, path):
            return [p.rsplit("/", 1)[1] for p in self.nodes if p.startswith(path + "/")]

        def delete(self, path):
            del self.nodes[path]
    zk = Zk()
    assert purge_notifications(zk, now_ms=900_000 + 2_000) == 1  # only the one older than 15 minutes
    assert zk.get_children(CHANGES_PATH) == ["token_change_0000000002"]
