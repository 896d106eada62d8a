"""The seam between the coordinator and the broker, and the replay that rebuilds state from the log.

The coordinator never touches partitions or files: it asks an `OffsetsLog` (implemented by the
broker over `__consumer_offsets`) whether it leads a partition, appends records there with
acks=all semantics, and reads a partition back when it becomes the leader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Iterable, NamedTuple, Protocol

from pylog.coordinator.consumer.records import KEY_VERSIONS, ConsumerRecordError, ConsumerReplay, key_version
from pylog.coordinator.group.pending import PendingTxnOffsets, TopicPartition, apply_commit, complete
from pylog.coordinator.group.records import (
    GroupKey, GroupValue, OffsetKey, OffsetValue, RecordFormatError, decode_group_value, decode_key,
    decode_offset_value,
)
from pylog.protocol.errors import ErrorCode

Record = tuple[bytes, "bytes | None"]


class StoredRecord(NamedTuple):
    """One record of `__consumer_offsets` as the loader sees it, with what its batch says about it."""

    key: bytes | None
    value: bytes | None
    batch_offset: int = -1  # the base offset of its batch: commits are ordered by it, as in Kafka
    producer_id: int = -1
    transactional: bool = False  # an offset commit of an open transaction: pending until its marker
    marker: bool | None = None  # a transaction marker of `producer_id`: True COMMIT, False ABORT


class OffsetsLog(Protocol):
    """What the group coordinator may ask of the broker."""

    def num_partitions(self) -> int:
        """The partition count of `__consumer_offsets` (the topic's, once it exists)."""

    def leader_epoch(self, partition: int) -> int | None:
        """The leader epoch at which this broker became leader of `__consumer_offsets-<partition>` (a new
        value means a new leadership: reload), or None when it does not lead it."""

    async def append(self, partition: int, records: list[Record]) -> ErrorCode:
        """Append records as leader and wait until every ISR member has them (acks=all)."""

    async def append_records(self, partition: int, records: list[Record],
                             producer: tuple[int, int] | None = None) -> tuple[ErrorCode, int]:
        """`append`, also answering the batch's base offset (-1 on error); with `producer` (id, epoch) the
        batch is transactional, written with that producer's id and epoch so its marker applies to it."""

    def read(self, partition: int) -> AsyncIterator[StoredRecord]:
        """Every record (and transaction marker) of the partition from its log start, in offset order."""


@dataclass(slots=True)
class Replayed:
    """The state a partition's records leave behind: latest value per key, tombstones applied."""

    groups: dict[str, GroupValue] = field(default_factory=dict)
    offsets: dict[str, dict[TopicPartition, OffsetValue]] = field(default_factory=dict)
    positions: dict[str, dict[TopicPartition, int]] = field(default_factory=dict)
    pending: PendingTxnOffsets = field(default_factory=PendingTxnOffsets)
    last_offset: int = -1  # the highest batch offset read: markers past it were not seen
    consumer: ConsumerReplay = field(default_factory=ConsumerReplay)  # KIP-848 groups (key versions 3-8)
    skipped: int = 0  # records of other types (share groups) or unreadable ones

    def apply(self, key: bytes | None, value: bytes | None, batch_offset: int = -1, producer_id: int = -1,
              transactional: bool = False, marker: bool | None = None) -> None:
        """Fold one record (the fields of a StoredRecord) into the state."""
        self.last_offset = max(self.last_offset, batch_offset)
        if marker is not None:
            complete(self.pending, self.offsets, self.positions, producer_id, marker)
            return
        try:
            if key is not None and len(key) >= 2 and key_version(key) in KEY_VERSIONS:
                self.consumer.apply(key, value)
                return
            k = decode_key(key) if key is not None else None
            if isinstance(k, OffsetKey):
                tp = (k.topic, k.partition)
                if transactional:
                    if value is None:
                        self.pending.remove(producer_id, k.group, tp)
                    else:
                        self.pending.add(producer_id, k.group, tp, decode_offset_value(value), batch_offset)
                elif value is None:  # deleted or expired: the coordinator dropped pending offsets with it
                    self.offsets.setdefault(k.group, {}).pop(tp, None)
                    self.positions.get(k.group, {}).pop(tp, None)
                    self.pending.discard(k.group, [tp])
                else:
                    apply_commit(self.offsets, self.positions, k.group, tp, decode_offset_value(value), batch_offset)
            elif isinstance(k, GroupKey):
                if value is None:
                    self.groups.pop(k.group, None)
                    self.pending.drop_groups({k.group})
                else:
                    self.groups[k.group] = decode_group_value(value)
            else:
                self.skipped += 1
        except (RecordFormatError, ConsumerRecordError, ValueError, IndexError):
            self.skipped += 1


def replay(records: Iterable[Record | StoredRecord]) -> Replayed:
    """The state after applying `records` in order (pure; used by the loader and by tests)."""
    out = Replayed()
    for r in records:
        out.apply(*r)
    return out


APPEND_ERRORS: dict[ErrorCode, ErrorCode] = {
    # How Kafka's coordinator reports a failed write of its own records to clients.
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
}


def client_error(append_error: ErrorCode, transactional: bool = False) -> ErrorCode:
    """The error a client sees when the coordinator's append failed with `append_error` (a transactional
    commit also passes the producer's own fencing errors through, as Kafka does)."""
    if append_error == ErrorCode.NONE:
        return ErrorCode.NONE
    if transactional and append_error in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED):
        return append_error
    return APPEND_ERRORS.get(append_error, ErrorCode.UNKNOWN_SERVER_ERROR)
