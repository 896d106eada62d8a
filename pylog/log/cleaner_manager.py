"""Which compacted log to clean next, and where cleaning stopped: Kafka's LogCleanerManager.

The filthiest log is chosen among those with `compact` in cleanup.policy whose dirty ratio
(bytes from the first dirty offset up to the first uncleanable segment, over all bytes from the
log start to there) exceeds min.cleanable.dirty.ratio, or whose oldest dirty batch is older than
max.compaction.lag.ms. The first dirty offset of each partition is kept in the log dir's
`cleaner-offset-checkpoint` (Kafka's file and format).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pylog.log.checkpoint import OffsetCheckpoint
from pylog.log.cleaner import MAP_ENTRY_BYTES, CleanPlan, plan_clean
from pylog.log.config import LONG_MAX
from pylog.log.segment import LogSegment

if TYPE_CHECKING:
    from pylog.log.log import Log
    from pylog.log.manager import LogManager

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"

log = logging.getLogger("pylog.log")


@dataclass(frozen=True)
class LogToClean:
    """Kafka's LogToClean: a compacted log with its dirty range and byte counts."""

    log: "Log"
    first_dirty: int
    first_uncleanable: int  # base offset of the first segment that may not be cleaned
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool  # max.compaction.lag.ms passed for the oldest dirty batch

    @property
    def total_bytes(self) -> int:
        """Clean plus cleanable bytes."""
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        """Cleanable bytes over total bytes (0 for an empty log)."""
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    @property
    def due(self) -> bool:
        """Whether the cleaner should clean it now."""
        if self.need_compaction_now and self.cleanable_bytes > 0:
            return True
        return self.cleanable_ratio > self.log.config.min_cleanable_dirty_ratio


def _first_batch_timestamp(seg: LogSegment) -> int:
    for b in seg.walk(0):
        return b.max_timestamp
    return -1


def cleanable_offsets(plog: "Log", checkpoint: int | None, now_ms: int) -> tuple[int, int]:
    """(first dirty offset, first uncleanable offset) as Kafka's LogCleanerManager.cleanableOffsets."""
    start = plog.log_start_offset
    first_dirty = start if checkpoint is None or not start <= checkpoint <= plog.log_end_offset else checkpoint
    # Kafka: the first open transaction's offset, the high watermark and the active segment bound what is decided.
    uncleanable = min(plog.high_watermark, plog.segments[-1].base_offset)
    unstable = plog.open_txns.first_unstable_offset()
    if unstable is not None:
        uncleanable = min(uncleanable, unstable)
    lag = plog.config.min_compaction_lag_ms
    if lag > 0:
        floor_base = _floor(plog, first_dirty).base_offset
        for seg in plog.segments[:-1]:
            if seg.base_offset >= floor_base and seg.largest_timestamp() > now_ms - lag:
                uncleanable = min(uncleanable, seg.base_offset)
                break
    return first_dirty, uncleanable


def _floor(plog: "Log", offset: int) -> LogSegment:
    """The segment holding `offset` (the last with base <= offset; the first if none)."""
    found = plog.segments[0]
    for seg in plog.segments:
        if seg.base_offset > offset:
            break
        found = seg
    return found


def log_to_clean(plog: "Log", checkpoint: int | None, now_ms: int) -> LogToClean:
    """The dirty range and byte counts of `plog` (Kafka's calculateCleanableBytes)."""
    first_dirty, uncleanable = cleanable_offsets(plog, checkpoint, now_ms)
    active = plog.segments[-1]
    first_unclean_seg = active if uncleanable >= active.base_offset else _floor(plog, uncleanable)
    fu = first_unclean_seg.base_offset
    lo = min(first_dirty, fu)
    lo_base = _floor(plog, lo).base_offset
    cleanable = sum(s.size for s in plog.segments if lo_base <= s.base_offset < fu)
    clean = sum(s.size for s in plog.segments if s.base_offset < first_dirty)
    need_now = False
    max_lag = plog.config.max_compaction_lag_ms
    if max_lag < LONG_MAX:
        dirty = [s for s in plog.segments[:-1] if s.base_offset >= _floor(plog, first_dirty).base_offset]
        stamps = [t for t in (_first_batch_timestamp(s) for s in dirty) if t > 0]
        need_now = bool(stamps) and min(stamps) < now_ms - max(max_lag, 0)
    return LogToClean(plog, first_dirty, fu, clean, cleanable, need_now)


