"""DescribeDelegationToken: v0-3 (KIP-48; v2 flexible; v3 the requester of each token).

Behavior: the tokens of the given owners (null: every token; an empty list: none) that the caller may see, as
Kafka 3.9's filterToken: its own tokens and those it may renew, then those with DESCRIBE on their
DelegationToken resource or DESCRIBE_TOKENS on their owner's User resource. Refused on PLAINTEXT, 1-way SSL
and token-authenticated connections (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); DELEGATION_TOKEN_AUTH_DISABLED
without delegation.token.secret.key.
"""

from __future__ import annotations

from pylog.broker.delegation_tokens import token_requests_allowed
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed
from pylog.security.connection import ANONYMOUS
from pylog.security.delegation_tokens import may_describe


@handler(ApiKey.DescribeDelegationToken, 0, 3)
async def handle_describe_delegation_token(ctx: HandlerContext, req):
    """Describe the delegation tokens the caller may see."""
    cls = response_class(ApiKey.DescribeDelegationToken)[ctx.header.api_version]
    tokens = ctx.broker.tokens
    if not token_requests_allowed(ctx.security):
        return cls(error_code=int(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), tokens=[], throttle_time_ms=0)
    if tokens is None or not tokens.enabled:
        return cls(error_code=int(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED), tokens=[], throttle_time_ms=0)
    requester = ANONYMOUS if ctx.security is None else ctx.security.principal
    owners = None if req.owners is None else [f"{o.principal_type}:{o.principal_name}" for o in req.owners]
    seen = [] if owners == [] else [
        t for t in tokens.tokens()
        if may_describe(t, requester, owners, lambda tid: allowed(ctx, "DESCRIBE", "DELEGATION_TOKEN", tid),
                        lambda owner: allowed(ctx, "DESCRIBE_TOKENS", "USER", owner))]
    token_cls, renewer_cls = cls.DescribedDelegationToken, cls.DescribedDelegationToken.DescribedDelegationTokenRenewer
    return cls(error_code=0, throttle_time_ms=0, tokens=[token_cls(
        principal_type=t.owner.partition(":")[0], principal_name=t.owner.partition(":")[2],
        token_requester_principal_type=t.requester.partition(":")[0],
        token_requester_principal_name=t.requester.partition(":")[2],
        issue_timestamp=t.issue_ms, expiry_timestamp=t.expiry_ms, max_timestamp=t.max_ms, token_id=t.token_id,
        hmac=tokens.cache.hmac_of(t.token_id),
        renewers=[renewer_cls(principal_type=r.partition(":")[0], principal_name=r.partition(":")[2])
                  for r in t.renewers]) for t in sorted(seen, key=lambda t: t.issue_ms)])
