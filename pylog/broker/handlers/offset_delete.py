"""OffsetDelete: v0.

Behavior: removes a group's committed offsets for some partitions; refused per partition with
GROUP_SUBSCRIBED_TO_TOPIC while a member of the group still subscribes to the topic. Needs DELETE on the
group (GROUP_AUTHORIZATION_FAILED) and READ on each topic (TOPIC_AUTHORIZATION_FAILED), as in Kafka.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.OffsetDelete, 0, 0)
async def handle_offset_delete(ctx: HandlerContext, req):
    """Delete committed offsets."""
    cls = response_class(ApiKey.OffsetDelete)[ctx.header.api_version]
    if not allowed(ctx, "DELETE", "GROUP", req.group_id or ""):
        return cls(error_code=int(ErrorCode.GROUP_AUTHORIZATION_FAILED), throttle_time_ms=0, topics=[])
    asked = [(t.name or "", p.partition_index) for t in req.topics or [] for p in t.partitions or []]
    denied = {name for name in {tp[0] for tp in asked} if not allowed(ctx, "READ", "TOPIC", name)}
    refused = {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED for tp in asked if tp[0] in denied}
    refused.update({tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for tp in asked
                    if tp not in refused and ctx.broker.metadata.partition(*tp) is None})
    err, results = await coordinator_of(ctx).delete_offsets(req.group_id or "", [tp for tp in asked if tp not in refused])
    results.update(refused)
    topics: dict[str, list] = {}
    if err == ErrorCode.NONE:
        for tp in dict.fromkeys(asked):
            topics.setdefault(tp[0], []).append(cls.OffsetDeleteResponseTopic.OffsetDeleteResponsePartition(
                partition_index=tp[1], error_code=int(results[tp])))
    return cls(error_code=int(err), throttle_time_ms=0, topics=[
        cls.OffsetDeleteResponseTopic(name=n, partitions=ps) for n, ps in topics.items()])
