"""The seam between the coordinator and the broker, and the replay that rebuilds state from the log.

The coordinator never touches partitions or files: it asks an `OffsetsLog` (implemented by the
broker over `__consumer_offsets`) whether it leads a partition, appends records there with
acks=all semantics, and reads a partition back when it becomes the leader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Iterable, Protocol

from pylog.coordinator.group.records import (
    GroupKey, GroupValue, OffsetKey, OffsetValue, RecordFormatError, decode_group_value, decode_key,
    decode_offset_value,
)
from pylog.protocol.errors import ErrorCode

Record = tuple[bytes, "bytes | None"]


class OffsetsLog(Protocol):
    """What the group coordinator may ask of the broker."""

    def num_partitions(self) -> int:
        """The partition count of `__consumer_offsets` (the topic's, once it exists)."""

    def leader_epoch(self, partition: int) -> int | None:
        """The leader epoch at which this broker became leader of `__consumer_offsets-<partition>` (a new
        value means a new leadership: reload), or None when it does not lead it."""

    async def append(self, partition: int, records: list[Record]) -> ErrorCode:
        """Append records as leader and wait until every ISR member has them (acks=all)."""

    def read(self, partition: int) -> AsyncIterator[Record]:
        """Every (key, value) record of the partition from its log start, in offset order."""


@dataclass(slots=True)
class Replayed:
    """The state a partition's records leave behind: latest value per key, tombstones applied."""

    groups: dict[str, GroupValue] = field(default_factory=dict)
    offsets: dict[str, dict[tuple[str, int], OffsetValue]] = field(default_factory=dict)
    skipped: int = 0  # records of other types (KIP-848, share groups) or unreadable ones

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """Fold one record into the state."""
        try:
            k = decode_key(key) if key is not None else None
            if isinstance(k, OffsetKey):
                per_group = self.offsets.setdefault(k.group, {})
                if value is None:
                    per_group.pop((k.topic, k.partition), None)
                else:
                    per_group[(k.topic, k.partition)] = decode_offset_value(value)
            elif isinstance(k, GroupKey):
                if value is None:
                    self.groups.pop(k.group, None)
                else:
                    self.groups[k.group] = decode_group_value(value)
            else:
                self.skipped += 1
        except (RecordFormatError, ValueError, IndexError):
            self.skipped += 1


def replay(records: Iterable[Record]) -> Replayed:
    """The state after applying `records` in order (pure; used by the loader and by tests)."""
    out = Replayed()
    for key, value in records:
        out.apply(key, value)
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


def client_error(append_error: ErrorCode) -> ErrorCode:
    """The error a client sees when the coordinator's append failed with `append_error`."""
    if append_error == ErrorCode.NONE:
        return ErrorCode.NONE
    return APPEND_ERRORS.get(append_error, ErrorCode.UNKNOWN_SERVER_ERROR)
