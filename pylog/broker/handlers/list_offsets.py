"""ListOffsets: v1-9.

Behavior: timestamp -1 is the latest offset (for consumers the high watermark, or under
read_committed, v2+, the last stable offset; for replicas the log end offset), -2 the log start
offset, -3 (v7) the offset of the largest timestamp, -4 (v8, KIP-405's earliest-local) the log start
offset too and -5 (v9, KIP-1005's latest-tiered) offset -1 with epoch -1: answered as a Kafka broker
without remote storage answers them (its local log is the whole log, nothing is tiered); any
other timestamp is looked up in the time index (the first offset whose timestamp is >= it, or -1).
The leader epoch of the returned offset is reported (v4+), and current_leader_epoch is checked.
Version notes: v0 (multiple "old style" offsets) is not supported.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.protocol.fetch import READ_COMMITTED
from pylog.security.authorizer import allowed

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


def epoch_for_offset(plog, offset: int) -> int:
    """The leader epoch in force at `offset` (-1 when unknown)."""
    epoch = -1
    for e, start in plog.epoch_cache.entries:
        if start <= offset:
            epoch = e
        else:
            break
    return epoch


@handler(ApiKey.ListOffsets, 1, 9)
async def handle_list_offsets(ctx: HandlerContext, req):
    """Answer offset lookups on the partitions this broker leads."""
    rm = ctx.broker.replicas
    cls = response_class(ApiKey.ListOffsets)[ctx.header.api_version]
    out = []
    committed = ctx.header.api_version >= 2 and req.isolation_level == READ_COMMITTED
    for t in req.topics:
        parts = []
        may_describe = allowed(ctx, "DESCRIBE", "TOPIC", t.name)
        for pr in t.partitions:
            resp = cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                partition_index=pr.partition_index, error_code=0, timestamp=-1, offset=-1, leader_epoch=-1)
            if not may_describe:
                resp.error_code = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                parts.append(resp)
                continue
            p, err = rm.leader_partition(t.name, pr.partition_index, pr.current_leader_epoch)
            if p is None:
                resp.error_code = int(err)
                parts.append(resp)
                continue
            plog = p.log
            if pr.timestamp == LATEST:
                if req.replica_id >= 0:
                    resp.offset = plog.log_end_offset
                else:  # the last fetchable offset of the consumer's isolation level
                    resp.offset = plog.last_stable_offset if committed else p.high_watermark
            elif pr.timestamp in (EARLIEST, EARLIEST_LOCAL):
                resp.offset = plog.log_start_offset
            elif pr.timestamp == LATEST_TIERED:
                parts.append(resp)  # nothing tiered: offset -1, leader epoch -1
                continue
            else:
                found = plog.offset_for_timestamp(pr.timestamp) if pr.timestamp >= 0 else plog.max_timestamp_offset()
                limit = plog.last_stable_offset if committed else p.high_watermark
                if found is not None and (req.replica_id >= 0 or found[0] < limit):
                    resp.offset, resp.timestamp = found
            if resp.offset >= 0:
                resp.leader_epoch = epoch_for_offset(plog, resp.offset)
            parts.append(resp)
        out.append(cls.ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return cls(throttle_time_ms=0, topics=out)
