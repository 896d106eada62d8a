"""AddPartitionsToTxn: v0-5 (Kafka 3.9's range; flexible from v3).

Behavior: the transaction coordinator adds the partitions to the producer's transaction (starting
it if none is open) once that is written to `__transaction_state`; every partition gets the same
error (NOT_COORDINATOR on the wrong broker, CONCURRENT_TRANSACTIONS while the previous transaction's
markers are being written, PRODUCER_FENCED / INVALID_PRODUCER_ID_MAPPING for a zombie). As in
Kafka's KafkaApis, WRITE on the transactional id is needed (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
and WRITE on each topic: if a topic is not authorized (TOPIC_AUTHORIZATION_FAILED) or a partition
does not exist (UNKNOWN_TOPIC_OR_PARTITION), nothing is added and the others get
OPERATION_NOT_ATTEMPTED.
Version notes: v0-3 carry one transaction (what librdkafka, kafka-python and aiokafka send); v4
(KIP-890 part 1) is the brokers' batched form: several transactions, each either added or, with
verifyOnly, only checked (NONE for a partition in the transaction, TRANSACTION_ABORTABLE otherwise);
it needs CLUSTER_ACTION on the cluster. v5 (KIP-890) may answer TRANSACTION_ABORTABLE, which older
versions get as INVALID_TXN_STATE (Kafka 3.7's verifyOnly answer); PRODUCER_FENCED is
INVALID_PRODUCER_EPOCH before v2. Partition leaders send v5: verifyOnly for a transaction version
0/1 producer's first batch on a partition, an add for a transaction version 2 one's (Produce v12).
"""

from __future__ import annotations

from pylog.broker.handlers import handler, txn_coordinator_of
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import older_as
from pylog.common.types import TP
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.AddPartitionsToTxn, 0, 5)
async def handle_add_partitions_to_txn(ctx: HandlerContext, req):
    """Add partitions to transactions (or, v4 verifyOnly, check that they are in them)."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.AddPartitionsToTxn)[version]
    if version < 4:
        errors = await _one(ctx, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                            req.v3_and_below_producer_epoch, _partitions(req.v3_and_below_topics), False)
        return cls(throttle_time_ms=0, results_by_topic_v3_and_below=_topic_results(cls.AddPartitionsToTxnTopicResult, errors, version))
    if not allowed(ctx, "CLUSTER_ACTION", "CLUSTER"):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), results_by_transaction=[])
    results = []
    for t in req.transactions or []:
        errors = await _one(ctx, t.transactional_id, t.producer_id, t.producer_epoch, _partitions(t.topics),
                            t.verify_only)
        results.append(cls.AddPartitionsToTxnResult(transactional_id=t.transactional_id,
                                                    topic_results=_topic_results(
                                                        cls.AddPartitionsToTxnResult.AddPartitionsToTxnTopicResult, errors, version)))
    return cls(throttle_time_ms=0, error_code=0, results_by_transaction=results)


def _partitions(topics) -> list[TP]:
    return [(t.name, p) for t in topics or [] for p in t.partitions or []]


async def _one(ctx: HandlerContext, tid: str, pid: int, epoch: int, partitions: list[TP],
               verify_only: bool) -> dict[TP, ErrorCode]:
    """The error of each partition of one transaction."""
    if not allowed(ctx, "WRITE", "TRANSACTIONAL_ID", tid):
        return dict.fromkeys(partitions, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    refused: dict[TP, ErrorCode] = {}
    for topic, idx in partitions:
        if not allowed(ctx, "WRITE", "TOPIC", topic):
            refused[(topic, idx)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif idx not in ctx.broker.metadata.topics.get(topic, {}):
            refused[(topic, idx)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if refused:
        return {tp: refused.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}
    coordinator = txn_coordinator_of(ctx)
    if verify_only:
        return await coordinator.verify_partitions(tid, pid, epoch, frozenset(partitions))
    return dict.fromkeys(partitions, await coordinator.add_partitions(tid, pid, epoch, frozenset(partitions)))


def _topic_results(topic_cls, errors: dict[TP, ErrorCode], version: int) -> list:
    by_topic: dict[str, list] = {}
    for (topic, idx), err in errors.items():
        by_topic.setdefault(topic, []).append(topic_cls.AddPartitionsToTxnPartitionResult(
            partition_index=idx, partition_error_code=int(older_as(err, version, 2, 5))))
    return [topic_cls(name=t, results_by_partition=ps) for t, ps in by_topic.items()]
