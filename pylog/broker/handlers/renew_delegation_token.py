"""RenewDelegationToken: v0-2 (KIP-48; v2 flexible).

Behavior: the token named by its HMAC gets a new expiry, now + the period (a negative period: delegation.token.expiry.time.ms),
never past its max lifetime. Only its owner and renewers may (DELEGATION_TOKEN_OWNER_MISMATCH); an expired one
answers DELEGATION_TOKEN_EXPIRED, an unknown HMAC DELEGATION_TOKEN_NOT_FOUND.
Refused on PLAINTEXT, 1-way SSL and token-authenticated connections (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), and
DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key, as Kafka 3.9.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from pylog.broker.delegation_tokens import token_requests_allowed
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.connection import ANONYMOUS
from pylog.security.delegation_tokens import ERROR_TIMESTAMP


async def answer_expiry(ctx: HandlerContext, api_key: ApiKey,
                        change: Callable[[Any, str], Awaitable[tuple[int, int]]]):
    """Renew's and Expire's answer: the same refusals, else `change(tokens, principal)`'s code and new expiry."""
    cls = response_class(api_key)[ctx.header.api_version]
    tokens = ctx.broker.tokens
    if not token_requests_allowed(ctx.security):
        code, expiry = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ERROR_TIMESTAMP
    elif tokens is None or not tokens.enabled:
        code, expiry = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, ERROR_TIMESTAMP
    else:
        code, expiry = await change(tokens, ANONYMOUS if ctx.security is None else ctx.security.principal)
    return cls(error_code=int(code), expiry_timestamp_ms=expiry, throttle_time_ms=0)


@handler(ApiKey.RenewDelegationToken, 0, 2)
async def handle_renew_delegation_token(ctx: HandlerContext, req):
    """Renew a delegation token."""
    return await answer_expiry(ctx, ApiKey.RenewDelegationToken,
                               lambda tokens, who: tokens.renew(who, bytes(req.hmac or b""), req.renew_period_ms))
