"""One log segment: `<base>.log` plus its `.index`, `.timeindex` and (once a transaction aborts) `.txnindex`.

Appends are one `os.write` of the caller's buffer (no copy in Python); reads never look at
record bytes, they walk batch headers with small `pread`s and hand back (position, size) ranges
for sendfile. Only recovery reads whole batches, to check their CRCs.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import struct
import time
from typing import Iterator, NamedTuple, Sequence

from crc32c import crc32c

from pylog.log.errors import CorruptIndexError, KafkaStorageError
from pylog.log.index import OffsetIndex, TimeIndex
from pylog.log.txn_index import TXN_INDEX_SUFFIX, TransactionIndex
from pylog.protocol.records import (
    ATTRIBUTES_OFFSET,
    BATCH_OVERHEAD,
    CURRENT_MAGIC,
    LOG_OVERHEAD,
    BatchHeader,
    read_records,
)

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"

# baseOffset, batchLength, magic, lastOffsetDelta, maxTimestamp: what reads and index rebuilds need.
_WALK = struct.Struct(">qi4xb4x2xi8xq")
_WALK_SIZE = _WALK.size  # 43
_CRC_AT = struct.Struct(">I")
_WALK_CHUNK = 8192
_RECOVER_CHUNK = 1 << 20
_INT_MAX = 2**31 - 1

log = logging.getLogger("pylog.log")


def _fsync_open(fd: int) -> None:
    """fsync, ignoring a descriptor closed by the event loop in the meantime (nothing left to sync)."""
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno != errno.EBADF:
            raise


def segment_name(base_offset: int) -> str:
    """Kafka's 20-digit zero-padded file name prefix for a base offset."""
    return f"{base_offset:020d}"


class BatchInfo(NamedTuple):
    """Where a batch is in a segment and the header fields reads need."""

    position: int
    base_offset: int
    last_offset: int
    size: int
    max_timestamp: int


class RecoveryResult(NamedTuple):
    """What a segment recovery found: valid bytes kept and why the rest was cut (if any)."""

    valid_bytes: int
    truncated_bytes: int
    next_offset: int  # offset after the last valid batch (the base offset if none)
    reason: str  # empty when nothing was truncated


