"""OffsetCommit: v2-9.

Behavior: the group validates the commit (member, generation, state; generation -1 is a
simple/admin commit while the group is Empty or missing, whatever member id it carries: librdkafka
under group.protocol=consumer sends its own), the offsets are written to the
group's `__consumer_offsets` partition with acks=all, and only then acknowledged. Partitions of
unknown topics get UNKNOWN_TOPIC_OR_PARTITION. Needs READ on the group (else every partition gets
GROUP_AUTHORIZATION_FAILED) and READ on each topic (else TOPIC_AUTHORIZATION_FAILED), as in Kafka.
Version notes: v2-4 carry a retention time (-1: the broker's offsets.retention.minutes); v6 adds
the committed leader epoch; v7 group.instance.id; v8+ flexible; v9 is v8 for KIP-848 clients.
v0-1 (ZooKeeper-stored offsets, per-partition timestamps) and v10 (topic ids) are not served.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.common.clock import now_ms
from pylog.broker.services import HandlerContext
from pylog.coordinator.group.api import CommitRequest
from pylog.coordinator.group.records import OffsetValue
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.protocol.offset_commit import decode_offset_commit_request, encode_offset_commit_response
from pylog.security.authorizer import allowed


@handler(ApiKey.OffsetCommit, 2, 9, decode=decode_offset_commit_request)
async def handle_offset_commit(ctx: HandlerContext, req):
    """Store a group's committed offsets."""
    version = ctx.header.api_version
    now = now_ms()
    retention = req.retention_time_ms
    offsets: dict[tuple[str, int], OffsetValue] = {}
    results: dict[tuple[str, int], ErrorCode] = {}
    order: list[tuple[str, int]] = []
    group_ok = allowed(ctx, "READ", "GROUP", req.group_id or "")
    for t in req.topics or []:
        topic_ok = group_ok and allowed(ctx, "READ", "TOPIC", t.name or "")
        for p in t.partitions or []:
            tp = (t.name or "", p.partition_index)
            order.append(tp)
            if not topic_ok:  # Kafka: the group check refuses every partition, then each topic's
                results[tp] = (ErrorCode.TOPIC_AUTHORIZATION_FAILED if group_ok
                               else ErrorCode.GROUP_AUTHORIZATION_FAILED)
                continue
            if ctx.broker.metadata.partition(*tp) is None:
                results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = OffsetValue(p.committed_offset, p.committed_leader_epoch,
                                      p.committed_metadata or "", now, now + retention if retention >= 0 else -1)
    if offsets:
        results.update(await coordinator_of(ctx).commit(CommitRequest(
            req.group_id or "", req.generation_id_or_member_epoch, req.member_id or "",
            req.group_instance_id if version >= 7 else None, offsets)))
    return encode_offset_commit_response(ctx.header, order, results)
