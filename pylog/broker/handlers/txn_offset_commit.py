"""TxnOffsetCommit: v0-4 (Kafka 3.9's range; a transactional producer's `send_offsets_to_transaction`), and v5
while transaction.version 2 is finalized.

Behavior: the group coordinator validates the commit (KIP-447 fencing on v3: ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), writes the offsets to the group's `__consumer_offsets`
partition as one transactional batch with the producer's id and epoch (acks=all), and keeps them
pending: OffsetFetch returns them only after the transaction's COMMIT marker reaches that
partition (WriteTxnMarkers), an ABORT marker drops them. A stale producer epoch is
INVALID_PRODUCER_EPOCH. Partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION.
Authorization (as Kafka's KafkaApis): WRITE on the transactional id (else every partition gets
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (else GROUP_AUTHORIZATION_FAILED), then
READ on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions).
Version notes: v2 adds the committed leader epoch; v3 (flexible) the generation, member id and
group instance id. What clients send: librdkafka 2.x and kafka-python 3.x up to v3 (with the
consumer's group metadata, so KIP-447 fencing applies; a KIP-848 member's generation is its member
epoch, checked against the consumer group), aiokafka v0. v4 (KIP-890) may answer
TRANSACTION_ABORTABLE, which older versions get as INVALID_TXN_STATE. v5 (Kafka 4.0, transaction
version 2): the client sends no AddOffsetsToTxn, so the group's `__consumer_offsets` partition is first
added to the transaction (through the transaction coordinator, as a partition leader adds a Produce v12's
partition); a fenced epoch is INVALID_PRODUCER_EPOCH, a coordinator that cannot answer yet
COORDINATOR_NOT_AVAILABLE (retried by the client).
"""

from __future__ import annotations

from pylog.broker.features import TV2
from pylog.broker.group_host import OFFSETS_TOPIC
from pylog.broker.handlers import coordinator_of, handler, topic_results
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import abortable_as
from pylog.broker.txn_verify import verify
from pylog.common.clock import now_ms
from pylog.coordinator.group.api import TxnCommitRequest
from pylog.coordinator.group.records import OffsetValue
from pylog.coordinator.ownership import partition_for
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


ADDS_OFFSETS_FROM = 5  # transaction version 2: the commit adds the offsets partition to the transaction


@handler(ApiKey.TxnOffsetCommit, 0, 4, gate=(*TV2, ADDS_OFFSETS_FROM))
async def handle_txn_offset_commit(ctx: HandlerContext, req):
    """Stage a transaction's offsets for the group until the transaction ends."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.TxnOffsetCommit)[version]
    now = now_ms()
    order = [(t.name or "", p.partition_index) for t in req.topics or [] for p in t.partitions or []]
    results: dict[tuple[str, int], ErrorCode] = {}
    offsets: dict[tuple[str, int], OffsetValue] = {}
    if not allowed(ctx, "WRITE", "TRANSACTIONAL_ID", req.transactional_id or ""):
        results = dict.fromkeys(order, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    elif not allowed(ctx, "READ", "GROUP", req.group_id or ""):
        results = dict.fromkeys(order, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    else:
        for t in req.topics or []:
            topic_ok = allowed(ctx, "READ", "TOPIC", t.name or "")
            for p in t.partitions or []:
                tp = (t.name or "", p.partition_index)
                if not topic_ok:
                    results[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                elif ctx.broker.metadata.partition(*tp) is None:
                    results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    offsets[tp] = OffsetValue(p.committed_offset, p.committed_leader_epoch if version >= 2 else -1,
                                              p.committed_metadata or "", now)
    if offsets and version >= ADDS_OFFSETS_FROM:
        err = await _add_offsets_partition(ctx, req)
        if err != ErrorCode.NONE:
            results.update(dict.fromkeys(offsets, err))
            offsets = {}
    if offsets:
        v3 = version >= 3
        results.update(await coordinator_of(ctx).txn_commit(TxnCommitRequest(
            req.group_id or "", req.producer_id, req.producer_epoch, req.generation_id if v3 else -1,
            (req.member_id or "") if v3 else "", req.group_instance_id if v3 else None, offsets)))
    results = {tp: abortable_as(e, version, 4) for tp, e in results.items()}
    topic_cls = cls.TxnOffsetCommitResponseTopic
    topics = topic_results(order, results, topic_cls, topic_cls.TxnOffsetCommitResponsePartition)
    return cls(throttle_time_ms=0, topics=topics)


async def _add_offsets_partition(ctx: HandlerContext, req) -> ErrorCode:
    """Transaction version 2's implicit AddOffsetsToTxn: the group's offsets partition joins the transaction."""
    groups = ctx.broker.groups
    count = groups.num_partitions() if groups is not None else int(ctx.broker.config.get("offsets.topic.num.partitions"))
    tp = (OFFSETS_TOPIC, partition_for(req.group_id or "", count))
    errors = await verify(ctx.broker.transactions, ctx.broker.broker_id, req.transactional_id or "", req.producer_id,
                          req.producer_epoch, [tp], add=True)
    err = errors[tp]
    return ErrorCode.COORDINATOR_NOT_AVAILABLE if err == ErrorCode.NOT_ENOUGH_REPLICAS else err
