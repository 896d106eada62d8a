"""SyncGroup: v0-5.

Behavior: the leader's SyncGroup carries every member's assignment; it is stored in
`__consumer_offsets` (acks=all) and then handed to every member, whose SyncGroups wait for it. Needs READ
on the group (GROUP_AUTHORIZATION_FAILED).
Version notes: v3 adds group.instance.id; v4+ flexible; v5 checks protocol type and name
(INCONSISTENT_GROUP_PROTOCOL on a mismatch) and echoes them.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.SyncGroup, 0, 5)
async def handle_sync_group(ctx: HandlerContext, req):
    """Get this member's assignment (the leader brings everyone's)."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.SyncGroup)[version]
    if not allowed(ctx, "READ", "GROUP", req.group_id or ""):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), protocol_type=None,
                   protocol_name=None, assignment=b"")
    r = await coordinator_of(ctx).sync(
        req.group_id or "", req.generation_id, req.member_id or "", req.group_instance_id if version >= 3 else None,
        req.protocol_type if version >= 5 else None, req.protocol_name if version >= 5 else None,
        {a.member_id or "": bytes(a.assignment or b"") for a in req.assignments or []})
    return cls(throttle_time_ms=0, error_code=int(r.error), protocol_type=r.protocol_type,
               protocol_name=r.protocol_name, assignment=r.assignment)
