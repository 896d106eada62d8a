"""Per-partition producer state: what the idempotent producer's sequence checks need.

Kafka's ProducerStateManager / ProducerAppendInfo / ProducerStateEntry, for data batches: per
producer id the epoch and the metadata (sequence range, offsets, timestamp) of its last 5 batches,
so a retried batch is recognised and answered with its original offsets instead of being appended
again. Leader appends are checked (`check_client_append`); replicated and replayed batches only
update the state, as Kafka's REPLICATION origin does. A producer without state here (new, expired,
or all its batches deleted) may write with any sequence: since KIP-360 (Kafka 2.5) the broker no
longer answers UNKNOWN_PRODUCER_ID to a produce. Pure data: the snapshot files are in
producer_snapshot.py, rebuilding from the log in producer_recovery.py.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Container, Iterable, NamedTuple, Sequence

from pylog.log.errors import InvalidProducerEpochError, InvalidProducerRecordError, OutOfOrderSequenceError
from pylog.protocol.records import BatchHeader, increment_sequence

log = logging.getLogger("pylog.log")

NUM_BATCHES_TO_RETAIN = 5  # Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN (max.in.flight <= 5)
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
_INT_MAX = 2**31 - 1


def decrement_sequence(sequence: int, decrement: int) -> int:
    """The inverse of increment_sequence: wraps below 0 back to Int.MaxValue."""
    if sequence < decrement:
        return _INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """Whether `next_seq` directly follows `last_seq` (0 follows Int.MaxValue)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT_MAX)


def last_sequence(h: BatchHeader) -> int:
    """The sequence number of a batch's last record."""
    return increment_sequence(h.base_sequence, h.last_offset_delta)


class BatchMetadata(NamedTuple):
    """One appended batch of a producer: its last sequence and offset and their span."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        """Sequence of the batch's first record."""
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        """Offset of the batch's first record."""
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerEntry:
    """What a partition remembers of one producer id."""

    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    batches: list[BatchMetadata] = field(default_factory=list)  # oldest first, at most 5
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int = -1

    @property
    def last_seq(self) -> int:
        """Last sequence written under the current epoch (-1 if none)."""
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """The retained batch with exactly this epoch and sequence range, if any."""
        if epoch != self.epoch:
            return None
        for b in self.batches:
            if b.last_seq == last_seq and b.first_seq == first_seq:
                return b
        return None

    def add_batch(self, epoch: int, batch: BatchMetadata) -> None:
        """Remember a batch; a new epoch forgets the old epoch's batches."""
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches = []
        self.batches.append(batch)
        if len(self.batches) > NUM_BATCHES_TO_RETAIN:
            del self.batches[0]
        self.last_timestamp = batch.timestamp


def _check(pid: int, epoch: int, first_seq: int, state: tuple[int, int] | None, offset: int, name: str) -> None:
    """Kafka's epoch and sequence checks for a client append; `state` is (epoch, last seq) or None."""
    if state is None:
        return  # no state (new producer, or its batches were deleted): any sequence is accepted
    cur_epoch, cur_seq = state
    if epoch < cur_epoch:
        raise InvalidProducerEpochError(
            f"Epoch of producer {pid} at offset {offset} in {name} is {epoch}, which is smaller than the "
            f"last seen epoch {cur_epoch}")
    if epoch != cur_epoch:
        if first_seq != 0 and cur_epoch != NO_PRODUCER_EPOCH:
            raise OutOfOrderSequenceError(
                f"Invalid sequence number for new epoch of producer {pid} at offset {offset} in partition {name}: "
                f"{epoch} (request epoch), {first_seq} (seq. number), {cur_epoch} (current producer epoch)")
    elif cur_epoch != NO_PRODUCER_EPOCH and not in_sequence(cur_seq, first_seq):
        raise OutOfOrderSequenceError(
            f"Out of order sequence number for producer {pid} at offset {offset} in partition {name}: "
            f"{first_seq} (incoming seq. number), {cur_seq} (current end sequence number)")


