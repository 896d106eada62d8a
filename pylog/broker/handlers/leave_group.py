"""LeaveGroup: v0-5.

Behavior: the members leave at once (no session timeout to wait out) and the group rebalances.
Needs READ on the group (GROUP_AUTHORIZATION_FAILED for the whole request).
Version notes: v0-2 name one member; v3+ a batch of members with group.instance.id (KIP-345) and
an error per member; v4+ flexible; v5 adds a reason (logged by clients only).
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.LeaveGroup, 0, 5)
async def handle_leave_group(ctx: HandlerContext, req):
    """Members leave the group."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.LeaveGroup)[version]
    members = ([(m.member_id or "", m.group_instance_id) for m in req.members or []] if version >= 3
               else [(req.member_id or "", None)])
    if not allowed(ctx, "READ", "GROUP", req.group_id or ""):  # Kafka: the whole request, no member results
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), members=[])
    err, per_member = coordinator_of(ctx).leave(req.group_id or "", members)
    if version < 3:
        return cls(throttle_time_ms=0, error_code=int(err if per_member == [] else per_member[0]))
    return cls(throttle_time_ms=0, error_code=int(err), members=[
        cls.MemberResponse(member_id=m, group_instance_id=i, error_code=int(e))
        for (m, i), e in zip(members, per_member)])
