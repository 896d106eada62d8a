"""A log's segments in offset order, with their base offsets kept in step for lookups.

One Log owns each list and is the only one to change it, through the operations here; others
get a snapshot (Log.segments). Keeping the base offsets beside the segments (for bisect)
is this class's invariant, so no caller has to remember it.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Callable, Iterable, Iterator, Sequence, overload

from pylog.log.results import FileSlice, OffsetTimestamp
from pylog.log.segment import LogSegment
from pylog.log.txn_index import AbortedTxn, collect_across


class SegmentList(Sequence[LogSegment]):
    """Never empty: the last segment is the active one, the one appends go to."""

    def __init__(self, segments: Iterable[LogSegment]) -> None:
        self._segments = list(segments)
        if not self._segments:
            raise ValueError("A log has at least one segment")
        self._bases = [s.base_offset for s in self._segments]

    def __len__(self) -> int:
        return len(self._segments)

    @overload
    def __getitem__(self, i: int) -> LogSegment: ...

    @overload
    def __getitem__(self, i: slice) -> list[LogSegment]: ...

    def __getitem__(self, i: int | slice) -> LogSegment | list[LogSegment]:
        return self._segments[i]

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self._segments)

    @property
    def active(self) -> LogSegment:
        """The last segment."""
        return self._segments[-1]

    def floor_index(self, offset: int) -> int:
        """The index of the segment holding `offset`: the last with base <= offset (0 if none)."""
        return max(bisect_right(self._bases, offset) - 1, 0)

    def read(
        self, start_offset: int, max_bytes: int, max_offset: int | None, min_one: bool, inline_bytes: int
    ) -> list[FileSlice | bytes]:
        """The batches of Log.read, from the segment holding `start_offset` on (see there)."""
        segments = self._segments
        i = self.floor_index(start_offset)
        slices: list[FileSlice | bytes] = []
        remaining = max_bytes
        while i < len(segments):
            seg = segments[i]
            pos, size, limit_hit = seg.read(start_offset, remaining, max_offset, min_one and not slices)
            if size:
                slices.append(seg.read_batch_bytes(pos, size) if size <= inline_bytes else
                              FileSlice(seg.path, pos, size, seg.inode))
                remaining -= size
            if limit_hit or remaining <= 0:
                break
            i += 1
        return slices

    def find_by_timestamp(self, timestamp: int, log_start_offset: int) -> OffsetTimestamp | None:
        """(offset, timestamp) of the first record at or after `log_start_offset` with time >= `timestamp`."""
        for seg in self._segments:
            if seg.size and seg.largest_timestamp() >= timestamp:
                found = seg.find_offset_by_timestamp(timestamp, log_start_offset)
                return None if found is None else OffsetTimestamp(found[1], found[0])
        return None

    def aborted_txns(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [fetch_offset, upper_bound), from the segments' `.txnindex`."""
        i = self.floor_index(fetch_offset)
        return collect_across((s.txn_index.entries for s in self._segments[i:]), fetch_offset, upper_bound)

    def append(self, seg: LogSegment) -> None:
        """Add a new active segment; its base must be above every other."""
        if seg.base_offset <= self._bases[-1]:
            raise ValueError(f"Segment base {seg.base_offset} is not above the active segment's {self._bases[-1]}")
        self._segments.append(seg)
        self._bases.append(seg.base_offset)

    def truncate_after(self, offset: int) -> LogSegment:
        """Delete (files too) every segment based above `offset`, always keeping the first; the new last."""
        while len(self._segments) > 1 and self._bases[-1] > offset:
            self._bases.pop()
            self._segments.pop().delete()
        return self._segments[-1]

    def reset(self, make: Callable[[], LogSegment]) -> None:
        """Delete every segment (files too), then start over with the one `make` creates."""
        for seg in self._segments:  # first: the new segment may reuse an old one's file names
            seg.delete()
        seg = make()
        self._segments = [seg]
        self._bases = [seg.base_offset]

    def remove_oldest(self, n: int) -> list[LogSegment]:
        """Take the first `n` segments out of the list (never the active one) and return them."""
        if not 0 <= n < len(self._segments):
            raise ValueError(f"Cannot remove {n} of {len(self._segments)} segments: the active one stays")
        removed = self._segments[:n]
        del self._segments[:n]
        del self._bases[:n]
        return removed

    def index_of_run(self, run: Sequence[LogSegment]) -> int:
        """Where the adjacent segments `run` (the same objects) sit in the list, -1 if they don't."""
        if not run:
            return -1
        for i, seg in enumerate(self._segments):
            if seg is run[0]:
                window = self._segments[i : i + len(run)]
                return i if len(window) == len(run) and all(a is b for a, b in zip(window, run)) else -1
        return -1

    def replace_run(self, run: Sequence[LogSegment], new: LogSegment) -> None:
        """Put `new` in place of the adjacent segments `run`, which must be in the list (files untouched)."""
        i = self.index_of_run(run)
        if i < 0:
            raise ValueError("The segments to replace are not in the log")
        self._segments[i : i + len(run)] = [new]
        self._bases[i : i + len(run)] = [new.base_offset]
