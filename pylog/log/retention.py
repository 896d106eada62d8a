"""Retention: deleting whole old segments by log start offset, retention.ms and retention.bytes.

Kafka's rules (UnifiedLog.deleteOldSegments): oldest segments first, stopping at the first one
that does not qualify; only segments whose every offset is below the high watermark; and here,
never the active segment (Kafka would roll it first).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from pylog.log.segment import LogSegment

if TYPE_CHECKING:
    from pylog.log.log import Log

_logger = logging.getLogger("pylog.log")


def apply_retention(plog: Log, now_ms: int) -> int:
    """Apply the three deletion rules to `plog`; the number of segments deleted."""
    cfg = plog.config
    deleted = delete_old_segments(
        plog,
        lambda seg, nxt: nxt.base_offset <= plog.log_start_offset,
        lambda seg: f"log start offset {plog.log_start_offset} breach",
    )
    if "delete" not in cfg.cleanup_policy:
        return deleted
    if cfg.retention_ms >= 0:
        deleted += delete_old_segments(
            plog,
            lambda seg, nxt: now_ms - seg.largest_timestamp() > cfg.retention_ms,
            lambda seg: (
                f"retention time {cfg.retention_ms}ms breach based on the largest record timestamp "
                f"in the segment, which is {seg.largest_timestamp()}"
            ),
        )
    if cfg.retention_bytes >= 0:
        excess = [plog.size_bytes - cfg.retention_bytes]

        def over_size(seg: LogSegment, nxt: LogSegment) -> bool:
            # Kafka deletes a segment only if the log stays at or above retention.bytes without it.
            if excess[0] - seg.size >= 0:
                excess[0] -= seg.size
                return True
            return False

        deleted += delete_old_segments(
            plog,
            over_size,
            lambda seg: f"retention size {cfg.retention_bytes} breach. Log size after deletion will be "
            f"{plog.size_bytes - seg.size}.",
        )
    return deleted


def delete_old_segments(
    plog: Log,
    predicate: Callable[[LogSegment, LogSegment], bool],
    reason: Callable[[LogSegment], str],
) -> int:
    """Delete the oldest segments while `predicate(segment, next_segment)` holds."""
    hw = plog.high_watermark
    segments = plog.segments
    n = 0
    while n < len(segments) - 1:  # the active (last) segment is never deleted
        seg, nxt = segments[n], segments[n + 1]
        if nxt.base_offset <= hw and predicate(seg, nxt):
            n += 1
        else:
            break
    for seg in segments[:n]:
        _logger.info("[Log partition=%s] Deleting segment %s due to %s", plog.name, seg.path, reason(seg))
    if n:
        plog.remove_oldest(n)
    return n
