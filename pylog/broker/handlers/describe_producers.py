"""DescribeProducers: v0 (KIP-664; flexible).

Behavior: for each requested partition this broker hosts (leader or follower), the producers its
log remembers (the idempotent producer's state): id, epoch, last sequence, last batch timestamp,
coordinator epoch and the first offset of an open transaction (-1 when none). A partition not hosted here is
NOT_LEADER_OR_FOLLOWER, an unknown one UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers. ACLs as
KafkaApis: READ on the topic, else TOPIC_AUTHORIZATION_FAILED (with Kafka's
message) for its partitions.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.DescribeProducers, 0, 0)
async def handle_describe_producers(ctx: HandlerContext, req):
    """Describe the active producers of partitions this broker hosts."""
    cls = response_class(ApiKey.DescribeProducers)[ctx.header.api_version]
    part_cls = cls.TopicResponse.PartitionResponse
    state_cls = part_cls.ProducerState
    topics = []
    for t in req.topics:
        parts = []
        may_read = allowed(ctx, "READ", "TOPIC", t.name)
        for index in t.partition_indexes:
            # Any replica answers from its own log, as Kafka's does (the tools' --broker-id reads a follower's).
            p = ctx.broker.replicas.get(t.name, index) if may_read else None
            if p is None:
                err = (ctx.broker.replicas.leader_partition(t.name, index)[1] if may_read
                       else ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                message = err.message if err == ErrorCode.TOPIC_AUTHORIZATION_FAILED else None
                parts.append(part_cls(partition_index=index, error_code=int(err), error_message=message,
                                      active_producers=[]))
                continue
            # The log's open transactions (which move the LSO) know where each producer's current one began.
            open_txns = p.log.open_txns.first_offsets
            producers = [state_cls(producer_id=e.producer_id, producer_epoch=e.epoch, last_sequence=e.last_seq,
                                   last_timestamp=e.last_timestamp, coordinator_epoch=e.coordinator_epoch,
                                   current_txn_start_offset=open_txns.get(e.producer_id, e.current_txn_first_offset))
                         for e in sorted(p.log.producer_state.producers.values(), key=lambda e: e.producer_id)]
            parts.append(part_cls(partition_index=index, error_code=int(ErrorCode.NONE), error_message=None,
                                  active_producers=producers))
        topics.append(cls.TopicResponse(name=t.name, partitions=parts))
    return cls(throttle_time_ms=0, topics=topics)
