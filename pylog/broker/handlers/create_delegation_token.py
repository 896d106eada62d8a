"""CreateDelegationToken: v0-3 (KIP-48; v2 flexible; v3 an owner other than the caller, KIP-373).

Behavior: as Kafka 3.9's KafkaApis and DelegationTokenManagerZk: refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
on PLAINTEXT, 1-way SSL and token-authenticated connections; a token for another owner needs CREATE_TOKENS on
that owner's User resource (else DELEGATION_TOKEN_AUTHORIZATION_FAILED); renewers must be User principals
(INVALID_PRINCIPAL_TYPE); DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key. The token is
written to /delegation_token/tokens/<id> with a change notification; the answer carries its id and HMAC.
"""

from __future__ import annotations

from pylog.broker.delegation_tokens import token_requests_allowed
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed
from pylog.security.connection import ANONYMOUS


def _split(principal: str) -> tuple[str, str]:
    kind, _, name = principal.partition(":")
    return kind, name


@handler(ApiKey.CreateDelegationToken, 0, 3)
async def handle_create_delegation_token(ctx: HandlerContext, req):
    """Create a delegation token."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.CreateDelegationToken)[version]
    requester = ANONYMOUS if ctx.security is None else ctx.security.principal
    named = getattr(req, "owner_principal_name", None) if version >= 3 else None
    owner = f"{req.owner_principal_type}:{named}" if named else requester
    renewers = [f"{r.principal_type}:{r.principal_name}" for r in req.renewers]

    def answer(code: ErrorCode, info=None, mac: bytes = b""):
        return cls(error_code=int(code), principal_type=_split(owner)[0], principal_name=_split(owner)[1],
                   token_requester_principal_type=_split(requester)[0],
                   token_requester_principal_name=_split(requester)[1],
                   issue_timestamp_ms=-1 if info is None else info.issue_ms,
                   expiry_timestamp_ms=-1 if info is None else info.expiry_ms,
                   max_timestamp_ms=-1 if info is None else info.max_ms,
                   token_id="" if info is None else info.token_id, hmac=mac, throttle_time_ms=0)

    tokens = ctx.broker.tokens
    if not token_requests_allowed(ctx.security):
        return answer(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
    if owner != requester and not allowed(ctx, "CREATE_TOKENS", "USER", owner):
        return answer(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED)
    if any(r.principal_type != "User" for r in req.renewers):
        return answer(ErrorCode.INVALID_PRINCIPAL_TYPE)
    if tokens is None or not tokens.enabled:
        return answer(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED)
    info = await tokens.create(owner, requester, renewers, req.max_lifetime_ms)
    return answer(ErrorCode.NONE, info, tokens.cache.hmac_of(info.token_id))
