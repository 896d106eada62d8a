"""Sparse segment indexes in Kafka's file formats.

`.index` (OffsetIndex): 8-byte entries, int32 offset relative to the segment base + int32 byte
position of a batch in the `.log`. `.timeindex` (TimeIndex): 12-byte entries, int64 timestamp +
int32 relative offset. Kafka preallocates these files and trims them on close; we simply append
entries, so the file on disk is always exactly the entries (Kafka's trimmed format).

The entries live in `array`s loaded lazily on first use (most segments of a long log are never
looked up), with bisect for lookups.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
from array import array
from bisect import bisect_right

from pylog.log.errors import CorruptIndexError

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_LITTLE = sys.byteorder == "little"


class _IndexFile:
    """The file side shared by both indexes: lazy append fd, truncation, flush, close."""

    ENTRY_SIZE = 0
    _SIZE_ERROR = ""  # Kafka's message for a file that is not a whole number of entries

    def __init__(self, path: str, base_offset: int, max_entries: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._fd = -1
        self._loaded = False
        self._rel = array("i")  # offsets relative to base_offset, in both index kinds

    def _parse(self, data: bytes) -> None:
        raise NotImplementedError

    def _columns(self) -> tuple[array, ...]:  # type: ignore[type-arg]
        raise NotImplementedError

    def _keep(self, keep: int) -> None:
        """Drop the entries from index `keep` on, in memory and in the file."""
        if keep < len(self._rel):
            for column in self._columns():
                del column[keep:]
            self._truncate_file(keep)

    def reset(self) -> None:
        """Remove all entries (before a rebuild)."""
        for column in self._columns():
            del column[:]
        self._loaded = True
        self._truncate_file(0)

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        data = self._read_file()
        if len(data) % self.ENTRY_SIZE:
            raise CorruptIndexError(self._SIZE_ERROR.format(path=self.path, size=len(data)))
        self._parse(data)
        self._loaded = True

    def load(self) -> None:
        """Read the file now (normally done on first use)."""
        self._ensure_loaded()

    @property
    def entries(self) -> int:
        """Number of entries."""
        self._ensure_loaded()
        return len(self._rel)

    @property
    def is_full(self) -> bool:
        """Whether segment.index.bytes is reached (the segment must roll)."""
        self._ensure_loaded()
        return len(self._rel) >= self.max_entries

    def _append_bytes(self, data: bytes) -> None:
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(self._fd, data)

    def _read_file(self) -> bytes:
        try:
            with open(self.path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return b""

    def _truncate_file(self, entries: int) -> None:
        size = entries * self.ENTRY_SIZE
        if os.path.exists(self.path):
            os.truncate(self.path, size)

    def flush(self) -> None:
        """fsync the file if we have written to it (a concurrently closed fd is skipped)."""
        fd = self._fd
        if fd >= 0:
            try:
                os.fsync(fd)
            except OSError as e:
                if e.errno != errno.EBADF:
                    raise

    def close(self) -> None:
        """Close the append fd (the file stays)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def delete(self) -> None:
        """Close and remove the file."""
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def exists(self) -> bool:
        """Whether the file is on disk."""
        return os.path.exists(self.path)


