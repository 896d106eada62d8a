"""DescribeGroups: v0-5 (Kafka 3.7's range).

Behavior: state, protocol type, chosen protocol and members of each group this broker
coordinates; member metadata and assignments only while the group is Stable. An unknown group is
reported Dead with no error (as Kafka does); another coordinator's group gets NOT_COORDINATOR.
Each group needs DESCRIBE on it (else GROUP_AUTHORIZATION_FAILED, nothing else told), as in Kafka.
Version notes: v3 adds authorized operations (computed when asked for), v4 group.instance.id,
v5+ flexible, v6 an error message.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed, authorized_operations


@handler(ApiKey.DescribeGroups, 0, 5)
async def handle_describe_groups(ctx: HandlerContext, req):
    """Describe groups."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.DescribeGroups)[version]
    coord = coordinator_of(ctx)
    ops_asked = version >= 3 and bool(req.include_authorized_operations)
    out = []
    for gid in req.groups or []:
        gid = gid or ""
        if not allowed(ctx, "DESCRIBE", "GROUP", gid):
            out.append(cls.DescribedGroup(
                error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), error_message="Group authorization failed.",
                group_id=gid, group_state="", protocol_type="", protocol_data="", members=[],
                authorized_operations=None))
            continue
        s = coord.describe(gid)
        out.append(cls.DescribedGroup(
            error_code=int(s.error), error_message=None if s.error == ErrorCode.NONE else s.error.name,
            group_id=gid, group_state=s.state, protocol_type=s.protocol_type, protocol_data=s.protocol_name,
            members=[cls.DescribedGroup.DescribedGroupMember(
                member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                client_host=m.client_host, member_metadata=m.metadata, member_assignment=m.assignment)
                for m in s.members],
            # None encodes Kafka's MIN_VALUE: not asked for.
            authorized_operations=authorized_operations(ctx, "GROUP", gid) if ops_asked else None))
    return cls(throttle_time_ms=0, groups=out)
