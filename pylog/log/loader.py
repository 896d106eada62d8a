"""Loading a partition directory: leftover files, segments, recovery of the unflushed tail.

Kafka's LogLoader, simplified to what pylog writes: a cleaner swap cut short by a crash is
completed (cleaner_swap), temp files are removed, orphaned indexes deleted, and -- unless the
log dir was shut down cleanly -- every batch at or after the recovery point is re-validated
(CRC, sizes, offsets) while the indexes are rebuilt. A torn or corrupt tail is cut off at the
last valid batch and later segments are deleted, with a warning in the "pylog.log" logger.
Data before the recovery point was fsynced: it is trusted, never cut.
"""

from __future__ import annotations

import logging
import os
import random
import re
from typing import NamedTuple

from pylog.log.cleaner_swap import complete_swaps
from pylog.log.config import LogConfig
from pylog.log.errors import KafkaStorageError
from pylog.log.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LogSegment

log = logging.getLogger("pylog.log")

_SEGMENT_FILE = re.compile(r"^(\d{20})(\.log|\.index|\.timeindex|\.txnindex|\.snapshot)$")
_LEFTOVER_SUFFIXES = (".deleted", ".cleaned", ".swap", ".tmp")


class LoadedSegments(NamedTuple):
    """What loading a partition dir produced."""

    segments: list[LogSegment]
    next_offset: int
    log_start_offset: int
    recovery_point: int
    changed: bool  # files were truncated or deleted (the directory needs an fsync)


_MARKED_DIR = re.compile(r"^\S+-\S+\.\S+-(delete|future)$")  # Kafka's DeleteDirPattern / FutureDirPattern


def parse_partition_dir(name: str) -> tuple[str, int]:
    """`<topic>-<partition>`, or `<topic>-<partition>.<uniqueId>-delete|-future` -> (topic, partition).

    Raises ValueError for anything else (UnifiedLog.parseTopicPartitionName).
    """
    base = name[: name.rindex(".")] if _MARKED_DIR.match(name) else name
    topic, sep, part = base.rpartition("-")
    if not sep or not topic or not part.isdigit():
        raise ValueError(
            f"Found directory {name}, '{name}' is not in the form of topic-partition or "
            f"topic-partition.uniqueId-delete (if marked for deletion)."
        )
    return topic, int(part)


def new_segment(dir: str, base_offset: int, config: LogConfig, now_ms: int | None = None) -> LogSegment:
    """Create (or open) the segment starting at `base_offset` with the config's index limits."""
    seg = LogSegment(
        dir,
        base_offset,
        index_interval_bytes=config.index_interval_bytes,
        max_index_entries=config.max_index_entries,
        max_time_index_entries=config.max_time_index_entries,
        now_ms=now_ms,
    )
    if config.segment_jitter_ms > 0:  # Kafka draws each segment's jitter so segments roll apart
        seg.roll_jitter_ms = random.randrange(min(config.segment_jitter_ms, config.segment_ms))
    return seg


def _remove_leftovers(dir: str, name: str) -> list[int]:
    """Delete temp/orphan files; return the base offsets of the `.log` files."""
    bases: list[int] = []
    names = os.listdir(dir)
    logs = {n[: -len(LOG_SUFFIX)] for n in names if n.endswith(LOG_SUFFIX)}
    for n in names:
        path = os.path.join(dir, n)
        if n.endswith(_LEFTOVER_SUFFIXES):
            log.info("[Log partition=%s] Deleting stray temporary file %s", name, path)
            os.unlink(path)
            continue
        m = _SEGMENT_FILE.match(n)
        if m is None:
            continue
        prefix, suffix = m.groups()
        if suffix == LOG_SUFFIX:
            bases.append(int(prefix))
        elif suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX) and prefix not in logs:
            log.warning(
                "[Log partition=%s] Found an orphaned index file %s, with no corresponding log file.",
                name, path,
            )
            os.unlink(path)
    return sorted(bases)


def load_segments(
    dir: str,
    name: str,
    config: LogConfig,
    recovery_point: int,
    log_start_offset: int,
    clean_shutdown: bool,
    now_ms: int | None = None,
) -> LoadedSegments:
    """Open every segment of `dir`, recovering from `recovery_point` unless `clean_shutdown`."""
    changed = complete_swaps(dir, name)
    bases = _remove_leftovers(dir, name)
    segments = [new_segment(dir, b, config, now_ms) for b in bases]
    if not segments:
        segments.append(new_segment(dir, log_start_offset, config, now_ms))
        changed = True

    if clean_shutdown:
        # Trust the data; only the active segment's indexes are checked eagerly (the others are
        # checked when first used -- see LogSegment.ensure_indexes).
        changed |= segments[-1].ensure_indexes()
    else:
        changed |= _recover(segments, name, recovery_point)

    for seg in segments[:-1]:
        if not seg.had_index_files and seg.size > 0:  # a lost index is cheap to notice now
            changed |= seg.ensure_indexes()

    next_offset = segments[-1].read_next_offset()
    start = max(log_start_offset, segments[0].base_offset)
    if next_offset < start:
        log.warning(
            "[Log partition=%s] Deleting all segments because logEndOffset (%d) is smaller than "
            "logStartOffset (%d). This could happen if segment files were deleted from the file system.",
            name, next_offset, start,
        )
        for seg in segments:
            seg.delete()
        segments = [new_segment(dir, start, config, now_ms)]
        next_offset = start
        changed = True
    rp = next_offset if clean_shutdown else min(recovery_point, next_offset)
    return LoadedSegments(segments, next_offset, start, rp, changed)


def _recover(segments: list[LogSegment], name: str, recovery_point: int) -> bool:
    """Re-validate from the segment holding the recovery point on; cut at the first bad batch."""
    first = 0
    for i, seg in enumerate(segments):
        if seg.base_offset <= recovery_point:
            first = i
    changed = False
    for i in range(first, len(segments)):
        seg = segments[i]
        result = seg.recover(validate_from=recovery_point, truncate=False)
        changed = True  # indexes were rewritten
        if not result.truncated_bytes:
            continue
        if result.next_offset < recovery_point:
            raise KafkaStorageError(
                f"Segment {seg.path} is damaged at byte {result.valid_bytes} ({result.reason}), below "
                f"the recovery point {recovery_point}; refusing to drop flushed data"
            )
        seg.cut(result.valid_bytes)
        log.warning(
            "[Log partition=%s] Found invalid messages in log segment %s at byte offset %d: %s. "
            "Truncated %d bytes; the log now ends at offset %d.",
            name, seg.path, result.valid_bytes, result.reason, result.truncated_bytes, result.next_offset,
        )
        for later in segments[i + 1 :]:
            log.warning(
                "[Log partition=%s] Deleting segment %s (%d bytes) that follows the corruption",
                name, later.path, later.size,
            )
            later.delete()
        del segments[i + 1 :]
        break
    return changed
