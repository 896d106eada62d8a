"""ConsumerGroupHeartbeat: v0-1 (KIP-848, as Kafka 4.0 serves it).

Behavior: a member joins (epoch 0), heartbeats and acknowledges its assignment (its epoch), or leaves (-1;
-2 for a static member that will restart); the coordinator answers with the member's epoch, the
heartbeat interval and, when it changed, the member's partitions by topic id
(pylog/coordinator/consumer/). Needs READ on the group (GROUP_AUTHORIZATION_FAILED), then DESCRIBE on every
topic of a subscription by name (TOPIC_AUTHORIZATION_FAILED), in Kafka 4.0's order; a regular expression only
ever matches what the coordinator resolves, unchecked, as Kafka 4.0 does.
Only when `group.coordinator.rebalance.protocols` lists `consumer` (else UNSUPPORTED_VERSION, and
ApiVersions leaves the key out).
Version notes: v0 and v1 are flexible; v1 adds SubscribedTopicRegex (a Python `re` pattern that must match
the whole topic name) and lets the member choose its own id (KIP-1082).
"""

from __future__ import annotations

from pylog.broker.handlers import client_host, coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.consumer.decisions import HeartbeatRequest
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


def consumer_protocol_enabled(ctx: HandlerContext) -> bool:
    """Whether this broker serves KIP-848 groups (group.coordinator.rebalance.protocols lists consumer)."""
    return "consumer" in [p.strip().lower() for p in ctx.broker.config.get("group.coordinator.rebalance.protocols")]


@handler(ApiKey.ConsumerGroupHeartbeat, 0, 1)
async def handle_consumer_group_heartbeat(ctx: HandlerContext, req):
    """A KIP-848 member's heartbeat."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.ConsumerGroupHeartbeat)[version]
    if not consumer_protocol_enabled(ctx):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.UNSUPPORTED_VERSION), member_epoch=-1,
                   heartbeat_interval_ms=0)
    if not allowed(ctx, "READ", "GROUP", req.group_id or ""):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), member_epoch=-1,
                   heartbeat_interval_ms=0)
    if any(not allowed(ctx, "DESCRIBE", "TOPIC", t) for t in req.subscribed_topic_names or []):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), member_epoch=-1,
                   heartbeat_interval_ms=0)
    owned = None if req.topic_partitions is None else {
        t.topic_id: frozenset(t.partitions or []) for t in req.topic_partitions if t.partitions}
    hb = HeartbeatRequest(
        req.group_id or "", req.member_id or "", req.member_epoch, req.instance_id, req.rack_id,
        req.rebalance_timeout_ms,
        None if req.subscribed_topic_names is None else tuple(req.subscribed_topic_names),
        req.subscribed_topic_regex if version >= 1 else None, req.server_assignor, owned,
        ctx.header.client_id or "", client_host(ctx))
    res = await coordinator_of(ctx).consumer_heartbeat(hb)
    assignment = None
    if res.assignment is not None:
        assignment = cls.Assignment(topic_partitions=[
            cls.Assignment.TopicPartitions(topic_id=tid, partitions=sorted(ps))
            for tid, ps in sorted(res.assignment.items(), key=lambda kv: str(kv[0]))])
    return cls(throttle_time_ms=0, error_code=int(res.error), error_message=res.message, member_id=res.member_id,
               member_epoch=res.member_epoch, heartbeat_interval_ms=res.heartbeat_interval_ms, assignment=assignment)