class LogSegment:
    """A `.log` file with its offset and time indexes."""

    def __init__(
        self,
        dir: str,
        base_offset: int,
        *,
        index_interval_bytes: int = 4096,
        max_index_entries: int = 10 * 1024 * 1024 // 8,
        max_time_index_entries: int = 10 * 1024 * 1024 // 12,
        now_ms: int | None = None,
        file_suffix: str = "",
    ) -> None:
        self.dir = dir
        self.base_offset = base_offset
        prefix = os.path.join(dir, segment_name(base_offset))
        # A suffix (the cleaner's ".cleaned") names a segment that is not part of the log yet.
        self.path = prefix + LOG_SUFFIX + file_suffix
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        st = os.fstat(self._fd)
        self.size = st.st_size
        self.inode = st.st_ino  # lets a sender notice the file at `path` was swapped (compaction)
        self.index = OffsetIndex(prefix + INDEX_SUFFIX + file_suffix, base_offset, max_index_entries)
        self.time_index = TimeIndex(prefix + TIME_INDEX_SUFFIX + file_suffix, base_offset, max_time_index_entries)
        self.txn_index = TransactionIndex(prefix + TXN_INDEX_SUFFIX + file_suffix)  # no file until the first abort
        # Index files are created with the segment, so a missing one means it was lost.
        self.had_index_files = self.index.exists() and self.time_index.exists()
        for idx in (self.index, self.time_index):
            if not idx.exists():
                open(idx.path, "ab").close()
        self._indexes_checked = False
        self.index_interval_bytes = index_interval_bytes
        self.bytes_since_last_index_entry = 0
        self.created_ms = int(time.time() * 1000) if now_ms is None else now_ms
        self._max_ts: int | None = None  # loaded lazily from the time index + log tail
        self._offset_of_max_ts = base_offset
        self._rolling_ts: int | None = None  # max timestamp of the first batch, for segment.ms
        self._dirty = False  # written since the last fsync
        self.roll_jitter_ms = 0  # subtracted from segment.ms (segment.jitter.ms)
        # (base offset, position) of the first batch of the last append: followers and consumers at the log's
        # end read from there, and walking batch headers from the index entry before it (up to
        # index.interval.bytes of small batches, ~9 preads and headers per fetch at 4 KB) was a tenth of a
        # follower fetch's cost. Every batch before the position ends below the offset. Reset on truncation.
        self._tail: tuple[int, int] | None = None

    # --- writes ---------------------------------------------------------------------------
    def append(self, buf: bytes | bytearray | memoryview, headers: Sequence[BatchHeader]) -> None:
        """Append whole batches (`headers` positions are relative to `buf`) and index them.

        An offset index entry is made for a batch when more than index.interval.bytes were
        written since the last entry -- the same rule recovery uses, so both build equal indexes.
        """
        if not self._indexes_checked:
            self.ensure_indexes()
        if self._max_ts is None:
            self._load_max_timestamp()
        start = self.size
        if start == 0:
            self._rolling_ts = headers[0].max_timestamp
        max_ts = self._max_ts
        since = self.bytes_since_last_index_entry
        interval = self.index_interval_bytes
        for h in headers:
            if h.max_timestamp > max_ts:  # type: ignore[operator]
                max_ts = h.max_timestamp
                self._offset_of_max_ts = h.base_offset + h.last_offset_delta
            if since > interval:
                self.index.append(h.base_offset + h.last_offset_delta, start + h.position)
                self.time_index.maybe_append(max_ts, self._offset_of_max_ts)  # type: ignore[arg-type]
                since = 0
            since += h.batch_length + LOG_OVERHEAD
        self._max_ts = max_ts
        self.bytes_since_last_index_entry = since
        self._tail = (headers[0].base_offset, start + headers[0].position)
        n = len(buf)
        written = os.write(self._fd, buf)
        if written != n:  # regular files write fully unless the disk is full; finish or fail loudly
            with memoryview(buf) as view:
                while written < n:
                    written += os.write(self._fd, view[written:])
        self.size = start + n
        self._dirty = True

    def flush(self) -> None:
        """fsync the log and its indexes.

        May run in a worker thread while the event loop appends: the dirty flag is cleared
        *before* the fsync so a concurrent append re-marks it, and a segment closed meanwhile
        (retention, truncation) is skipped.
        """
        fd = self._fd
        if self._dirty and fd >= 0:
            self._dirty = False
            _fsync_open(fd)
        self.index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def on_become_inactive(self) -> None:
        """A newer segment took over: record the final max timestamp in the time index."""
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self._offset_of_max_ts, skip_full_check=True)

    def close(self) -> None:
        """Write the final time index entry, fsync what is dirty and close the files."""
        if self._fd < 0:
            return
        self.on_become_inactive()
        self.flush()
        os.close(self._fd)
        self._fd = -1
        self.index.close()
        self.time_index.close()

    def delete(self) -> None:
        """Close and remove all of the segment's files."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.index.delete()
        self.time_index.delete()
        self.txn_index.delete()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def truncate_to(self, offset: int) -> int:
        """Remove the batch containing `offset` and everything after; return bytes removed."""
        if not self._indexes_checked:
            self.ensure_indexes()
        pos = self.translate_offset(offset)
        if pos is None:
            return 0
        removed = self.size - pos
        self.index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        os.ftruncate(self._fd, pos)
        self.size = pos
        self._tail = None
        self.bytes_since_last_index_entry = 0
        self._max_ts = None  # recomputed from what is left
        if pos == 0:
            self._rolling_ts = None
            self.created_ms = int(time.time() * 1000)
        return removed

    # --- reads ----------------------------------------------------------------------------
    def walk(self, position: int = 0, end: int | None = None) -> Iterator[BatchInfo]:
        """Batch headers from `position` on, via small preads; stops at a torn or short batch."""
        end = self.size if end is None else end
        fd = self._fd
        unpack = _WALK.unpack_from
        chunk = b""
        chunk_pos = position
        pos = position
        while end - pos >= BATCH_OVERHEAD:
            off = pos - chunk_pos
            if off + _WALK_SIZE > len(chunk):
                chunk = os.pread(fd, _WALK_CHUNK, pos)
                chunk_pos, off = pos, 0
                if len(chunk) < _WALK_SIZE:
                    return
            base, length, _magic, delta, max_ts = unpack(chunk, off)
            size = length + LOG_OVERHEAD
            if size < BATCH_OVERHEAD or size > end - pos:
                return
            yield BatchInfo(pos, base, base + delta, size, max_ts)
            pos += size

    def translate_offset(self, offset: int, start_position: int = 0) -> int | None:
        """Position of the first batch whose last offset is >= `offset`, or None."""
        if not self._indexes_checked:
            self.ensure_indexes()
        _, pos = self.index.lookup(offset)
        for b in self.walk(max(pos, start_position)):
            if b.last_offset >= offset:
                return b.position
        return None

    def read(
        self, start_offset: int, max_bytes: int, max_offset: int | None, min_one: bool
    ) -> tuple[int, int, bool]:
        """Whole batches from the one containing `start_offset`: (position, size, limit_hit).

        Stops before a batch that would exceed `max_bytes` (unless it is the first and
        `min_one`) or that reaches `max_offset` (exclusive). `limit_hit` is False when the
        segment simply ended, so the caller may continue with the next segment.
        """
        if not self._indexes_checked:
            self.ensure_indexes()
        _, index_pos = self.index.lookup(start_offset)
        tail = self._tail
        if tail is not None and start_offset >= tail[0] and tail[1] > index_pos:
            index_pos = tail[1]
        first = -1
        walker = self.walk(index_pos)
        for found in walker:
            if found.last_offset >= start_offset:
                first = found.position
                break
        if first < 0:
            return 0, 0, False
        # Skip over whole batches with the index: every entry is a batch boundary, and the batches
        # before it end below its offset. Only the last stretch (< index.interval.bytes) is walked.
        total = 0
        jump = self.index.boundary_before(first + max_bytes, max_offset)
        if jump is not None and jump > first:
            total = jump - first
            batches = self.walk(jump)
        else:  # go on from the batch found, with the headers already read (a small read: no second pread)
            batches = itertools.chain((found,), walker)
        for b in batches:
            if max_offset is not None and b.last_offset >= max_offset:
                return first, total, True
            if total + b.size > max_bytes:
                if total == 0 and min_one:
                    return first, b.size, True
                return first, total, True
            total += b.size
        return first, total, False

    def read_next_offset(self) -> int:
        """The offset after the last batch (the base offset when empty)."""
        if not self._indexes_checked:
            self.ensure_indexes()
        _, pos = self.index.last_entry
        nxt = self.base_offset
        for b in self.walk(pos):
            nxt = b.last_offset + 1
        return nxt

    def read_batch_bytes(self, position: int, size: int) -> bytes:
        """The raw bytes of one batch."""
        return os.pread(self._fd, size, position)

    # --- timestamps -----------------------------------------------------------------------
    def _load_max_timestamp(self) -> None:
        if not self._indexes_checked:
            self.ensure_indexes()
        ts, offset = self.time_index.last_entry
        _, pos = self.index.lookup(offset)
        max_ts, max_off = ts, offset
        for b in self.walk(pos):
            if b.max_timestamp > max_ts:
                max_ts, max_off = b.max_timestamp, b.last_offset
        self._max_ts, self._offset_of_max_ts = max_ts, max_off

    @property
    def max_timestamp(self) -> int:
        """Largest batch max timestamp in the segment (-1 if none)."""
        if self._max_ts is None:
            self._load_max_timestamp()
        return self._max_ts  # type: ignore[return-value]

    @property
    def offset_of_max_timestamp(self) -> int:
        """Last offset of the batch that holds `max_timestamp`."""
        if self._max_ts is None:
            self._load_max_timestamp()
        return self._offset_of_max_ts

    def largest_timestamp(self) -> int:
        """What retention compares against: max timestamp, else the file's mtime (Kafka's rule)."""
        ts = self.max_timestamp
        return ts if ts >= 0 else int(os.stat(self.path).st_mtime * 1000)

    def time_waited_for_roll(self, now_ms: int, message_ts: int) -> int:
        """segment.ms clock: message time since the first batch, else wall time since creation."""
        if self._rolling_ts is None and self.size > 0:
            for b in self.walk(0):
                self._rolling_ts = b.max_timestamp
                break
        if self._rolling_ts is not None and self._rolling_ts >= 0:
            return message_ts - self._rolling_ts
        return now_ms - self.created_ms

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> tuple[int, int] | None:
        """(timestamp, offset) of the first record with time >= `timestamp` at or after
        `starting_offset` (Kafka's LogSegment.findOffsetByTimestamp), or None."""
        if not self._indexes_checked:
            self.ensure_indexes()
        _, idx_offset = self.time_index.lookup(timestamp)
        _, pos = self.index.lookup(max(idx_offset, starting_offset))
        for b in self.walk(pos):
            if b.max_timestamp < timestamp:
                continue
            for r in read_records(self.read_batch_bytes(b.position, b.size)):
                if r.timestamp >= timestamp and r.offset >= starting_offset:
                    return r.timestamp, r.offset
        return None

    # --- recovery -------------------------------------------------------------------------
    def recover(self, validate_from: int | None, truncate: bool = True) -> RecoveryResult:
        """Rebuild both indexes from the log; check batches with last offset >= `validate_from`.

        Checked batches must have magic 2, a correct CRC, sane sizes and increasing offsets;
        the first failing one and everything after it is cut off the file. With
        `validate_from=None` only structure (lengths, offsets) is checked: an index rebuild.
        With `truncate=False` a bad tail is reported but left in the file.
        """
        self.index.reset()
        self.time_index.reset()
        fd = self._fd
        file_size = os.fstat(fd).st_size
        max_ts, off_max_ts = -1, self.base_offset
        since = 0
        pos = 0
        next_offset = self.base_offset
        prev_last = self.base_offset - 1
        chunk = b""
        chunk_pos = 0
        reason = ""
        with_crc = validate_from is not None
        while pos < file_size:
            if file_size - pos < BATCH_OVERHEAD:
                reason = f"a torn batch header of {file_size - pos} bytes"
                break
            off = pos - chunk_pos
            if off + BATCH_OVERHEAD > len(chunk):
                chunk = os.pread(fd, _RECOVER_CHUNK, pos)
                chunk_pos, off = pos, 0
            base, length, magic, delta, batch_max_ts = _WALK.unpack_from(chunk, off)
            size = length + LOG_OVERHEAD
            if size < BATCH_OVERHEAD:
                reason = f"a batch size of {size} bytes, below the minimum of {BATCH_OVERHEAD}"
                break
            if size > file_size - pos:
                reason = f"a torn batch: {size} bytes announced, {file_size - pos} on disk"
                break
            if magic != CURRENT_MAGIC:
                reason = f"magic {magic}"
                break
            last = base + delta
            if base <= prev_last or delta < 0 or last - self.base_offset > _INT_MAX:
                reason = f"offsets [{base}, {last}] out of order after offset {prev_last}"
                break
            if with_crc and last >= validate_from:  # type: ignore[operator]
                if off + size > len(chunk):
                    chunk = os.pread(fd, max(_RECOVER_CHUNK, size), pos)
                    chunk_pos, off = pos, 0
                with memoryview(chunk) as mv:
                    computed = crc32c(mv[off + ATTRIBUTES_OFFSET : off + size])
                (stored,) = _CRC_AT.unpack_from(chunk, off + 17)
                if computed != stored:
                    reason = f"a corrupt batch at offset {base} (stored crc = {stored}, computed crc = {computed})"
                    break
            if batch_max_ts > max_ts:
                max_ts, off_max_ts = batch_max_ts, last
            if since > self.index_interval_bytes:
                self.index.append(last, pos)
                self.time_index.maybe_append(max_ts, off_max_ts)
                since = 0
            since += size
            prev_last = last
            next_offset = last + 1
            pos += size
        truncated = file_size - pos
        if truncate:
            self.cut(pos)
        else:
            self.size = file_size
        self.bytes_since_last_index_entry = since
        self._max_ts, self._offset_of_max_ts = max_ts, off_max_ts
        self._rolling_ts = None
        self._tail = None
        self._indexes_checked = True
        self.had_index_files = True
        return RecoveryResult(pos, truncated, next_offset, reason if truncated else "")

    def cut(self, valid_bytes: int) -> None:
        """Shorten the file to `valid_bytes` (after recover() found a bad tail there)."""
        if os.fstat(self._fd).st_size > valid_bytes:
            os.ftruncate(self._fd, valid_bytes)
        self.size = valid_bytes
        self._tail = None

    def check_indexes(self) -> None:
        """Load both indexes and sanity-check them (raises CorruptIndexError)."""
        self.index.sanity_check(self.size)
        self.time_index.sanity_check()

    def ensure_indexes(self) -> bool:
        """Check the indexes once; rebuild them from the log when missing or corrupt.

        Returns True if they were rebuilt. The rebuild only reads batch headers: data is not
        dropped here, so structural damage raises KafkaStorageError instead.
        """
        self._indexes_checked = True
        if not self.had_index_files and self.size > 0:
            log.warning("Index files of segment %s are missing; rebuilding them", self.path)
        else:
            try:
                self.check_indexes()
                return False
            except CorruptIndexError as e:
                log.warning("%s; rebuilding the indexes of %s", e, self.path)
        result = self.recover(validate_from=None, truncate=False)
        if result.truncated_bytes:
            raise KafkaStorageError(
                f"Segment {self.path} is damaged at byte {result.valid_bytes} ({result.reason}) "
                f"while rebuilding its indexes"
            )
        return True
