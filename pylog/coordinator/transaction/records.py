"""`__transaction_state` records in Kafka's schemas (TransactionLogKey.json, TransactionLogValue.json).

Key: int16 version 0, then the transactional id (int16-length string). Value: int16 version, then
ProducerId int64, ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus int8,
TransactionPartitions (nullable array of {Topic string, PartitionIds [int32]}; null when Empty),
TransactionLastUpdateTimestampMs int64, TransactionStartTimestampMs int64. Version 1 is flexible
(compact strings and arrays, tagged fields: PreviousProducerId 0, NextProducerId 1,
ClientTransactionVersion 2). We write v0, as Kafka does unless transaction.version >= 1, and read
both. A null value is the tombstone of an expired transactional id.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from pylog.protocol.codec import MalformedRequest, read_uvarint, uvarint_bytes

_I8, _I16, _I32, _I64 = (struct.Struct(f) for f in (">b", ">h", ">i", ">q"))
KEY_VERSION = 0
VALUE_VERSION = 0


class RecordFormatError(ValueError):
    """A key or value that is not a transaction log record we can read."""


@dataclass(frozen=True)
class TxnLogValue:
    """One TransactionLogValue; `partitions` is None where Kafka writes null (state Empty)."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: dict[str, tuple[int, ...]] | None
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0


def _string(s: str) -> bytes:
    b = s.encode()
    return _I16.pack(len(b)) + b


def encode_key(transactional_id: str) -> bytes:
    """TransactionLogKey v0."""
    return _I16.pack(KEY_VERSION) + _string(transactional_id)


def encode_value(v: TxnLogValue, version: int = VALUE_VERSION) -> bytes:
    """TransactionLogValue v0, or v1 (flexible; what Kafka writes once transaction.version >= 1) with its
    tagged fields where they differ from their defaults."""
    flexible = version >= 1
    count = (lambda n: uvarint_bytes(n + 1)) if flexible else _I32.pack
    out = bytearray(_I16.pack(version))
    out += _I64.pack(v.producer_id) + _I16.pack(v.producer_epoch) + _I32.pack(v.timeout_ms) + _I8.pack(v.status)
    if v.partitions is None:
        out += b"\x00" if flexible else _I32.pack(-1)
    else:
        out += count(len(v.partitions))
        for topic in sorted(v.partitions):
            ids = v.partitions[topic]
            raw = topic.encode()
            out += (uvarint_bytes(len(raw) + 1) + raw) if flexible else _string(topic)
            out += count(len(ids)) + b"".join(_I32.pack(p) for p in ids)
            if flexible:
                out.append(0)
    out += _I64.pack(v.last_update_ms) + _I64.pack(v.start_ms)
    if flexible:
        tags = [(tag, value) for tag, value, default in (
            (0, _I64.pack(v.previous_producer_id), v.previous_producer_id == -1),
            (1, _I64.pack(v.next_producer_id), v.next_producer_id == -1),
            (2, _I16.pack(v.client_transaction_version), v.client_transaction_version == 0)) if not default]
        out += uvarint_bytes(len(tags))
        for tag, value in tags:
            out += uvarint_bytes(tag) + uvarint_bytes(len(value)) + value
    return bytes(out)


class _Reader:
    """Reads the fields in order; `flexible` switches lengths to compact varints (v1)."""

    def __init__(self, data: bytes, flexible: bool) -> None:
        self.data, self.pos, self.flexible = data, 2, flexible

    def fixed(self, s: struct.Struct) -> int:
        if self.pos + s.size > len(self.data):
            raise RecordFormatError("record ends early")
        (v,) = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return v

    def uvarint(self) -> int:
        try:
            v, self.pos = read_uvarint(self.data, self.pos)
        except MalformedRequest as e:
            raise RecordFormatError(str(e)) from None
        return v

    def length(self) -> int:
        return self.uvarint() - 1 if self.flexible else self.fixed(_I32)

    def string(self) -> str:
        n = self.uvarint() - 1 if self.flexible else self.fixed(_I16)
        if n < 0 or self.pos + n > len(self.data):
            raise RecordFormatError("bad string length")
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def tags(self) -> dict[int, bytes]:
        out = {}
        if self.flexible:
            for _ in range(self.uvarint()):
                tag, size = self.uvarint(), self.uvarint()
                out[tag] = self.data[self.pos:self.pos + size]
                self.pos += size
        return out


def _version(data: bytes, kind: str, highest: int) -> int:
    if len(data) < 2:
        raise RecordFormatError(f"empty {kind}")
    version = _I16.unpack_from(data)[0]
    if not 0 <= version <= highest:
        raise RecordFormatError(f"unknown {kind} version {version}")
    return version


def decode_key(data: bytes) -> str:
    """The transactional id of a TransactionLogKey v0."""
    _version(data, "TransactionLogKey", KEY_VERSION)
    return _Reader(data, False).string()


def _partitions(r: _Reader) -> dict[str, tuple[int, ...]] | None:
    n = r.length()
    if n < 0:
        return None
    out = {}
    for _ in range(n):
        topic = r.string()
        out[topic] = tuple(r.fixed(_I32) for _ in range(max(r.length(), 0)))
        r.tags()
    return out


def decode_value(data: bytes) -> TxnLogValue:
    """A TransactionLogValue v0 or v1."""
    r = _Reader(data, _version(data, "TransactionLogValue", 1) >= 1)
    pid, epoch, timeout, status = r.fixed(_I64), r.fixed(_I16), r.fixed(_I32), r.fixed(_I8)
    partitions = _partitions(r)
    update_ms, start_ms = r.fixed(_I64), r.fixed(_I64)
    tags = r.tags()

    def tagged(tag: int, s: struct.Struct, default: int) -> int:
        return s.unpack(tags[tag])[0] if tag in tags and len(tags[tag]) == s.size else default

    return TxnLogValue(pid, epoch, timeout, status, partitions, update_ms, start_ms,
                       tagged(0, _I64, -1), tagged(1, _I64, -1), tagged(2, _I16, 0))
