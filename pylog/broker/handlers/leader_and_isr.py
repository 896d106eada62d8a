"""LeaderAndIsr: v6 (controller -> broker).

Behavior: become leader or follower of each listed partition when the request's leader epoch
(or, at the same epoch, partition epoch) is newer than what we have; a request from an older
controller epoch is refused with STALE_CONTROLLER_EPOCH, one addressed to an earlier registration of
this broker (an older broker epoch) with STALE_BROKER_EPOCH. Followers truncate by epoch, then fetch.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.LeaderAndIsr, 6, 6)
async def handle_leader_and_isr(ctx: HandlerContext, req):
    """Apply the controller's leader/ISR decisions."""
    cls = response_class(ApiKey.LeaderAndIsr)[ctx.header.api_version]
    if await ctx.broker.is_broker_epoch_stale(req.broker_epoch):
        return cls(error_code=int(ErrorCode.STALE_BROKER_EPOCH), topics=[])
    err, results = await ctx.broker.replicas.become_leader_or_follower(req)
    ids = {ts.topic_name: ts.topic_id for ts in req.topic_states}
    by_topic: dict[str, list] = {}
    for topic, idx, perr in results:
        by_topic.setdefault(topic, []).append(cls.LeaderAndIsrPartitionError(partition_index=idx, error_code=perr))
    return cls(error_code=int(err), topics=[
        cls.LeaderAndIsrTopicError(topic_id=ids[t], partition_errors=ps) for t, ps in by_topic.items()])
