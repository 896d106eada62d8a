"""Offset arithmetic of the `pylog` source, pure: per-trigger rate limits and splitting ranges into tasks.

The rules are Spark's Kafka source's, so a query moved from Spark's `kafka` format behaves the same: a limit
is shared between partitions in proportion to their backlog (rounded down, but a partition with any backlog
gets at least one offset), and `minPartitions` splits ranges in proportion to their size.
"""
from __future__ import annotations

import math
from typing import Mapping

from pyspark.sql.datasource import InputPartition

from pylog.common.types import TP

__all__ = ["OffsetRange", "rate_limit", "byte_limit", "delay_batch", "split_ranges"]


class OffsetRange(InputPartition):
    """Offsets [start, end) of one topic-partition: one Spark task."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end

    @property
    def size(self) -> int:
        """How many offsets the range spans."""
        return max(0, self.end - self.start)


def rate_limit(start: Mapping[TP, int], latest: Mapping[TP, int], limit: float,
               cost: Mapping[TP, float] | None = None) -> dict[TP, int]:
    """End offsets reading at most about `limit` past `start` (offsets, or `cost` units per offset), shared by backlog."""
    weight = {tp: (cost or {}).get(tp, 1.0) if cost is not None else 1.0 for tp in latest}
    backlog = {tp: (end - start[tp]) * weight[tp] for tp, end in latest.items() if tp in start and end > start[tp]}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    result = {}
    for tp, end in latest.items():
        if tp not in backlog:
            result[tp] = end
            continue
        share = limit * backlog[tp] / total / (weight[tp] or 1.0)  # this partition's part, in offsets
        step = math.ceil(share) if share < 1 else math.floor(share)  # a small partition is never starved
        result[tp] = min(end, start[tp] + step)
    return result


def byte_limit(start: Mapping[TP, int], latest: Mapping[TP, int], max_bytes: int,
               bytes_per_offset: Mapping[TP, float]) -> dict[TP, int]:
    """End offsets reading about `max_bytes` past `start` (at least one offset where there is a backlog)."""
    return rate_limit(start, latest, max_bytes, bytes_per_offset)


def delay_batch(available: int, min_offsets: int | None, since_last_ms: float, max_delay_ms: int) -> bool:
    """Spark's minOffsetsPerTrigger: wait for that many new offsets, but never past maxTriggerDelay."""
    return min_offsets is not None and since_last_ms < max_delay_ms and available < min_offsets


def split_ranges(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Non-empty ranges, split so that there are at least about `min_partitions` of them."""
    ranges = [r for r in ranges if r.size > 0]
    if not min_partitions or min_partitions <= len(ranges):
        return ranges
    total = sum(r.size for r in ranges)
    result = []
    for r in ranges:
        parts = max(1, round(r.size / total * min_partitions))
        start, left = r.start, r.size
        for i in range(parts):
            piece = left // (parts - i)  # the last piece takes what integer division left over
            left -= piece
            if piece:
                result.append(OffsetRange(r.topic, r.partition, start, start + piece))
            start += piece
    return result
