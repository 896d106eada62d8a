"""Log compaction of one partition: Kafka's Cleaner (LogCleaner.scala / Cleaner.java), in three steps.

1. `plan_clean` (on the event loop, cheap): decide the range -- from the first dirty offset (the
   cleaner checkpoint) to the first uncleanable offset, the minimum of the high watermark, the
   active segment's base and the first segment younger than min.compaction.lag.ms -- and snapshot
   the segments involved. The active segment is never cleaned.
2. `run_clean` (in a worker thread; reads and writes files only): map every key of the dirty
   range to its last offset, then recopy the segments from the log start into `.cleaned`
   segments of at most segment.bytes, keeping a record only if it is the latest of its key and
   not a tombstone past its delete horizon. Offsets never move: batches keep their base offset,
   last offset delta, leader epoch and producer fields; a batch that loses every record is
   dropped unless it is its producer's last batch or ends the cleaning round (then it stays as an
   empty header, as in Kafka). Tombstones are kept delete.retention.ms after the first clean that
   sees them (KIP-534: that clean stamps the delete horizon into the batch).
3. `finish_clean` (on the event loop): unless the log was truncated or lost segments meanwhile,
   swap each cleaned segment in (cleaner_swap) and replace the segment objects in the Log.

Produce and fetch never wait on a clean: step 2 holds no lock and touches only closed segments
and new files; step 3 is renames and list updates. Nothing past the first open transaction is
cleaned (an offset commit pending in it may still be aborted), aborted transactional records never
shadow older records of their key, and transactional data itself is kept (aborted data is not
removed yet), as are markers and the replaced segments' `.txnindex` entries.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from pylog.log.cleaner_swap import CLEANED_SUFFIX, all_segment_files, swap_in
from pylog.log.segment import LogSegment
from pylog.protocol.batch_rewrite import empty_batch, rebuild_batch
from pylog.protocol.records import BatchHeader, iter_batches, parse_header, read_records

if TYPE_CHECKING:
    from pylog.log.log import Log

log = logging.getLogger("pylog.log")

_READ_CHUNK = 1 << 20
_INT_MAX = 2**31 - 1
MAP_ENTRY_BYTES = 24  # Kafka's SkimpyOffsetMap slot: a 16-byte MD5 of the key + an 8-byte offset


class CleaningAborted(Exception):
    """The log changed under the cleaner (truncation, retention, deletion); nothing was swapped."""


@dataclass
class CleanPlan:
    """What one clean of one log covers, decided on the event loop (see the module doc)."""

    log: "Log"
    first_dirty: int
    first_uncleanable: int  # upper bound of this round (exclusive), a segment base
    segments: list[LogSegment]  # every segment with base offset < first_uncleanable, in order
    sizes: list[int]
    generation: int  # the log's generation when planned; a change (a truncation) aborts the swap
    now_ms: int
    max_map_entries: int
    result: list[tuple[int, list[LogSegment]]] = field(default_factory=list)  # cleaned base -> replaced
    end_offset: int = -1  # first offset not covered by the key map: the next first dirty offset
    aborted: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # producer -> aborted (first, marker)


def _file_batches(path: str, size: int) -> Iterator[tuple[BatchHeader, bytes]]:
    """(header, bytes) of each whole batch in the first `size` bytes of a segment file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pos = 0
        while size - pos >= 61:
            chunk = os.pread(fd, min(_READ_CHUNK, size - pos), pos)
            used = 0
            for h in iter_batches(chunk):
                yield h, chunk[h.position : h.position + h.size]
                used = h.position + h.size
            if used == 0:  # a batch larger than the chunk
                h = parse_header(chunk)
                if h.size > size - pos:
                    return
                yield h, os.pread(fd, h.size, pos)
                used = h.size
            pos += used
    finally:
        os.close(fd)


def _key_hash(key: bytes) -> bytes:
    return hashlib.md5(key).digest()  # Kafka's CleanerConfig.HASH_ALGORITHM