class ProducerStateManager:
    """The producer entries of one partition and the offset up to which they reflect its log."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.producers: dict[int, ProducerEntry] = {}
        self.map_end_offset = 0  # the state reflects every batch below this offset
        self.last_snapshot_offset = -1

    def check_client_append(self, headers: Sequence[BatchHeader], next_offset: int,
                            from_coordinator: bool = False) -> BatchMetadata | None:
        """Validate a leader append; the original batch's metadata when it is a retry of one.

        Raises InvalidProducerEpochError, OutOfOrderSequenceError or InvalidProducerRecordError.
        Changes nothing: `update` records the batches once they are appended. A coordinator's own
        batches (transactional offset commits, Kafka's COORDINATOR origin) carry no sequence: only
        their epoch is checked, so a fenced producer's late commit is refused.
        """
        pending: dict[int, tuple[int, int]] = {}
        offset = next_offset
        for h in headers:
            pid = h.producer_id
            if pid == NO_PRODUCER_ID or h.is_control:  # markers carry no sequence (transactions come later)
                offset += h.last_offset_delta + 1
                continue
            if from_coordinator:
                entry = self.producers.get(pid)
                if entry is not None:
                    _check(pid, h.producer_epoch, 0, (entry.epoch, NO_SEQUENCE), offset, self.name)
                offset += h.last_offset_delta + 1
                continue
            if h.base_sequence < 0:
                raise InvalidProducerRecordError(
                    f"Invalid sequence number {h.base_sequence} in record batch with producerId {pid}")
            last_seq = last_sequence(h)
            entry = self.producers.get(pid)
            if entry is not None:
                dup = entry.find_duplicate(h.producer_epoch, h.base_sequence, last_seq)
                if dup is not None:
                    return dup
            state = pending.get(pid)
            if state is None and entry is not None:
                state = (entry.epoch, entry.last_seq)
            _check(pid, h.producer_epoch, h.base_sequence, state, offset, self.name)
            pending[pid] = (h.producer_epoch, last_seq)
            offset += h.last_offset_delta + 1
        return None

    def update(self, headers: Iterable[BatchHeader], replicated: bool = False) -> None:
        """Record appended batches (their headers carry their offsets); warn on an older epoch if replicated."""
        end = self.map_end_offset
        for h in headers:
            end = h.base_offset + h.last_offset_delta + 1
            pid = h.producer_id
            if pid == NO_PRODUCER_ID:
                continue
            if h.is_control:  # a marker written by the coordinator after an epoch bump fences the older epoch here
                entry = self.producers.get(pid)
                if entry is not None and h.producer_epoch > entry.epoch:
                    entry.epoch, entry.batches = h.producer_epoch, []
                continue
            entry = self.producers.get(pid)
            if entry is None:
                entry = self.producers[pid] = ProducerEntry(pid)
            elif replicated and h.producer_epoch < entry.epoch:
                log.warning("[ProducerStateManager partition=%s] Epoch of producer %d at offset %d is %d, "
                            "older than the last seen epoch %d", self.name, pid, h.base_offset, h.producer_epoch,
                            entry.epoch)
            entry.add_batch(h.producer_epoch, BatchMetadata(
                last_sequence(h), h.base_offset + h.last_offset_delta, h.last_offset_delta, h.max_timestamp))
        self.map_end_offset = max(self.map_end_offset, end)

    def note_marker(self, producer_id: int, coordinator_epoch: int) -> None:
        """Remember the coordinator epoch of the producer's latest marker (older coordinators are then fenced)."""
        entry = self.producers.get(producer_id)
        if entry is not None and coordinator_epoch > entry.coordinator_epoch:
            entry.coordinator_epoch = coordinator_epoch

    def load_entries(self, entries: Iterable[ProducerEntry], offset: int) -> None:
        """Replace the state with a snapshot's entries, taken at `offset`."""
        self.producers = {e.producer_id: e for e in entries}
        self.map_end_offset = offset
        self.last_snapshot_offset = offset

    def clear(self, offset: int) -> None:
        """Forget every producer; the (empty) state reflects the log up to `offset`."""
        self.producers = {}
        self.map_end_offset = offset

    def remove_expired(self, now_ms: int, expiration_ms: int, open_txns: Container[int] = ()) -> int:
        """Drop producers idle for `expiration_ms` (producer.id.expiration.ms); how many went.

        A producer with a transaction still open on the partition (`open_txns`, the log's) is kept, as
        Kafka keeps an entry with a current transaction: its marker must still find it.
        """
        expired = [pid for pid, e in self.producers.items()
                   if e.current_txn_first_offset < 0 and pid not in open_txns
                   and now_ms - e.last_timestamp >= expiration_ms]
        for pid in expired:
            del self.producers[pid]
        return len(expired)
