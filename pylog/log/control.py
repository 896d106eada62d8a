"""Control batches: the COMMIT/ABORT markers that end a transaction on a partition, in Kafka's format.

A marker is one uncompressed CREATE_TIME magic-2 batch with the producer's id and epoch, base
sequence -1, the transactional and control attributes set, and a single record whose key is
{version int16 = 0, type int16} (ABORT = 0, COMMIT = 1) and whose value is {version int16 = 0,
coordinator_epoch int32} (ControlRecordType.java, EndTransactionMarker.java).
"""

from __future__ import annotations

import enum
import struct
from typing import NamedTuple

from pylog.protocol.records import BatchHeader, build_batch, read_records

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")
CONTROL_VERSION = 0


class ControlType(enum.IntEnum):
    """ControlRecordType ids; other ids (KRaft's) are not transaction markers."""

    ABORT = 0
    COMMIT = 1


class Marker(NamedTuple):
    """What a transaction marker says: who, which outcome, and which coordinator epoch wrote it."""

    producer_id: int
    producer_epoch: int
    control_type: ControlType
    coordinator_epoch: int


class ControlRecordError(ValueError):
    """A control batch that is not a transaction marker we can read."""


def build_marker(m: Marker, timestamp_ms: int | None = None, base_offset: int = 0, leader_epoch: int = -1) -> bytes:
    """One marker batch, ready for offset assignment by the partition leader."""
    key = _KEY.pack(CONTROL_VERSION, int(m.control_type))
    value = _VALUE.pack(CONTROL_VERSION, m.coordinator_epoch)
    return build_batch([(key, value, (), timestamp_ms)], base_offset, leader_epoch,
                       producer_id=m.producer_id, producer_epoch=m.producer_epoch, base_sequence=-1,
                       is_transactional=True, is_control=True)


def control_type(key: bytes | None) -> int:
    """The type id in a control record key; ControlRecordError if the key is not one."""
    if key is None or len(key) < _KEY.size:
        raise ControlRecordError("control record key shorter than 4 bytes")
    version, kind = _KEY.unpack_from(key)
    if version < 0:
        raise ControlRecordError(f"bad control record key version {version}")
    return kind


def read_marker(header: BatchHeader, batch: bytes | bytearray | memoryview) -> Marker | None:
    """The marker a control batch holds; None for a control batch that is not COMMIT/ABORT (or is empty)."""
    if not header.is_control:
        raise ControlRecordError("not a control batch")
    records = read_records(batch)
    if not records:
        return None  # the cleaner emptied it
    kind = control_type(records[0].key)
    if kind not in (ControlType.ABORT, ControlType.COMMIT):
        return None
    value = records[0].value
    if value is None or len(value) < _VALUE.size:
        raise ControlRecordError("transaction marker value shorter than 6 bytes")
    return Marker(header.producer_id, header.producer_epoch, ControlType(kind), _VALUE.unpack_from(value)[1])
