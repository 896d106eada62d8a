"""Heartbeat: v0-4.

Behavior: keeps the member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin, and
UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION / FENCED_INSTANCE_ID that it was fenced. Needs READ on the group.
Version notes: v3 adds group.instance.id; v4 is flexible.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.Heartbeat, 0, 4)
async def handle_heartbeat(ctx: HandlerContext, req):
    """A member says it is alive."""
    version = ctx.header.api_version
    if not allowed(ctx, "READ", "GROUP", req.group_id or ""):
        err = ErrorCode.GROUP_AUTHORIZATION_FAILED
    else:
        err = coordinator_of(ctx).heartbeat(req.group_id or "", req.generation_id, req.member_id or "",
                                            req.group_instance_id if version >= 3 else None)
    return response_class(ApiKey.Heartbeat)[version](throttle_time_ms=0, error_code=int(err))
