"""WriteTxnMarkers: v1 (transaction coordinator -> partition leaders).

Behavior: for each marker, every listed partition this broker leads gets one COMMIT or ABORT
control batch with the producer's id and epoch and the coordinator epoch (pylog/log/control.py),
appended like an acks=all produce: the partition answers once the whole ISR has it, or
REQUEST_TIMED_OUT. Appending the marker ends the producer's open transaction there, moves the
last stable offset and, for an abort, adds the `.txnindex` entry read_committed fetches report.
Partitions led elsewhere get NOT_LEADER_OR_FOLLOWER, unknown ones UNKNOWN_TOPIC_OR_PARTITION; the
coordinator retries until every marker is written. As KafkaApis, the request needs CLUSTER_ACTION on
the cluster (brokers, and operators aborting a hanging transaction with pylog-transactions.sh), else
every partition is CLUSTER_AUTHORIZATION_FAILED.
A marker written to a `__consumer_offsets` partition also settles the producer's transactional
offset commits there (the group coordinator commits or drops them), as Kafka's handler does.
A marker whose coordinator epoch is below the one of the producer's last marker on that partition
is TRANSACTION_COORDINATOR_FENCED (a newer coordinator owns the transactional id).
Version notes: v1 (flexible) only: kafka-python's schema no longer has v0, and Kafka 3.7 (what pylog
presents as) has no v2.
"""

from __future__ import annotations

import asyncio

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.group.hashing import OFFSETS_TOPIC
from pylog.log.control import ControlType, Marker, build_marker
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

MARKER_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms default, which bounds the coordinator's marker requests


@handler(ApiKey.WriteTxnMarkers, 1, 1)
async def handle_write_txn_markers(ctx: HandlerContext, req):
    """Append the transaction markers to the partitions this broker leads."""
    cls = response_class(ApiKey.WriteTxnMarkers)[ctx.header.api_version]
    rm = ctx.broker.replicas
    results: dict[tuple[int, str, int], ErrorCode] = {}
    waits: dict[tuple[int, str, int], asyncio.Future] = {}
    may_write = allowed(ctx, "CLUSTER_ACTION", "CLUSTER")
    marker_offsets: dict[tuple[int, str, int], int] = {}
    for i, m in enumerate(req.markers or []):
        kind = ControlType.COMMIT if m.transaction_result else ControlType.ABORT
        marker = Marker(m.producer_id, m.producer_epoch, kind, m.coordinator_epoch)
        for t in m.topics or []:
            for idx in t.partition_indexes or []:
                key = (i, t.name, idx)
                p, err = rm.leader_partition(t.name, idx) if may_write else (None, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
                if p is None:
                    results[key] = err
                    continue
                entry = p.log.producer_state.producers.get(m.producer_id)
                if entry is not None and m.coordinator_epoch < entry.coordinator_epoch:
                    # A newer coordinator already wrote this producer's marker here (Kafka's appendEndTxnMarker).
                    results[key] = ErrorCode.TRANSACTION_COORDINATOR_FENCED
                    continue
                out = rm.append(p, bytearray(build_marker(marker)), -1, from_coordinator=True)
                results[key] = out.error
                if out.error == ErrorCode.NONE:
                    waits[key] = p.add_produce_waiter(out.last_offset + 1)
                    marker_offsets[key] = out.last_offset
    pending = [f for f in waits.values() if not f.done()]
    if pending:
        await asyncio.wait(pending, timeout=MARKER_TIMEOUT_S)
    for key, fut in waits.items():
        results[key] = ErrorCode(fut.result()) if fut.done() else ErrorCode.REQUEST_TIMED_OUT
        if key[1] == OFFSETS_TOPIC and results[key] == ErrorCode.NONE and ctx.broker.groups is not None:
            m = req.markers[key[0]]
            ctx.broker.groups.coordinator.on_txn_marker(key[2], m.producer_id, bool(m.transaction_result),
                                                        marker_offsets[key])
    out_markers = []
    for i, m in enumerate(req.markers or []):
        topics = [cls.WritableTxnMarkerResult.WritableTxnMarkerTopicResult(name=t.name, partitions=[
            cls.WritableTxnMarkerResult.WritableTxnMarkerTopicResult.WritableTxnMarkerPartitionResult(
                partition_index=idx, error_code=int(results[(i, t.name, idx)]))
            for idx in t.partition_indexes or []]) for t in m.topics or []]
        out_markers.append(cls.WritableTxnMarkerResult(producer_id=m.producer_id, topics=topics))
    return cls(markers=out_markers)
