"""The delegation token handlers' refusals, before any token is touched (KafkaApis' order of checks)."""

import asyncio
from types import SimpleNamespace

import pytest

from pylog.broker.handlers.create_delegation_token import handle_create_delegation_token
from pylog.broker.handlers.describe_delegation_token import handle_describe_delegation_token
from pylog.broker.handlers.renew_delegation_token import handle_renew_delegation_token
from pylog.common.errors import ErrorCode
from pylog.protocol.api import request_class


def _ctx(protocol="SASL_SSL", principal="User:alice", token=False, enabled=True, version=3):
    security = SimpleNamespace(protocol=protocol, principal=principal, token_authenticated=token)
    tokens = SimpleNamespace(enabled=enabled)
    return SimpleNamespace(header=SimpleNamespace(api_version=version), security=security, peer="1.2.3.4:5",
                           broker=SimpleNamespace(tokens=tokens, authorizer=None))


def _create(renewer_type="User", owner=None):
    cls = request_class(38)[3]
    return cls(owner_principal_type=owner and "User", owner_principal_name=owner,
               renewers=[cls.CreatableRenewers(principal_type=renewer_type, principal_name="bob")],
               max_lifetime_ms=-1)


@pytest.mark.parametrize("ctx, req, code", [
    (_ctx(protocol="PLAINTEXT", principal="User:ANONYMOUS"), _create(), ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
    (_ctx(protocol="SSL", principal="User:ANONYMOUS"), _create(), ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
    (_ctx(token=True), _create(), ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
    (_ctx(), _create(renewer_type="Group"), ErrorCode.INVALID_PRINCIPAL_TYPE),
    (_ctx(enabled=False), _create(), ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED),
])
def test_create_refusals(ctx, req, code):
    resp = asyncio.run(handle_create_delegation_token(ctx, req))
    assert resp.error_code == code and resp.token_id == "" and resp.expiry_timestamp_ms == -1
    assert (resp.principal_type, resp.principal_name) == tuple(ctx.security.principal.split(":"))


def test_renew_and_describe_disabled_without_a_secret_key():
    ctx = _ctx(enabled=False, version=2)
    renew = asyncio.run(handle_renew_delegation_token(ctx, request_class(39)[2](hmac=b"x", renew_period_ms=1)))
    assert (renew.error_code, renew.expiry_timestamp_ms) == (ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, -1)
    described = asyncio.run(handle_describe_delegation_token(ctx, request_class(41)[2](owners=None)))
    assert described.error_code == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED and described.tokens == []


@pytest.mark.parametrize("api_key, versions", [(38, range(4)), (39, range(3)), (40, range(3)), (41, range(4))])
def test_every_version_round_trips_on_the_wire(api_key, versions):
    """Kafka 3.9's versions of the token APIs, framed as clients frame them (v2+ flexible headers)."""
    from pylog.protocol.api import response_class
    from pylog.protocol.codec import (decode_request_body, decode_response, encode_request, encode_response,
                                      parse_request_header)
    requests = {38: lambda cls: cls(owner_principal_type="User", owner_principal_name="carol", renewers=[
                    cls.CreatableRenewers(principal_type="User", principal_name="bob")], max_lifetime_ms=60000),
                39: lambda cls: cls(hmac=b"\x01\x02", renew_period_ms=5),
                40: lambda cls: cls(hmac=b"\x01\x02", expiry_time_period_ms=-1),
                41: lambda cls: cls(owners=[cls.DescribeDelegationTokenOwner(principal_type="User", principal_name="a")])}
    for v in versions:
        frame = encode_request(requests[api_key](request_class(api_key)[v]), v, 7, "client")[4:]
        header = parse_request_header(frame)
        assert (header.api_key, header.api_version, header.correlation_id) == (api_key, v, 7)
        req = decode_request_body(header, frame)
        if api_key == 38:
            assert req.max_lifetime_ms == 60000 and req.renewers[0].principal_name == "bob"
            assert (req.owner_principal_name == "carol") == (v >= 3)  # the owner field is v3's
        cls = response_class(api_key)[v]
        resp = cls(error_code=int(ErrorCode.DELEGATION_TOKEN_NOT_FOUND), throttle_time_ms=3, **({
            38: dict(principal_type="User", principal_name="a", token_requester_principal_type="User",
                     token_requester_principal_name="b", issue_timestamp_ms=1, expiry_timestamp_ms=2,
                     max_timestamp_ms=3, token_id="id", hmac=b"h"),
            41: dict(tokens=[])}.get(api_key, dict(expiry_timestamp_ms=-1))))
        corr, back = decode_response(api_key, v, encode_response(header, resp)[4:])
        assert corr == 7 and back.error_code == ErrorCode.DELEGATION_TOKEN_NOT_FOUND and back.throttle_time_ms == 3


def test_settings_from_the_broker_config_with_the_old_alias():
    from pylog.broker.delegation_tokens import token_settings
    from pylog.common.config import BrokerConfig
    zk = {"zookeeper.connect": "127.0.0.1:2181"}
    assert not token_settings(BrokerConfig.from_props(zk)).enabled
    s = token_settings(BrokerConfig.from_props({**zk, "delegation.token.master.key": "old"}))
    assert (s.secret, s.max_lifetime_ms, s.expiry_time_ms) == ("old", 7 * 24 * 3600 * 1000, 24 * 3600 * 1000)
    s = token_settings(BrokerConfig.from_props({**zk, "delegation.token.master.key": "old",
                                                "delegation.token.secret.key": "new",
                                                "delegation.token.max.lifetime.ms": "5000"}))
    assert (s.secret, s.max_lifetime_ms) == ("new", 5000)
