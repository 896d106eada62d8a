"""WriteTxnMarkers: v1 (transaction coordinator -> partition leaders).

Behavior: for each marker, every listed partition this broker leads gets one COMMIT or ABORT
control batch, appended like an acks=all produce (pylog/broker/txn_marker_append.py, which the
coordinator also calls directly for the partitions its own broker leads). Appending the marker ends
the producer's open transaction there, moves the last stable offset and, for an abort, adds the
`.txnindex` entry read_committed fetches report. Partitions led elsewhere get NOT_LEADER_OR_FOLLOWER,
unknown ones UNKNOWN_TOPIC_OR_PARTITION; the coordinator retries until every marker is written. As
KafkaApis, the request needs CLUSTER_ACTION on the cluster (brokers, and operators aborting a hanging
transaction with pylog-transactions.sh), else every partition is CLUSTER_AUTHORIZATION_FAILED.
Version notes: v1 (flexible) only: kafka-python's schema no longer has v0, and Kafka 3.7 (what pylog
presents as) has no v2.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.txn_marker_append import MarkerSet, append_markers
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.WriteTxnMarkers, 1, 1)
async def handle_write_txn_markers(ctx: HandlerContext, req):
    """Append the transaction markers to the partitions this broker leads."""
    cls = response_class(ApiKey.WriteTxnMarkers)[ctx.header.api_version]
    entries = [MarkerSet(m.producer_id, m.producer_epoch, m.coordinator_epoch, bool(m.transaction_result),
                         [(t.name, idx) for t in m.topics or [] for idx in t.partition_indexes or []])
               for m in req.markers or []]
    if allowed(ctx, "CLUSTER_ACTION", "CLUSTER"):
        groups = ctx.broker.groups
        results = await append_markers(ctx.broker.replicas, entries,
                                       groups.coordinator.on_txn_marker if groups is not None else None)
    else:
        results = [dict.fromkeys(e.partitions, ErrorCode.CLUSTER_AUTHORIZATION_FAILED) for e in entries]
    out_markers = []
    for m, result in zip(req.markers or [], results):
        topics = [cls.WritableTxnMarkerResult.WritableTxnMarkerTopicResult(name=t.name, partitions=[
            cls.WritableTxnMarkerResult.WritableTxnMarkerTopicResult.WritableTxnMarkerPartitionResult(
                partition_index=idx, error_code=int(result[(t.name, idx)]))
            for idx in t.partition_indexes or []]) for t in m.topics or []]
        out_markers.append(cls.WritableTxnMarkerResult(producer_id=m.producer_id, topics=topics))
    return cls(markers=out_markers)
