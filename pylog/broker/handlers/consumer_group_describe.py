"""ConsumerGroupDescribe: v0-1 (KIP-848, as Kafka 4.0 serves it).

Behavior: for each group id, the consumer group's state, group and assignment epochs, assignor and every
member's epoch, subscription, current and target partitions (topic ids with their names). A group this
broker does not coordinate gets NOT_COORDINATOR (or COORDINATOR_LOAD_IN_PROGRESS); an unknown one, or a
classic group, GROUP_ID_NOT_FOUND as Kafka answers. Needs DESCRIBE on each group.
Version notes: flexible; v1 adds each member's type (1: consumer protocol, 0: a classic member served in the
consumer group during a migration; KIP-1099).
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.handlers.consumer_group_heartbeat import consumer_protocol_enabled
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed, authorized_operations

CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1  # KIP-1099's MemberType: a classic member (online migration) or not
_NOT_REQUESTED = -(1 << 31)  # Kafka's "authorized operations not asked for"


def _bits(ops: frozenset[int]) -> int:
    """AclOperation codes as the int32 bit field (our own schema has no bit-field type)."""
    value = sum(1 << c for c in ops) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


@handler(ApiKey.ConsumerGroupDescribe, 0, 1)
async def handle_consumer_group_describe(ctx: HandlerContext, req):
    """Describe consumer groups."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.ConsumerGroupDescribe)[version]
    G = cls.DescribedGroup
    out = []
    for gid in req.group_ids or []:
        err, group, names = ErrorCode.NONE, None, {}
        if not consumer_protocol_enabled(ctx):
            err = ErrorCode.UNSUPPORTED_VERSION
        elif not allowed(ctx, "DESCRIBE", "GROUP", gid or ""):
            err = ErrorCode.GROUP_AUTHORIZATION_FAILED
        else:
            err, group, names = coordinator_of(ctx).describe_consumer_group(gid or "")
        if group is None:
            out.append(G(error_code=int(err), group_id=gid, group_state="Dead" if err == ErrorCode.NONE else "",
                         group_epoch=-1, assignment_epoch=-1, assignor_name="", members=[],
                         error_message=f"Group {gid} not found." if err == ErrorCode.GROUP_ID_NOT_FOUND else None))
            continue

        def parts(a):
            return G.Member.Assignment(topic_partitions=[
                G.Member.Assignment.TopicPartitions(topic_id=t, topic_name=names.get(t, ""), partitions=sorted(ps))
                for t, ps in sorted(a.items(), key=lambda kv: names.get(kv[0], ""))])
        members = [G.Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                            member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                            subscribed_topic_names=list(m.subscribed_names), subscribed_topic_regex=m.subscribed_regex,
                            assignment=parts(m.assigned), target_assignment=parts(group.target.get(m.member_id, {})),
                            member_type=CONSUMER_MEMBER if m.classic is None else CLASSIC_MEMBER)
                   for m in group.members.values()]
        out.append(G(error_code=0, group_id=gid, group_state=group.state(), group_epoch=group.group_epoch,
                     assignment_epoch=group.assignment_epoch, assignor_name=group.assignor, members=members,
                     authorized_operations=_bits(authorized_operations(ctx, "GROUP", gid))
                     if req.include_authorized_operations else _NOT_REQUESTED))
    return cls(throttle_time_ms=0, groups=out)
