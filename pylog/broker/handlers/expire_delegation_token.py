"""ExpireDelegationToken: v0-2 (KIP-48; v2 flexible).

Behavior: the token named by its HMAC expires after the period (never past its max lifetime); a negative
period deletes it now (the answer's expiry is now). Only its owner and renewers may
(DELEGATION_TOKEN_OWNER_MISMATCH); an expired one answers DELEGATION_TOKEN_EXPIRED, an unknown HMAC
DELEGATION_TOKEN_NOT_FOUND.
Refused on PLAINTEXT, 1-way SSL and token-authenticated connections (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), and
DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key, as Kafka 3.9.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.handlers.renew_delegation_token import answer_expiry
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey


@handler(ApiKey.ExpireDelegationToken, 0, 2)
async def handle_expire_delegation_token(ctx: HandlerContext, req):
    """Expire a delegation token."""
    return await answer_expiry(ctx, ApiKey.ExpireDelegationToken,
                               lambda tokens, who: tokens.expire(who, bytes(req.hmac or b""), req.expiry_time_period_ms))
