"""Open transactions on one partition, and the last stable offset (LSO) they hold back.

The LSO is "the first offset such that all lower offsets have been decided": the smallest first
offset of a still-open transaction, never above the high watermark, and the high watermark when
nothing is open (Kafka's UnifiedLog.lastStableOffset). A marker closes its producer's open
transaction; an ABORT becomes an entry of the segment's `.txnindex`, carrying the LSO right after
it (ProducerStateManager.lastStableOffset(completedTxn)).
"""

from __future__ import annotations

from typing import NamedTuple

from pylog.log.control import ControlType, Marker
from pylog.log.txn_index import AbortedTxn
from pylog.protocol.records import BatchHeader


class CompletedTxn(NamedTuple):
    """A transaction a marker closed: producer, first offset, marker offset, outcome."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


class OpenTransactions:
    """The first offset of each producer's open transaction on a partition."""

    def __init__(self) -> None:
        self.first_offsets: dict[int, int] = {}

    def on_transactional_batch(self, producer_id: int, base_offset: int) -> None:
        """A transactional data batch was appended: it opens a transaction unless one is already open."""
        self.first_offsets.setdefault(producer_id, base_offset)

    def on_marker(self, producer_id: int, marker_offset: int, is_abort: bool) -> CompletedTxn | None:
        """A marker was appended; the transaction it closes, or None if the producer had none open."""
        first = self.first_offsets.pop(producer_id, None)
        if first is None:
            return None  # a marker without data on this partition: no index entry (as Kafka)
        return CompletedTxn(producer_id, first, marker_offset, is_abort)

    def on_batch(self, header: BatchHeader, marker: Marker | None) -> tuple[CompletedTxn, AbortedTxn | None] | None:
        """Fold one appended batch (leader, follower or recovery replay, in offset order) into the state.

        `marker` is the decoded marker of a control batch (None for data batches and for control
        batches that are not COMMIT/ABORT). Returns the transaction a marker closed, with its
        `.txnindex` entry when it was aborted.
        """
        if header.is_control:
            if marker is None:
                return None
            done = self.on_marker(header.producer_id, header.base_offset, marker.control_type is ControlType.ABORT)
            if done is None:
                return None
            return done, (self.aborted_entry(done) if done.is_aborted else None)
        if header.is_transactional:
            self.on_transactional_batch(header.producer_id, header.base_offset)
        return None

    def first_unstable_offset(self) -> int | None:
        """The smallest first offset of an open transaction, or None."""
        return min(self.first_offsets.values(), default=None)

    def last_stable_offset(self, high_watermark: int) -> int:
        """The LSO: read_committed fetches and ListOffsets(latest) stop here."""
        first = self.first_unstable_offset()
        return high_watermark if first is None else min(first, high_watermark)

    def aborted_entry(self, txn: CompletedTxn) -> AbortedTxn:
        """The `.txnindex` entry of an aborted transaction, called once its marker closed it."""
        lso = self.first_unstable_offset()
        return AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset,
                          txn.last_offset + 1 if lso is None else lso)

    def truncate_to(self, offset: int) -> None:
        """Forget transactions that began at or above `offset` (their data was truncated away)."""
        self.first_offsets = {p: o for p, o in self.first_offsets.items() if o < offset}
