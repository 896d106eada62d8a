"""Leader epoch cache (KIP-101/KIP-279): which leader epoch started at which offset.

Follows Kafka 3.3's LeaderEpochFileCache: entries are kept monotonic in both epoch and start
offset, and every change is persisted to the partition's `leader-epoch-checkpoint`.
"""

from __future__ import annotations

import bisect
import logging
from typing import Callable

from pylog.log.checkpoint import EpochEntry, LeaderEpochCheckpoint

log = logging.getLogger("pylog.log")

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    """(leader epoch -> start offset) entries of one partition, backed by its checkpoint file."""

    def __init__(
        self,
        checkpoint: LeaderEpochCheckpoint | str,
        log_end_offset: Callable[[], int],
        name: str = "",
    ) -> None:
        self._checkpoint = (
            checkpoint if isinstance(checkpoint, LeaderEpochCheckpoint) else LeaderEpochCheckpoint(checkpoint)
        )
        self._log_end_offset = log_end_offset
        self._name = name
        self._entries: list[EpochEntry] = []
        self._epochs: list[int] = []  # parallel to _entries, for bisect
        for entry in self._checkpoint.read():
            self._assign(entry)

    # --- queries -------------------------------------------------------------------------
    @property
    def entries(self) -> list[EpochEntry]:
        """A copy of the entries, oldest first."""
        return list(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        """The newest epoch, or None when the cache is empty."""
        return self._epochs[-1] if self._epochs else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch in which `offset` was written (largest entry starting at or before it)."""
        starts = [e.start_offset for e in self._entries]
        i = bisect.bisect_right(starts, offset) - 1
        return self._entries[i].epoch if i >= 0 else None

    def end_offset_for(self, requested_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest epoch <= requested, end offset of that epoch).

        Kafka's rules (LeaderEpochFileCache.endOffsetFor), in order:
        * requested == -1 (UNDEFINED_EPOCH): (-1, -1).
        * requested is the latest epoch: (requested, log end offset).
        * no epoch is larger than requested (incl. an empty cache): (-1, -1).
        * requested is smaller than every cached epoch: (requested, start offset of the first
          entry) -- the data of older epochs is gone, so the follower truncates to our start.
        * otherwise: (largest epoch <= requested, start offset of the next larger epoch).
        """
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._epochs and self._epochs[-1] == requested_epoch:
            return requested_epoch, self._log_end_offset()
        higher = bisect.bisect_right(self._epochs, requested_epoch)
        if higher == len(self._epochs):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if higher == 0:
            return requested_epoch, self._entries[0].start_offset
        return self._entries[higher - 1].epoch, self._entries[higher].start_offset

    # --- updates -------------------------------------------------------------------------
    def assign(self, epoch: int, start_offset: int, sync: bool = True) -> bool:
        """Record that `epoch` starts at `start_offset`, persisting the change; True if the file was written.

        A repeat of the latest epoch at the same or a later offset is ignored. Otherwise entries
        that would break monotonicity (epoch >= new epoch or start >= new start) are removed
        from the end first, as Kafka does. With `sync` false the file is replaced but not fsynced:
        the caller must make it durable (checkpoint.sync_file) before relying on the entry.
        """
        last = self._entries[-1] if self._entries else None
        if last is not None and epoch == last.epoch and start_offset >= last.start_offset:
            return False  # the common case on every append: nothing to do
        if self._assign(EpochEntry(epoch, start_offset)):
            self._flush(sync)
            return True
        return False

    @property
    def path(self) -> str:
        """The checkpoint file."""
        return self._checkpoint.path

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        last = self._entries[-1] if self._entries else None
        if last is not None and not (entry.epoch != last.epoch or entry.start_offset < last.start_offset):
            return False
        removed: list[EpochEntry] = []
        while self._entries and (
            self._entries[-1].epoch >= entry.epoch or self._entries[-1].start_offset >= entry.start_offset
        ):
            removed.append(self._entries.pop())
            self._epochs.pop()
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            # Only non-trivial removals are worth a warning: an epoch that got no data is expected.
            log.warning(
                "[LeaderEpochCache %s] New epoch entry %s caused truncation of conflicting entries %s. "
                "Cache now contains %d entries.",
                self._name, entry, [str(e) for e in removed], len(self._entries),
            )
        self._entries.append(entry)
        self._epochs.append(entry.epoch)
        return True

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove entries starting at or after `end_offset` (the log was truncated to it)."""
        if end_offset >= 0 and self._entries and self._entries[-1].start_offset >= end_offset:
            while self._entries and self._entries[-1].start_offset >= end_offset:
                self._entries.pop()
                self._epochs.pop()
            self._flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop entries wholly before `start_offset`; the newest of them is moved to start there.

        Exclusive like Kafka's: truncate_from_start(6) keeps an entry that starts at 6.
        """
        if self._entries and self._entries[0].start_offset == start_offset and (
                len(self._entries) == 1 or self._entries[1].start_offset > start_offset):
            return  # the first entry already starts there: rewriting the same file is a needless fsync
        removed: EpochEntry | None = None
        while self._entries and self._entries[0].start_offset <= start_offset:
            removed = self._entries.pop(0)
            self._epochs.pop(0)
        if removed is not None:
            self._entries.insert(0, EpochEntry(removed.epoch, start_offset))
            self._epochs.insert(0, removed.epoch)
            self._flush()

    def clear_and_flush(self) -> None:
        """Delete all entries (the log was emptied)."""
        self._entries.clear()
        self._epochs.clear()
        self._flush()

    def _flush(self, sync: bool = True) -> None:
        self._checkpoint.write(self._entries, sync)
