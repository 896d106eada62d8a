"""One partition's log: a directory `<topic>-<partition>` of segments, plus its epoch cache.

Synchronous: the broker calls it from its event loop (flush() and the manager's checkpoints may
also run in a worker thread meanwhile, and are written to allow that). The produce path is `append_as_leader` on the request's own buffer (offsets stamped in place, one write);
the fetch path is `read`, which returns file ranges for sendfile without touching record bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from typing import Callable, Sequence

from pylog.common.clock import now_ms as _now_ms
from pylog.log.checkpoint import LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA, PartitionMetadataFile, fsync_dir
from pylog.log.config import LogConfig
from pylog.log.epoch_cache import LeaderEpochCache
from pylog.log.errors import OffsetOutOfRangeError
from pylog.log.loader import load_segments, new_segment, parse_partition_dir
from pylog.log.max_timestamp import max_timestamp_offset
from pylog.log.producer_recovery import (delete_snapshots_before, load_producer_state, reload_after_truncation,
                                         restart_producer_state_at, take_snapshot)
from pylog.log.producer_state import ProducerStateManager
from pylog.log.results import AppendInfo, FileSlice, OffsetTimestamp
from pylog.log.retention import apply_retention
from pylog.log.segment import LogSegment
from pylog.log.segment_list import SegmentList
from pylog.log.stable import OpenTransactions
from pylog.log.txn_index import AbortedTxn
from pylog.log.txn_tracking import rebuild_open_transactions, track_appended
from pylog.log.validation import check_follower_append, check_leader_append
from pylog.protocol.records import BatchHeader, assign_offsets, set_log_append_time

log = logging.getLogger("pylog.log")

EARLIEST_TIMESTAMP = -2  # ListOffsets special timestamps
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
_INT_MAX = 2**31 - 1


class Log:
    """A partition's segments, offsets (start, end, high watermark, recovery point) and epochs."""

    def __init__(
        self,
        dir: str,
        config: LogConfig,
        segments: list[LogSegment],
        next_offset: int,
        log_start_offset: int,
        recovery_point: int,
    ) -> None:
        self.dir = os.path.abspath(dir)
        self.topic, self.partition = parse_partition_dir(os.path.basename(self.dir))
        self.config = config
        self._metadata = PartitionMetadataFile(os.path.join(self.dir, PARTITION_METADATA))
        self._segments = SegmentList(segments)
        self.next_offset = next_offset
        self.log_start_offset = log_start_offset
        self.recovery_point = recovery_point
        self._hw = log_start_offset
        self._unflushed_messages = 0
        self._last_flush_ms = _now_ms()
        self._flush_pending_upto: int | None = None  # set by roll: flush the old segment soon
        self._dir_dirty = False
        self._generation = 0  # bumped by every truncation; see the generation property
        # Called when truncation lowers the recovery point, so the owner can re-checkpoint it
        # at once (a stale, higher recovery point would make recovery trust lost data).
        self.recovery_point_listener: Callable[[Log], None] | None = None
        self.epoch_cache = LeaderEpochCache(
            os.path.join(self.dir, LEADER_EPOCH_CHECKPOINT), lambda: self.next_offset, self.name
        )
        self.epoch_cache.truncate_from_end(next_offset)
        self.epoch_cache.truncate_from_start(log_start_offset)
        self.open_txns = OpenTransactions()  # transactions begun and not yet ended by a marker
        self.has_txn_batches = False  # whether truncation must rebuild open_txns
        self.producer_state = ProducerStateManager(self.name)

    @classmethod
    def open(
        cls,
        dir: str,
        config: LogConfig,
        recovery_point: int = 0,
        log_start_offset: int = 0,
        *,
        clean_shutdown: bool = False,
        topic_id: str | None = None,
        now_ms: int | None = None,
    ) -> "Log":
        """Open (creating if needed) a partition dir, recovering the unflushed tail.

        Unless `clean_shutdown`, batches from `recovery_point` on are re-validated and a torn or
        corrupt tail is truncated (logged as a warning on "pylog.log"). Missing or corrupt
        indexes are rebuilt. With `topic_id`, `partition.metadata` is written (or checked).
        """
        dir = os.path.abspath(dir)
        name = os.path.basename(dir)
        parse_partition_dir(name)
        os.makedirs(dir, exist_ok=True)
        loaded = load_segments(dir, name, config, recovery_point, log_start_offset, clean_shutdown, now_ms)
        self = cls(dir, config, loaded.segments, loaded.next_offset, loaded.log_start_offset, loaded.recovery_point)
        self._dir_dirty = loaded.changed
        rebuild_open_transactions(self)
        load_producer_state(self)
        if topic_id is not None:
            self.set_topic_id(topic_id)
        return self

    # --- properties ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """`<topic>-<partition>`."""
        return f"{self.topic}-{self.partition}"

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        """The segments now, oldest first (a snapshot: only the Log changes its list)."""
        return tuple(self._segments)

    @property
    def generation(self) -> int:
        """Bumped whenever a truncation removes offsets from the end (nothing else changes it).

        Work done on a snapshot of the segments (a flush in a worker thread, a clean, a cleaner
        checkpoint) compares it before and after: a change means offsets it saw may be gone.
        """
        return self._generation

    @property
    def log_end_offset(self) -> int:
        """The offset the next appended record gets (LEO)."""
        return self.next_offset

    @property
    def high_watermark(self) -> int:
        """Offsets below it are committed and readable by consumers."""
        return self._hw

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        self._hw = min(max(offset, self.log_start_offset), self.next_offset)

    @property
    def size_bytes(self) -> int:
        """Bytes of all segments."""
        return sum(s.size for s in self._segments)

    @property
    def active_segment(self) -> LogSegment:
        """The segment appends go to."""
        return self._segments.active

    @property
    def topic_id(self) -> str | None:
        """The topic id from `partition.metadata`, if written."""
        return self._metadata.read_or_none()

    def set_topic_id(self, topic_id: str) -> None:
        """Write `partition.metadata`; a different id already there is an error (Kafka's check)."""
        self._metadata.assign(topic_id, self.name)

    def update_config(self, config: LogConfig) -> None:
        """Apply changed topic configs (dynamic config updates)."""
        self.config = config
        for seg in self._segments:
            seg.index_interval_bytes = config.index_interval_bytes
            seg.index.max_entries = config.max_index_entries
            seg.time_index.max_entries = config.max_time_index_entries

    # --- appends ------------------------------------------------------------------------------
    def append_as_leader(
        self,
        buf: bytearray | memoryview,
        headers: Sequence[BatchHeader],
        leader_epoch: int,
        now_ms: int | None = None,
        keys_known: bool = False,
        from_coordinator: bool = False,
    ) -> AppendInfo:
        """Assign offsets from the LEO, stamp `leader_epoch`, append; `headers` from validate_batches.
        `keys_known`: the broker built these records itself with a key each (a coordinator's), so a
        compacted log need not parse them again to check.

        Raises RecordTooLargeError (a batch over max.message.bytes), InvalidTimestampError,
        RecordValidationError (a keyless record on a compacted topic) or RecordBatchTooLargeError
        (the append is larger than segment.bytes) before writing anything.
        """
        if not headers:
            raise ValueError("append_as_leader needs at least one batch")
        config = self.config
        check_leader_append(buf, headers, config, self.name, now_ms, keys_known)
        duplicate = self.producer_state.check_client_append(headers, self.next_offset, from_coordinator)
        if duplicate is not None:  # a retry of an appended batch: answer with the original, append nothing
            append_time = duplicate.timestamp if config.message_timestamp_type == "LogAppendTime" else -1
            return AppendInfo(duplicate.first_offset, duplicate.last_offset, duplicate.timestamp, 0, 0, append_time,
                              duplicate=True)
        first = self.next_offset
        last = assign_offsets(buf, headers, first, leader_epoch)
        append_time = -1
        if config.message_timestamp_type == "LogAppendTime":
            append_time = _now_ms() if now_ms is None else now_ms
            for h in headers:
                set_log_append_time(buf, h, append_time)
        if leader_epoch >= 0 and leader_epoch != self.epoch_cache.latest_epoch:
            self.epoch_cache.assign(leader_epoch, first)
        return self._append(buf, headers, first, last, now_ms, append_time)

    def append_as_follower(self, buf: bytearray | memoryview, headers: Sequence[BatchHeader]) -> AppendInfo:
        """Append batches with the leader's offsets; they must start at or after the LEO and increase.

        Starting after the LEO is normal on a compacted topic: the leader's cleaner removed the
        records in between (Kafka only refuses a first offset below the LEO).
        """
        if not headers:
            raise ValueError("append_as_follower needs at least one batch")
        check_follower_append(buf, headers, self.next_offset, self.log_start_offset, self.config, self.name)
        first = headers[0].base_offset
        last = headers[-1].base_offset + headers[-1].last_offset_delta
        cache = self.epoch_cache
        for h in headers:
            if h.partition_leader_epoch >= 0 and h.partition_leader_epoch != cache.latest_epoch:
                cache.assign(h.partition_leader_epoch, h.base_offset)
        return self._append(buf, headers, first, last, None, -1, replicated=True)

    def _append(
        self,
        buf: bytearray | memoryview,
        headers: Sequence[BatchHeader],
        first: int,
        last: int,
        now_ms: int | None,
        append_time: int,
        replicated: bool = False,
    ) -> AppendInfo:
        max_ts = -1
        for h in headers:
            if h.max_timestamp > max_ts:
                max_ts = h.max_timestamp
        size = len(buf)
        seg = self._maybe_roll(size, max_ts, last, _now_ms() if now_ms is None else now_ms)
        seg.append(buf, headers)
        self.next_offset = last + 1
        track_appended(self, buf, headers)
        self.producer_state.update(headers, replicated)
        n = last - first + 1
        self._unflushed_messages += n
        if self._unflushed_messages >= self.config.flush_messages:
            self.flush()
        return AppendInfo(first, last, max_ts, n, size, append_time)

    def _maybe_roll(self, size: int, max_ts: int, max_offset: int, now_ms: int) -> LogSegment:
        """Kafka's shouldRoll: size, segment.ms (message time), full indexes, offset overflow."""
        seg = self._segments.active
        config = self.config
        if (
            seg.size > config.segment_bytes - size
            or (seg.size > 0 and seg.time_waited_for_roll(now_ms, max_ts) > config.segment_ms - seg.roll_jitter_ms)
            or seg.index.is_full
            or seg.time_index.is_full
            or max_offset - seg.base_offset > _INT_MAX
        ):
            return self.roll(now_ms)
        return seg

    def roll(self, now_ms: int | None = None) -> LogSegment:
        """Start a new active segment at the LEO (no-op if the active one is empty there)."""
        active = self._segments.active
        if active.size == 0 and active.base_offset == self.next_offset:
            return active
        start = time.monotonic()
        active.on_become_inactive()
        take_snapshot(self, sync=False)  # the state up to the new segment's base (Kafka snapshots on roll)
        seg = new_segment(self.dir, self.next_offset, self.config, now_ms)
        self._segments.append(seg)
        self._dir_dirty = True
        # Kafka flushes the finished segment right away in the background; we leave it to the
        # next flush_due() so a roll never stalls the event loop on fsync.
        self._flush_pending_upto = seg.base_offset
        log.info(
            "[Log partition=%s, dir=%s] Rolled new log segment at offset %d in %d ms.",
            self.name, os.path.dirname(self.dir), seg.base_offset, (time.monotonic() - start) * 1000,
        )
        return seg

    # --- reads --------------------------------------------------------------------------------
    def read(
        self, start_offset: int, max_bytes: int, max_offset: int | None = None, min_one: bool = True,
        inline_bytes: int = 0,
    ) -> list[FileSlice | bytes]:
        """Whole batches from the one containing `start_offset`, at most `max_bytes` of them.

        Batches reaching `max_offset` (exclusive; e.g. the high watermark) are left out. With
        `min_one` the first batch is returned even if larger than `max_bytes`. Reading at the LEO
        returns []; outside [log start, LEO] raises OffsetOutOfRangeError. A segment's part of up
        to `inline_bytes` comes back as its bytes, read now through the segment's open file: for
        a small read, opening the file again to sendfile it costs more than the copy.
        """
        leo = self.next_offset
        if start_offset == leo:
            return []
        if start_offset < self.log_start_offset or start_offset > leo:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.name}, but we only "
                f"have log segments in the range {self.log_start_offset} to {leo}."
            )
        if max_offset is not None and start_offset >= max_offset:
            return []
        return self._segments.read(start_offset, max_bytes, max_offset, min_one, inline_bytes)

    @property
    def last_stable_offset(self) -> int:
        """The LSO: below it every transaction is decided (read_committed fetches stop here)."""
        return self.open_txns.last_stable_offset(self.high_watermark)

    def add_aborted_txn(self, entry: AbortedTxn) -> None:
        """Index an aborted transaction in the segment that holds its ABORT marker (the active one)."""
        self._segments.active.txn_index.append(entry)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [fetch_offset, upper_bound), for read_committed fetches."""
        return self._segments.aborted_txns(fetch_offset, upper_bound)

    def offset_for_timestamp(self, timestamp: int) -> OffsetTimestamp | None:
        """ListOffsets: (offset, timestamp) of the first record with time >= `timestamp`.

        Special values: -2 earliest -> (log start offset, -1); -1 latest -> (LEO, -1);
        -3 max timestamp -> see max_timestamp_offset(). None when no record qualifies.
        """
        if timestamp == EARLIEST_TIMESTAMP:
            return OffsetTimestamp(self.log_start_offset, -1)
        if timestamp == LATEST_TIMESTAMP:
            return OffsetTimestamp(self.next_offset, -1)
        if timestamp == MAX_TIMESTAMP:
            return self.max_timestamp_offset()
        return self._segments.find_by_timestamp(timestamp, self.log_start_offset)

    def max_timestamp_offset(self) -> OffsetTimestamp | None:
        """KIP-734 (timestamp -3): the largest timestamp and the offset of the record carrying it."""
        return max_timestamp_offset(list(self._segments))

    # --- truncation (a follower's divergence, KIP-101/279), retention ---------------------------
    def truncate_to(self, offset: int) -> bool:
        """Remove everything from the batch containing `offset` on; False if nothing to remove."""
        if offset < 0:
            raise ValueError(f"Cannot truncate partition {self.name} to a negative offset ({offset}).")
        if offset >= self.next_offset:
            log.info("[Log partition=%s] Truncating to %d has no effect as the largest offset in the log is %d",
                     self.name, offset, self.next_offset - 1)
            return False
        log.info("[Log partition=%s] Truncating to offset %d", self.name, offset)
        if self._segments[0].base_offset > offset:
            self.truncate_fully_and_start_at(offset)
            return True
        active = self._segments.truncate_after(offset)
        active.truncate_to(offset)
        self.next_offset = end = active.read_next_offset()
        self._dir_dirty = True
        self.epoch_cache.truncate_from_end(end)
        self.log_start_offset = min(self.log_start_offset, end)
        self._hw = min(self._hw, end)
        reload_after_truncation(self)  # drops snapshots past the new end, replays up to it if needed
        if self._flush_pending_upto is not None and self._flush_pending_upto > end:
            self._flush_pending_upto = None
        self._generation += 1
        if end < self.recovery_point:
            self._reset_recovery_point(end)
        if self.has_txn_batches:  # a truncated marker may reopen a transaction
            rebuild_open_transactions(self)
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete all data and restart the log empty at `offset` (start = LEO = HW = offset)."""
        log.info("[Log partition=%s] Truncate fully and start at offset %d", self.name, offset)
        self._segments.reset(lambda: new_segment(self.dir, offset, self.config))
        self.next_offset = self.log_start_offset = self._hw = offset
        self.open_txns = OpenTransactions()
        self._dir_dirty = True
        self._flush_pending_upto = None
        self._unflushed_messages = 0
        self.epoch_cache.clear_and_flush()
        restart_producer_state_at(self, offset)
        self._generation += 1
        self._reset_recovery_point(offset)

    def _reset_recovery_point(self, offset: int) -> None:
        # The owner re-checkpoints at once: a stale, higher recovery point would make recovery trust lost data.
        self.recovery_point = offset
        if self.recovery_point_listener is not None:
            self.recovery_point_listener(self)

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Move the log start offset forward (DeleteRecords); it may not pass the high watermark.

        The segments wholly below it are deleted by the next apply_retention().
        """
        if offset > self._hw:
            raise OffsetOutOfRangeError(
                f"Cannot increment the log start offset to {offset} of partition {self.name} since "
                f"it is larger than the high watermark {self._hw}"
            )
        if offset <= self.log_start_offset:
            return False
        self.log_start_offset = offset
        self.epoch_cache.truncate_from_start(offset)
        if self.recovery_point < offset:
            self.recovery_point = offset
        return True

    def apply_retention(self, now_ms: int | None = None) -> int:
        """Delete whole old segments by log start offset, retention.ms and retention.bytes.

        Only segments wholly below the high watermark are candidates, and never the active
        segment. Returns the number of segments deleted.
        """
        return apply_retention(self, _now_ms() if now_ms is None else now_ms)

    def remove_oldest(self, n: int) -> None:
        """Delete the first `n` segments (never the active one) and move the log start up to the next."""
        for seg in self._segments.remove_oldest(n):
            seg.delete()
        self._dir_dirty = True
        new_start = self._segments[0].base_offset
        if new_start > self.log_start_offset:
            self.log_start_offset = new_start
            self.epoch_cache.truncate_from_start(new_start)
        self.recovery_point = max(self.recovery_point, new_start)
        delete_snapshots_before(self, new_start)

    # --- the cleaner's swap (cleaner.finish_clean) ----------------------------------------------
    def holds_closed_segments(self, run: Sequence[LogSegment]) -> bool:
        """Whether the adjacent segments `run` (the same objects) are still here, none of them active."""
        i = self._segments.index_of_run(run)
        return i >= 0 and i + len(run) < len(self._segments)

    def replace_segments(self, run: Sequence[LogSegment], new: LogSegment) -> None:
        """Put `new` (a cleaned segment, its files already swapped in) in place of the closed segments `run`."""
        if not self.holds_closed_segments(run):
            raise ValueError(f"The segments to replace are not closed segments of {self.name}")
        self._segments.replace_run(run, new)

    # --- durability ---------------------------------------------------------------------------
    def flush(self, up_to: int | None = None, now_ms: int | None = None) -> None:
        """fsync segments holding offsets below `up_to` (default: everything); advance the recovery point."""
        # The broker may run this in a worker thread while the loop appends, rolls or truncates:
        # work on a snapshot, and only advance the recovery point if no truncation intervened.
        generation = self._generation
        target = self.next_offset if up_to is None else min(up_to, self.next_offset)
        if target > self.recovery_point:
            segments = list(self._segments)
            for i, seg in enumerate(segments):
                seg_end = segments[i + 1].base_offset if i + 1 < len(segments) else target + 1
                if seg.base_offset < target and seg_end > self.recovery_point:
                    seg.flush()
        if self._dir_dirty:
            self._dir_dirty = False
            fsync_dir(self.dir)
        if target > self.recovery_point and generation == self._generation:
            self.recovery_point = target
        if target >= self.next_offset:
            self._unflushed_messages = 0
        if self._flush_pending_upto is not None and self._flush_pending_upto <= target:
            self._flush_pending_upto = None
        self._last_flush_ms = _now_ms() if now_ms is None else now_ms

    def flush_due(self, now_ms: int | None = None) -> bool:
        """Flush what a roll left pending, and everything when flush.ms has passed; True if flushed."""
        now = _now_ms() if now_ms is None else now_ms
        flushed = False
        if self._flush_pending_upto is not None:
            self.flush(self._flush_pending_upto, now)
            flushed = True
        if self.next_offset > self.recovery_point and now - self._last_flush_ms >= self.config.flush_ms:
            self.flush(None, now)
            flushed = True
        return flushed

    def close(self) -> None:
        """Write final time index entries and the producer snapshot, fsync what is dirty, close all files."""
        take_snapshot(self, sync=True)
        for seg in self._segments:
            seg.close()

    def delete(self) -> None:
        """Close and remove the whole partition directory."""
        for seg in self._segments:
            seg.delete()
        shutil.rmtree(self.dir, ignore_errors=True)
