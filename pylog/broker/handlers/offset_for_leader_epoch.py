"""OffsetForLeaderEpoch: v2-4.

Behavior: the leader answers, for a requested epoch, the largest epoch <= it that it knows and
that epoch's end offset (the start of the next epoch, or the log end offset for its current
epoch) -- KIP-101 with the KIP-279 refinement. Followers use it to truncate divergent tails;
librdkafka uses v2 to validate consumer positions after leader changes (it sends v2 even when a
broker does not advertise it). current_leader_epoch is checked for fencing.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.OffsetForLeaderEpoch, 2, 4)
async def handle_offset_for_leader_epoch(ctx: HandlerContext, req):
    """Look requested epochs up in the leader's epoch cache."""
    rm = ctx.broker.replicas
    cls = response_class(ApiKey.OffsetForLeaderEpoch)[ctx.header.api_version]
    out = []
    # Followers (replica_id >= 0) need CLUSTER_ACTION, consumers DESCRIBE on the topic, as in Kafka.
    follower_ok = getattr(req, "replica_id", -1) < 0 or allowed(ctx, "CLUSTER_ACTION", "CLUSTER")
    for t in req.topics:
        parts = []
        ok = follower_ok and (getattr(req, "replica_id", -1) >= 0 or allowed(ctx, "DESCRIBE", "TOPIC", t.topic))
        for pr in t.partitions:
            res = cls.OffsetForLeaderTopicResult.EpochEndOffset(
                error_code=0, partition=pr.partition, leader_epoch=-1, end_offset=-1)
            p, err = rm.leader_partition(t.topic, pr.partition, pr.current_leader_epoch) if ok else \
                (None, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            if p is None:
                res.error_code = int(err)
            else:
                res.leader_epoch, res.end_offset = p.log.epoch_cache.end_offset_for(pr.leader_epoch)
            parts.append(res)
        out.append(cls.OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return cls(throttle_time_ms=0, topics=out)
