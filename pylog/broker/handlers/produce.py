"""Produce: v0-11 (advertised from v0; only RecordBatch v2 is accepted), and v12 at transaction.version 2.

Behavior: per partition, the leader validates the batches (magic 2, CRC32C, sizes; on a
compacted topic every record needs a key, else INVALID_RECORD with Kafka's per-record errors and
message from v8) and the idempotent producer's epoch and sequences (INVALID_PRODUCER_EPOCH,
OUT_OF_ORDER_SEQUENCE_NUMBER; a retry of one of a producer's last 5 batches is answered with its
original offsets and not appended again, as Kafka does), stamps offsets and its leader epoch in
place and appends them as sent. A batch that starts a producer's transaction on a partition is first
checked with the transaction coordinator (KIP-890 part 1, transaction.partition.verification.enable):
TRANSACTION_ABORTABLE (INVALID_TXN_STATE before v11) when the partition is not in the transaction,
INVALID_PRODUCER_EPOCH for a fenced epoch, NOT_ENOUGH_REPLICAS (retriable) while the coordinator cannot
answer. Produce v12 (transaction version 2, KIP-890 part 2; served and advertised only while
transaction.version 2 is finalized) is v11 whose transactional first batch on a partition adds the
partition to the transaction: the client sends no AddPartitionsToTxn (done whatever
transaction.partition.verification.enable says, since nothing else would add it). ACLs: WRITE on each topic (TOPIC_AUTHORIZATION_FAILED) and, for
a transactional produce, on its transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED). acks=0 gets no response, acks=1 answers after the local append,
acks=-1 after every ISR member has the records (the high watermark passed them), failing with
NOT_ENOUGH_REPLICAS before the append when the ISR is below min.insync.replicas and with
REQUEST_TIMED_OUT after timeout_ms. That wait is a Later: the appends happen when the request is
handled, in arrival order, and the connection goes on with the next request while the response
waits (the server still sends responses in request order).
Version notes: v0-2 carry message format v0/v1, which is refused per partition with
UNSUPPORTED_FOR_MESSAGE_FORMAT; they are advertised anyway because librdkafka < 2.11.1 disables
compression when Produce's minimum version is above 0 (KAFKA-18659). v9+ is flexible. v10+ answers
NOT_LEADER_OR_FOLLOWER with the partition's CurrentLeader and the leaders' NodeEndpoints (KIP-951), as
Kafka's handleProduceRequest. v11 may answer TRANSACTION_ABORTABLE (KIP-890).
"""

from __future__ import annotations

from pylog.broker.delayed_produce import Append, DelayedProduce
from pylog.broker.features import TV2
from pylog.broker.handlers import Later, handler
from pylog.broker.quotas import PRODUCE as PRODUCE_QUOTA, record_request
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import abortable_as
from pylog.broker.txn_verify import needs_verification, verify
from pylog.metrics.recorders import BROKER as BROKER_METRICS
from pylog.common.clock import now_ms
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.protocol.produce import (CURRENT_LEADER_FROM, PartitionProduceResult, decode_produce_request,
                                    encode_produce_response)
from pylog.security.authorizer import allowed


ABORTABLE_FROM = 11  # TRANSACTION_ABORTABLE (KIP-890)
ADDS_PARTITIONS_FROM = 12  # transaction version 2: the first batch adds its partition to the transaction


