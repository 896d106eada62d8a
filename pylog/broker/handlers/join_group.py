"""JoinGroup: v0-9.

Behavior: the coordinator parks the join until the group's join phase completes (every member
rejoined, or the rebalance timeout / initial-rebalance delay fired); only the leader gets the
member list. v4+ joins without a member id get MEMBER_ID_REQUIRED with the id to use (KIP-394);
a known group.instance.id (v5+) replaces its old member id, which is fenced (KIP-345). Needs READ on
the group (GROUP_AUTHORIZATION_FAILED).
Version notes: v0 has no rebalance timeout (the session timeout stands in); v6+ flexible; v7+
echo the protocol type; v8 adds a reason; v9's SkipAssignment is always false here.
"""

from __future__ import annotations

from pylog.broker.handlers import client_host, coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.group.api import JoinRequest
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.JoinGroup, 0, 9)
async def handle_join_group(ctx: HandlerContext, req):
    """Join (or rejoin) a group and wait for the rebalance."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.JoinGroup)[version]
    if not allowed(ctx, "READ", "GROUP", req.group_id or ""):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), generation_id=-1,
                   protocol_type=None, protocol_name=None if version >= 7 else "", leader="",
                   skip_assignment=False, member_id="", members=[])
    rebalance = req.rebalance_timeout_ms if version >= 1 else req.session_timeout_ms
    # Null strings, bytes and arrays (well-formed on the wire) count as empty, as in Kafka's handlers.
    r = await coordinator_of(ctx).join(JoinRequest(
        req.group_id or "", req.member_id or "", req.group_instance_id if version >= 5 else None,
        req.protocol_type or "", [(p.name or "", bytes(p.metadata or b"")) for p in req.protocols or []],
        req.session_timeout_ms, rebalance, ctx.header.client_id or "", client_host(ctx), version >= 4))
    return cls(throttle_time_ms=0, error_code=int(r.error), generation_id=r.generation,
               protocol_type=r.protocol_type, protocol_name=r.protocol_name if version >= 7 else r.protocol_name or "",
               leader=r.leader_id, skip_assignment=False, member_id=r.member_id,
               members=[cls.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=meta)
                        for m, i, meta in r.members])