class OffsetIndex(_IndexFile):
    """offset -> byte position of the batch whose last offset it is (sparse)."""

    ENTRY_SIZE = 8
    _SIZE_ERROR = "Index file {path} is corrupt, found {size} bytes which is neither positive nor a multiple of 8."

    def __init__(self, path: str, base_offset: int, max_entries: int = 10 * 1024 * 1024 // 8) -> None:
        super().__init__(path, base_offset, max_entries)
        self._pos = array("i")

    def _parse(self, data: bytes) -> None:
        both = array("i")
        both.frombytes(data)
        if _LITTLE:
            both.byteswap()
        self._rel, self._pos = both[0::2], both[1::2]

    def _columns(self) -> tuple[array, ...]:  # type: ignore[type-arg]
        return self._rel, self._pos

    def sanity_check(self, log_size: int) -> None:
        """Raise CorruptIndexError unless offsets and positions increase and fit the log."""
        self._ensure_loaded()
        rel, pos = self._rel, self._pos
        n = len(rel)
        if n == 0:
            return
        if rel[-1] < 0:
            raise CorruptIndexError(
                f"Corrupt index found, index file ({self.path}) has non-zero size but the last "
                f"offset is {self.base_offset + rel[-1]} which is less than the base offset "
                f"{self.base_offset}."
            )
        if pos[-1] >= log_size or rel[0] < 0 or pos[0] < 0:
            raise CorruptIndexError(f"Corrupt index found, index file ({self.path}) points beyond its log")
        for i in range(1, n):
            if rel[i] <= rel[i - 1] or pos[i] <= pos[i - 1]:
                raise CorruptIndexError(
                    f"Corrupt index found, index file ({self.path}) entry {i} does not increase"
                )

    def entry(self, i: int) -> tuple[int, int]:
        """The i-th entry as (absolute offset, position)."""
        self._ensure_loaded()
        return self.base_offset + self._rel[i], self._pos[i]

    @property
    def last_entry(self) -> tuple[int, int]:
        """The last entry, or (base offset, 0) when empty."""
        self._ensure_loaded()
        if not self._rel:
            return self.base_offset, 0
        return self.base_offset + self._rel[-1], self._pos[-1]

    def lookup(self, offset: int) -> tuple[int, int]:
        """The last entry with offset <= `offset`, or (base offset, 0): where to start scanning."""
        self._ensure_loaded()
        i = bisect_right(self._rel, offset - self.base_offset) - 1
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + self._rel[i], self._pos[i]

    def boundary_before(self, position_limit: int, offset_limit: int | None) -> int | None:
        """The last indexed batch position <= `position_limit` whose batch (and so every earlier
        one) ends below `offset_limit`; None if there is none."""
        self._ensure_loaded()
        i = bisect_right(self._pos, position_limit) - 1
        if offset_limit is not None:
            i = min(i, bisect_right(self._rel, offset_limit - self.base_offset - 1) - 1)
        return self._pos[i] if i >= 0 else None

    def append(self, offset: int, position: int) -> None:
        """Add an entry; offsets must increase."""
        self._ensure_loaded()
        rel = offset - self.base_offset
        if self._rel and rel <= self._rel[-1]:
            raise ValueError(
                f"Attempt to append an offset ({offset}) to position {len(self._rel)} no larger than "
                f"the last offset appended ({self.base_offset + self._rel[-1]}) to {self.path}."
            )
        self._append_bytes(_OFFSET_ENTRY.pack(rel, position))
        self._rel.append(rel)
        self._pos.append(position)

    def truncate_to(self, offset: int) -> None:
        """Remove entries with offset >= `offset`."""
        self._ensure_loaded()
        self._keep(bisect_right(self._rel, offset - self.base_offset - 1))


class TimeIndex(_IndexFile):
    """max timestamp so far -> offset of the batch that carried it (sparse, increasing)."""

    ENTRY_SIZE = 12
    _SIZE_ERROR = (
        "Time index file {path} is corrupt, found {size} bytes which is neither positive nor a multiple of 12."
    )

    def __init__(self, path: str, base_offset: int, max_entries: int = 10 * 1024 * 1024 // 12) -> None:
        super().__init__(path, base_offset, max_entries)
        self._ts = array("q")

    def _parse(self, data: bytes) -> None:
        ts, rel = array("q"), array("i")
        for t, r in _TIME_ENTRY.iter_unpack(data):
            ts.append(t)
            rel.append(r)
        self._ts, self._rel = ts, rel

    def _columns(self) -> tuple[array, ...]:  # type: ignore[type-arg]
        return self._ts, self._rel

    def sanity_check(self) -> None:
        """Raise CorruptIndexError unless timestamps and offsets never decrease."""
        self._ensure_loaded()
        ts, rel = self._ts, self._rel
        if not ts:
            return
        if ts[-1] < ts[0]:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({self.path}) has non-zero size but the "
                f"last timestamp is {ts[-1]} which is less than the first timestamp {ts[0]}"
            )
        if rel[-1] < 0:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({self.path}) has non-zero size but the "
                f"last offset is {self.base_offset + rel[-1]} and the base offset is {self.base_offset}"
            )
        for i in range(1, len(ts)):
            if ts[i] <= ts[i - 1] or rel[i] < rel[i - 1]:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.path}) entry {i} does not increase"
                )

    def entry(self, i: int) -> tuple[int, int]:
        """The i-th entry as (timestamp, absolute offset)."""
        self._ensure_loaded()
        return self._ts[i], self.base_offset + self._rel[i]

    @property
    def last_entry(self) -> tuple[int, int]:
        """The last entry, or (-1, base offset) when empty."""
        self._ensure_loaded()
        if not self._ts:
            return -1, self.base_offset
        return self._ts[-1], self.base_offset + self._rel[-1]

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """The last entry with timestamp <= `timestamp`, or (-1, base offset)."""
        self._ensure_loaded()
        i = bisect_right(self._ts, timestamp) - 1
        if i < 0:
            return -1, self.base_offset
        return self._ts[i], self.base_offset + self._rel[i]

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) if the timestamp is larger than the last entry's (Kafka's rule)."""
        self._ensure_loaded()
        if not skip_full_check and len(self._ts) >= self.max_entries:
            raise ValueError(f"Attempt to append to a full time index (size = {len(self._ts)}).")
        last_ts = self._ts[-1] if self._ts else -1
        if self._rel and offset - self.base_offset < self._rel[-1]:
            raise ValueError(
                f"Attempt to append an offset ({offset}) to slot {len(self._ts)} no larger than the "
                f"last offset appended ({self.base_offset + self._rel[-1]}) to {self.path}."
            )
        if timestamp > last_ts:
            rel = offset - self.base_offset
            self._append_bytes(_TIME_ENTRY.pack(timestamp, rel))
            self._ts.append(timestamp)
            self._rel.append(rel)

    def truncate_to(self, offset: int) -> None:
        """Remove entries with offset >= `offset`."""
        self._ensure_loaded()
        rel = offset - self.base_offset
        keep = len(self._rel)
        while keep and self._rel[keep - 1] >= rel:  # offsets are non-decreasing
            keep -= 1
        self._keep(keep)
