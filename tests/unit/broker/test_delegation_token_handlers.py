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