@handler(ApiKey.Produce, 0, 11, decode=decode_produce_request, gate=(*TV2, ADDS_PARTITIONS_FROM))
async def handle_produce(ctx: HandlerContext, req):
    """Append to the partitions this broker leads."""
    rm = ctx.broker.replicas
    acks = req.acks
    results: dict[tuple[str, int], list] = {}
    # Kafka refuses every partition of a transactional produce without WRITE on its transactional id.
    tid_ok = req.transactional_id is None or allowed(ctx, "WRITE", "TRANSACTIONAL_ID", req.transactional_id)
    targets: list[tuple[tuple[str, int], object, bytearray]] = []
    for td in req.topic_data:
        may_write = allowed(ctx, "WRITE", "TOPIC", td.name)
        for pd in td.partition_data:
            key = (td.name, pd.index)
            if not tid_ok or not may_write:
                results[key] = [ErrorCode.TOPIC_AUTHORIZATION_FAILED if tid_ok
                                else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, (), None]
                continue
            if acks not in (0, 1, -1):
                results[key] = [ErrorCode.INVALID_REQUIRED_ACKS, -1, (), None]
                continue
            p, err = rm.leader_partition(td.name, pd.index)
            if p is None:
                results[key] = [err, -1, (), None]
                continue
            buf = pd.records
            if buf is None or buf.readonly:  # offsets are stamped in place: the frame must be writable
                buf = bytearray(buf or b"")
            targets.append((key, p, buf))
            results[key] = [ErrorCode.NONE, -1, (), None]  # its place in the response, in request order
    adds = ctx.header.api_version >= ADDS_PARTITIONS_FROM
    if req.transactional_id is not None and (adds or ctx.broker.config.get("transaction.partition.verification.enable")):
        targets = await _verified(ctx, req.transactional_id, targets, results, adds)
    delayed = rm.append_records((Append(key, p, buf) for key, p, buf in targets), acks, req.timeout_ms)
    for key, p, buf in targets:
        out = delayed.outcomes[key]
        results[key] = [out.error, out.base_offset, out.record_errors, out.message]
        if out.error != ErrorCode.NONE:
            BROKER_METRICS.failed_produce[p.topic] += 1
        elif not out.duplicate:
            ctx.broker.stats.record_in(p, len(buf), out.last_offset - out.base_offset + 1)
    # A client over its producer_byte_rate gets the throttle time and a muted connection (KIP-219).
    ctx.throttle_ms = record_request(ctx.broker.quotas, ctx.security and ctx.security.principal,
                                     ctx.header.client_id, PRODUCE_QUOTA, ctx.size, now_ms())
    if acks == 0:
        return None
    if delayed.pending:
        # Kafka's delayed produce: the appends are done, so the connection may go on with the next
        # request (its appends land after these) while this response waits for the followers.
        return Later(lambda: _when_replicated(ctx, results, delayed))
    return _response(ctx, results, delayed)


async def _verified(ctx: HandlerContext, tid: str, targets: list, results: dict, adds: bool) -> list:
    """The targets whose batches may be appended: a batch starting a transaction on its partition is first
    checked with the transaction coordinator (KIP-890 part 1), or added to it (`adds`, part 2); the refused
    ones get their error in `results`."""
    starting: dict[tuple[int, int], list] = {}
    for key, p, buf in targets:
        producer = needs_verification(p, buf)
        if producer is not None:
            starting.setdefault(producer, []).append(key)
    refused: dict[tuple[str, int], ErrorCode] = {}
    for (pid, epoch), keys in starting.items():
        errors = await verify(ctx.broker.transactions, ctx.broker.broker_id, tid, pid, epoch, keys, adds)
        refused.update({k: abortable_as(e, ctx.header.api_version, ABORTABLE_FROM)
                        for k, e in errors.items() if e != ErrorCode.NONE})
    for key, err in refused.items():
        results[key] = [err, -1, (), None]
    return [t for t in targets if t[0] not in refused]


async def _when_replicated(ctx, results: dict, delayed: DelayedProduce) -> bytes:
    """The acks=-1 response once the high watermark passed every append, or at timeout_ms."""
    await delayed.wait()
    return _response(ctx, results, delayed)


def _response(ctx, results: dict[tuple[str, int], list], delayed: DelayedProduce) -> bytes:
    """Encode the outcome, each append's acks=-1 answer folded in (REQUEST_TIMED_OUT when still waiting)."""
    rm = ctx.broker.replicas
    for key in delayed.outcomes:
        out = delayed.result(key)
        results[key][0], results[key][1] = out.error, out.base_offset
    topics: dict[str, list[PartitionProduceResult]] = {}
    kip951 = ctx.header.api_version >= CURRENT_LEADER_FROM
    listener = None if ctx.security is None else ctx.security.listener_name
    nodes: dict[int, tuple[int, str, int, str | None]] = {}
    for (topic, idx), (err, base, record_errors, message) in results.items():
        p = rm.get(topic, idx)
        res = PartitionProduceResult(
            idx, int(err), base, -1, p.log.log_start_offset if p is not None else -1, record_errors, message)
        if kip951 and err == ErrorCode.NOT_LEADER_OR_FOLLOWER:  # the producer goes straight to the new leader
            leader, epoch, ep = ctx.broker.metadata.current_leader(topic, idx, listener)
            res.current_leader = (leader, epoch)
            if ep is not None:
                nodes[ep.id] = (ep.id, ep.host, ep.port, ep.rack)
        topics.setdefault(topic, []).append(res)
    return encode_produce_response(ctx.header, list(topics.items()), throttle_time_ms=ctx.throttle_ms,
                                   node_endpoints=[nodes[k] for k in sorted(nodes)])