class LogCleanerManager:
    """Picks logs to clean for the broker's cleaner task and keeps the cleaner checkpoints."""

    def __init__(self, logs: "LogManager", dedupe_buffer_size: int = 128 * 1024 * 1024, load_factor: float = 0.9):
        self.logs = logs
        self.max_map_entries = max(1, int(dedupe_buffer_size // MAP_ENTRY_BYTES * load_factor))
        self.in_progress: set[tuple[str, int]] = set()
        # (topic, partition) -> (first dirty offset, the log's generation when recorded)
        self._dirty_from: dict[tuple[str, int], tuple[int, int]] = {}
        self._loaded_roots: set[str] = set()

    def _checkpoint_path(self, root: str) -> str:
        return os.path.join(root, CLEANER_OFFSET_CHECKPOINT)

    def _load(self, root: str) -> None:
        if root in self._loaded_roots:
            return
        self._loaded_roots.add(root)
        try:
            offsets = OffsetCheckpoint(self._checkpoint_path(root)).read()
        except OSError as e:
            log.error("Failed to read %s: %s", self._checkpoint_path(root), e)
            return
        for tp, offset in offsets.items():
            plog = self.logs.get(*tp)
            if plog is not None:
                self._dirty_from.setdefault(tp, (offset, plog.generation))

    def checkpoint_of(self, plog: "Log") -> int | None:
        """The first dirty offset recorded for `plog`, unless it was truncated since."""
        self._load(self.logs.log_dir_of(plog))
        entry = self._dirty_from.get((plog.topic, plog.partition))
        if entry is None or entry[1] != plog.generation:
            return None
        return entry[0]

    def grab_filthiest(self, now_ms: int) -> CleanPlan | None:
        """Plan a clean of the dirtiest due compacted log (marked in progress), or None."""
        candidates = []
        for plog in self.logs.all_logs():
            tp = (plog.topic, plog.partition)
            if not plog.config.compact or tp in self.in_progress:
                continue
            ltc = log_to_clean(plog, self.checkpoint_of(plog), now_ms)
            if ltc.total_bytes > 0 and ltc.due and ltc.cleanable_bytes > 0:
                candidates.append(ltc)
        if not candidates:
            return None
        best = max(candidates, key=lambda c: c.cleanable_ratio)
        self.in_progress.add((best.log.topic, best.log.partition))
        return plan_clean(best.log, best.first_dirty, best.first_uncleanable, now_ms, self.max_map_entries)

    def done(self, plan: CleanPlan, cleaned: bool) -> tuple[str, dict[tuple[str, int], int]] | None:
        """End a clean; when `cleaned`, record its end offset and return (log dir, checkpoint to write)."""
        plog = plan.log
        tp = (plog.topic, plog.partition)
        self.in_progress.discard(tp)
        if not cleaned or self.logs.get(*tp) is not plog:
            return None
        self._dirty_from[tp] = (plan.end_offset, plog.generation)
        root = self.logs.log_dir_of(plog)
        return root, {
            (p.topic, p.partition): self._dirty_from[(p.topic, p.partition)][0]
            for p in self.logs.all_logs()
            if (p.topic, p.partition) in self._dirty_from and self.logs.log_dir_of(p) == root
        }

    def write_checkpoint(self, root: str, offsets: dict[tuple[str, int], int]) -> None:
        """Write `cleaner-offset-checkpoint` (may run in a worker thread)."""
        OffsetCheckpoint(self._checkpoint_path(root)).write(offsets)
