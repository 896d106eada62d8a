"""ExpireDelegationToken: v0-2 (KIP-48; v2 flexible).

Behavior: the token named by its HMAC expires after the period (never past its max lifetime); a negative
period deletes it now (the answer's expiry is now). Only its owner and renewers may
(DELEGATION_TOKEN_OWNER_MISMATCH); an expired one answers DELEGATION_TOKEN_EXPIRED, an unknown HMAC
DELEGATION_TOKEN_NOT_FOUND.
Refused on PLAINTEXT, 1-way SSL and token-authenticated connections (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), and
DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key, as Kafka 3.9.
"""

from __future__ import annotations

from pylog.broker.delegation_tokens import token_requests_allowed
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.connection import ANONYMOUS
from pylog.security.delegation_tokens import ERROR_TIMESTAMP


@handler(ApiKey.ExpireDelegationToken, 0, 2)
async def handle_expire_delegation_token(ctx: HandlerContext, req):
    """Expire a delegation token."""
    cls = response_class(ApiKey.ExpireDelegationToken)[ctx.header.api_version]
    tokens = ctx.broker.tokens
    if not token_requests_allowed(ctx.security):
        code, expiry = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ERROR_TIMESTAMP
    elif tokens is None or not tokens.enabled:
        code, expiry = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, ERROR_TIMESTAMP
    else:
        principal = ANONYMOUS if ctx.security is None else ctx.security.principal
        code, expiry = await tokens.expire(principal, bytes(req.hmac or b""), req.expiry_time_period_ms)
    return cls(error_code=int(code), expiry_timestamp_ms=expiry, throttle_time_ms=0)