class OffsetMap:
    """Key hash -> last offset over the dirty range, bounded like Kafka's dedupe buffer."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max(1, max_entries)
        self.offsets: dict[bytes, int] = {}
        self.latest_offset = -1

    def put(self, key: bytes, offset: int) -> bool:
        """Record `offset` for `key`; False (nothing recorded) when the map is full."""
        h = _key_hash(key)
        if h not in self.offsets and len(self.offsets) >= self.max_entries:
            return False
        self.offsets[h] = offset
        self.latest_offset = offset
        return True

    def get(self, key: bytes) -> int:
        """The last offset seen for `key`, -1 if none."""
        return self.offsets.get(_key_hash(key), -1)


def build_offset_map(plan: CleanPlan) -> OffsetMap:
    """Map the keys of [first_dirty, first_uncleanable); stops early (at a record) when full."""
    omap = OffsetMap(plan.max_map_entries)
    start, end = plan.first_dirty, plan.first_uncleanable
    segs = plan.segments
    for i, seg in enumerate(segs):
        seg_end = segs[i + 1].base_offset if i + 1 < len(segs) else end
        if seg_end <= start:
            continue
        for h, raw in _file_batches(seg.path, plan.sizes[i]):
            if h.last_offset < start:
                continue
            if not h.is_control and not is_aborted(h, plan.aborted):
                for r in read_records(raw):
                    if r.key is not None and r.offset >= start and not omap.put(r.key, r.offset):
                        return omap
            omap.latest_offset = max(omap.latest_offset, h.last_offset)
        omap.latest_offset = max(omap.latest_offset, seg_end - 1)  # offset gaps: the segment is done
    return omap


def is_aborted(h: BatchHeader, aborted: dict[int, list[tuple[int, int]]]) -> bool:
    """Whether a transactional data batch belongs to an aborted transaction (its `.txnindex` entry says so).

    Such records never shadow older ones of their key (Kafka's cleaner leaves them out of the key map):
    a transactional offset commit that was aborted must not take the committed offset before it away.
    """
    if not h.is_transactional:
        return False
    return any(first <= h.base_offset <= last for first, last in aborted.get(h.producer_id, ()))


def _producer_last_offsets(plan: CleanPlan) -> dict[int, int]:
    """Last offset of each producer's last data batch below the round's upper bound."""
    last: dict[int, int] = {}
    for seg, size in zip(plan.segments, plan.sizes):
        for h, _ in _file_batches(seg.path, size):
            if h.producer_id >= 0 and not h.is_control:
                last[h.producer_id] = h.last_offset
    return last


def _retained(h: BatchHeader, raw: bytes, omap: OffsetMap, now: int, retention_ms: int, keep_empty: bool) -> bytes:
    """The batch as it goes into the cleaned segment (possibly b"")."""
    if h.is_control:
        return raw
    records = read_records(raw)
    horizon = h.delete_horizon_ms
    kept = []
    for r in records:
        if r.offset > omap.latest_offset:
            kept.append(r)
        elif r.key is not None and r.offset >= omap.get(r.key):
            if r.value is not None or horizon is None or now < horizon:
                kept.append(r)
    if kept:
        tombstones = any(r.value is None for r in kept)
        if len(kept) == len(records) and not (tombstones and horizon is None):
            return raw
        if tombstones and horizon is None:
            horizon = now + retention_ms
        return rebuild_batch(h, kept, horizon)
    return empty_batch(h) if keep_empty else b""


def _index_bytes(seg: LogSegment) -> tuple[int, int]:
    sizes = []
    for idx in (seg.index, seg.time_index):
        try:
            sizes.append(os.path.getsize(idx.path))
        except FileNotFoundError:
            sizes.append(0)
    return sizes[0], sizes[1]


def group_segments(plan: CleanPlan, end_offset: int) -> list[list[int]]:
    """Indexes of the segments to recopy (base < end_offset), grouped as Kafka's groupSegmentsBySize.

    Adjacent segments share a group while the log bytes stay within segment.bytes, each index
    within segment.index.bytes, and the offsets within an int32 of the group's base.
    """
    cfg = plan.log.config
    groups: list[list[int]] = []
    totals = (0, 0, 0)
    for i, seg in enumerate(plan.segments):
        if seg.base_offset >= end_offset:
            break
        index_bytes, time_bytes = _index_bytes(seg)
        if groups:
            last = plan.segments[i + 1].base_offset - 1 if i + 1 < len(plan.segments) else plan.first_uncleanable - 1
            size, ib, tb = totals[0] + plan.sizes[i], totals[1] + index_bytes, totals[2] + time_bytes
            fits_offsets = plan.sizes[i] == 0 or last - plan.segments[groups[-1][0]].base_offset <= _INT_MAX
            if size <= cfg.segment_bytes and max(ib, tb) <= cfg.segment_index_bytes and fits_offsets:
                groups[-1].append(i)
                totals = (size, ib, tb)
                continue
        groups.append([i])
        totals = (plan.sizes[i], index_bytes, time_bytes)
    return groups


def _clean_group(plan: CleanPlan, group: list[int], omap: OffsetMap, producers: dict[int, int]) -> None:
    """Recopy one group of segments into `<base>.log.cleaned` (+ indexes), closed and fsynced."""
    plog = plan.log
    base = plan.segments[group[0]].base_offset
    for path in all_segment_files(plog.dir, base, CLEANED_SUFFIX):
        if os.path.exists(path):
            os.unlink(path)  # a leftover from an aborted clean
    cleaned = LogSegment(
        plog.dir, base, index_interval_bytes=plog.config.index_interval_bytes,
        max_index_entries=plog.config.max_index_entries, max_time_index_entries=plog.config.max_time_index_entries,
        file_suffix=CLEANED_SUFFIX,
    )
    try:
        for i in group:
            for h, raw in _file_batches(plan.segments[i].path, plan.sizes[i]):
                keep_empty = (h.producer_id >= 0 and producers.get(h.producer_id) == h.last_offset) or (
                    h.next_offset == plan.first_uncleanable
                )
                out = _retained(h, raw, omap, plan.now_ms, plan.log.config.delete_retention_ms, keep_empty)
                if out:
                    cleaned.append(out, [parse_header(out)])
            for t in plan.segments[i].txn_index.entries:  # transactional data is kept, so are its aborts
                cleaned.txn_index.append(t)
        cleaned.close()
        mtime = os.stat(plan.segments[group[-1]].path).st_mtime
        os.utime(cleaned.path, (mtime, mtime))  # Kafka keeps the last replaced segment's mtime
    except BaseException:
        cleaned.delete()
        raise


def run_clean(plan: CleanPlan) -> CleanPlan:
    """Step 2 (worker thread): write the cleaned segments; fills plan.result and plan.end_offset."""
    started = time.monotonic()
    try:
        omap = build_offset_map(plan)
        plan.end_offset = omap.latest_offset + 1
        producers = _producer_last_offsets(plan)
        for group in group_segments(plan, plan.end_offset):
            _clean_group(plan, group, omap, producers)
            plan.result.append((plan.segments[group[0]].base_offset, [plan.segments[i] for i in group]))
    except FileNotFoundError as e:  # retention or a partition deletion removed files meanwhile
        discard(plan)
        raise CleaningAborted(str(e)) from e
    log.info(
        "[Log partition=%s] Cleaned offsets [%d, %d) into %d segment(s) in %.0f ms (%d keys mapped)",
        plan.log.name, plan.first_dirty, plan.end_offset, len(plan.result), (time.monotonic() - started) * 1000,
        len(omap.offsets),
    )
    return plan


def discard(plan: CleanPlan) -> None:
    """Remove the `.cleaned` files of an aborted clean."""
    for base, _ in plan.result:
        for path in all_segment_files(plan.log.dir, base, CLEANED_SUFFIX):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    plan.result.clear()


def plan_clean(plog: "Log", first_dirty: int, first_uncleanable: int, now_ms: int, max_map_entries: int) -> CleanPlan:
    """Step 1 (event loop): snapshot the closed segments below `first_uncleanable`."""
    segments = [s for s in plog.segments[:-1] if s.base_offset < first_uncleanable]
    aborted: dict[int, list[tuple[int, int]]] = {}
    for seg in plog.segments:  # an ABORT marker may sit in a later segment than its data
        for t in seg.txn_index.entries:
            aborted.setdefault(t.producer_id, []).append((t.first_offset, t.last_offset))
    return CleanPlan(
        plog, first_dirty, first_uncleanable, segments, [s.size for s in segments], plog.generation, now_ms,
        max_map_entries, aborted=aborted,
    )


def finish_clean(plan: CleanPlan) -> int:
    """Step 3 (event loop): swap the cleaned segments in; the number swapped.

    Raises CleaningAborted (after removing the cleaned files) if the log was truncated or the
    replaced segments left it (retention, DeleteRecords) while the clean ran.
    """
    plog = plan.log
    if plog.generation != plan.generation:
        discard(plan)
        raise CleaningAborted(f"{plog.name} was truncated while being cleaned")
    done = 0
    for n, (base, old) in enumerate(plan.result):
        if not plog.holds_closed_segments(old):
            plan.result = plan.result[n:]
            discard(plan)
            raise CleaningAborted(f"segments of {plog.name} were removed while being cleaned")
        swap_in(plog.dir, base, old)
        new = LogSegment(
            plog.dir, base, index_interval_bytes=plog.config.index_interval_bytes,
            max_index_entries=plog.config.max_index_entries,
            max_time_index_entries=plog.config.max_time_index_entries,
        )
        plog.replace_segments(old, new)
        done += 1
    log.info("[Log partition=%s] Swapped in %d cleaned segment(s)", plog.name, done)
    return done
