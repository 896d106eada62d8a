"""DeleteRecords: v0-2 (AdminClient.delete_records, kafka-delete-records.sh).

Behavior: on each partition it leads, the broker moves the log start offset up to the requested
offset (-1: the high watermark); an offset above the high watermark, or a negative one, is
OFFSET_OUT_OF_RANGE, and a topic without cleanup.policy=delete is POLICY_VIOLATION. Segments
wholly below the new start are removed by the next retention pass, as in Kafka. The answer waits
(Kafka's delayed delete-records) until the partition's low watermark, the smallest log start offset
among the leader and the followers on live brokers (followers report theirs in each Fetch), has
reached the requested offset, or until timeout_ms (REQUEST_TIMED_OUT for that partition).
With an authorizer, a topic the principal may not DELETE is TOPIC_AUTHORIZATION_FAILED for each of its
partitions, checked before anything else (Kafka's KafkaApis.handleDeleteRecordsRequest).
Version notes: v2 is flexible; the versions differ in nothing else.
"""

from __future__ import annotations

import asyncio
import logging

from pylog.broker.handlers import Later, handler
from pylog.broker.services import HandlerContext
from pylog.broker.partition import wait_for_change
from pylog.log import OffsetOutOfRangeError
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

log = logging.getLogger("pylog.broker.delete_records")

HIGH_WATERMARK = -1
INVALID_LOW_WATERMARK = -1


def low_watermark(p, alive) -> int:
    """The smallest log start offset of the leader and of its followers on live brokers."""
    low = p.log.log_start_offset
    for replica, st in p.followers.items():
        if alive(replica) and st.log_start_offset < low:
            low = st.log_start_offset
    return low


def delete_on_leader(p, offset: int) -> tuple[ErrorCode, int]:
    """Move the leader's log start offset: (error, the offset the low watermark has to reach)."""
    plog = p.log
    if "delete" not in plog.config.cleanup_policy:
        return ErrorCode.POLICY_VIOLATION, -1
    target = p.high_watermark if offset == HIGH_WATERMARK else offset
    if target < 0:
        return ErrorCode.OFFSET_OUT_OF_RANGE, -1
    try:
        moved = plog.maybe_increment_log_start_offset(target)
    except OffsetOutOfRangeError:
        return ErrorCode.OFFSET_OUT_OF_RANGE, -1
    if moved:
        log.info("[Partition %s] Incremented log start offset to %d due to client delete records request", p, target)
        p.notify_fetchers()  # long-polling followers learn the new start now, not at their poll's end
    return ErrorCode.NONE, target


@handler(ApiKey.DeleteRecords, 0, 2)
async def handle_delete_records(ctx: HandlerContext, req):
    """Delete records below the requested offsets on the partitions this broker leads."""
    rm = ctx.broker.replicas
    outcome: dict[tuple[str, int], tuple[ErrorCode, int]] = {}
    for t in req.topics:
        may_delete = allowed(ctx, "DELETE", "TOPIC", t.name)
        for pr in t.partitions:
            if not may_delete:
                outcome[(t.name, pr.partition_index)] = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)
                continue
            p, err = rm.leader_partition(t.name, pr.partition_index)
            outcome[(t.name, pr.partition_index)] = (err, -1) if p is None else delete_on_leader(p, pr.offset)
    waiting = {key: target for key, (err, target) in outcome.items() if err == ErrorCode.NONE}
    if waiting and not _all_reached(ctx, waiting):
        deadline = asyncio.get_running_loop().time() + max(req.timeout_ms, 0) / 1000
        return Later(lambda: _when_reached(ctx, outcome, waiting, deadline))
    return _response(ctx, outcome, waiting, timed_out=False)


def _reached(ctx, key: tuple[str, int], target: int) -> bool:
    p = ctx.broker.replicas.get(*key)
    # Leadership lost while waiting: answer now (the response says NOT_LEADER_OR_FOLLOWER).
    return p is None or not p.is_leader or low_watermark(p, ctx.broker.metadata.alive) >= target


def _all_reached(ctx, waiting: dict[tuple[str, int], int]) -> bool:
    return all(_reached(ctx, key, target) for key, target in waiting.items())


async def _when_reached(ctx, outcome: dict, waiting: dict, deadline: float):
    """Wake on every follower fetch or append of the waited partitions until done or timed out."""
    loop = asyncio.get_running_loop()
    rm = ctx.broker.replicas
    while not _all_reached(ctx, waiting):
        remaining = deadline - loop.time()
        if remaining <= 0:
            return _response(ctx, outcome, waiting, timed_out=True)
        await wait_for_change([p for key in waiting if (p := rm.get(*key)) is not None], remaining)
    return _response(ctx, outcome, waiting, timed_out=False)


def _response(ctx, outcome: dict, waiting: dict, timed_out: bool):
    cls = response_class(ApiKey.DeleteRecords)[ctx.header.api_version]
    topic_cls = cls.DeleteRecordsTopicResult
    part_cls = topic_cls.DeleteRecordsPartitionResult
    rm = ctx.broker.replicas
    topics: dict[str, list] = {}
    for (topic, idx), (err, _) in outcome.items():
        low = INVALID_LOW_WATERMARK
        if err == ErrorCode.NONE:
            p = rm.get(topic, idx)
            if p is None or not p.is_leader:
                err = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                low = low_watermark(p, ctx.broker.metadata.alive)
                if timed_out and low < waiting[(topic, idx)]:
                    err, low = ErrorCode.REQUEST_TIMED_OUT, INVALID_LOW_WATERMARK
        topics.setdefault(topic, []).append(part_cls(partition_index=idx, low_watermark=low, error_code=int(err)))
    return cls(throttle_time_ms=0, topics=[topic_cls(name=t, partitions=ps) for t, ps in topics.items()])
