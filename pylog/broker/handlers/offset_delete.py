"""OffsetDelete: v0.

Behavior: removes a group's committed offsets for some partitions; refused per partition with
GROUP_SUBSCRIBED_TO_TOPIC while a member of the group still subscribes to the topic.
"""

from __future__ import annotations

from pylog.broker.group_host import coordinator_of
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.OffsetDelete, 0, 0)
async def handle_offset_delete(ctx: HandlerContext, req):
    """Delete committed offsets."""
    cls = response_class(ApiKey.OffsetDelete)[ctx.header.api_version]
    asked = [(t.name or "", p.partition_index) for t in req.topics or [] for p in t.partitions or []]
    unknown = {tp for tp in asked if ctx.broker.metadata.partition(*tp) is None}
    err, results = await coordinator_of(ctx).delete_offsets(req.group_id or "", [tp for tp in asked if tp not in unknown])
    results.update({tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for tp in unknown})
    topics: dict[str, list] = {}
    if err == ErrorCode.NONE:
        for tp in dict.fromkeys(asked):
            topics.setdefault(tp[0], []).append(cls.OffsetDeleteResponseTopic.OffsetDeleteResponsePartition(
                partition_index=tp[1], error_code=int(results[tp])))
    return cls(error_code=int(err), throttle_time_ms=0, topics=[
        cls.OffsetDeleteResponseTopic(name=n, partitions=ps) for n, ps in topics.items()])
