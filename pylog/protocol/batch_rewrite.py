"""Rewriting a v2 batch with fewer records, as Kafka's log cleaner does (MemoryRecords.filterTo).

A rewritten batch keeps the original base offset, last offset delta, partition leader epoch,
producer id/epoch, base sequence and attributes, so offsets never move and a producer's last
sequence survives compaction. Only the record count, the records, the timestamps and -- when
the cleaner stamps one (KIP-534) -- the delete horizon change. Records are re-encoded here
(not with kafka-python's builder) because the base timestamp may be the delete horizon rather
than the first record's timestamp, which the timestamp deltas must then be relative to.
"""

from __future__ import annotations

import struct
from typing import Sequence

from pylog.protocol.records import (
    BATCH_OVERHEAD,
    COMPRESSION_MASK,
    CONTROL_MASK,
    CRC_OFFSET,
    CURRENT_MAGIC,
    DELETE_HORIZON_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    BatchHeader,
    Record,
    compress,
    compute_crc,
)

_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")


def _uvarint(n: int, out: bytearray) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _varint(n: int, out: bytearray) -> None:
    _uvarint((n << 1) ^ (n >> 63), out)  # zigzag, as Kafka's ByteUtils.writeVarlong


def _bytes_field(data: bytes | None, out: bytearray) -> None:
    if data is None:
        _varint(-1, out)
    else:
        _varint(len(data), out)
        out += data


def encode_record(record: Record, base_offset: int, base_timestamp: int) -> bytes:
    """One v2 record (length-prefixed) with deltas relative to the batch's base fields."""
    body = bytearray(b"\x00")  # record attributes: unused in v2
    _varint(record.timestamp - base_timestamp, body)
    _varint(record.offset - base_offset, body)
    _bytes_field(record.key, body)
    _bytes_field(record.value, body)
    _varint(len(record.headers), body)
    for name, value in record.headers:
        _bytes_field(name.encode(), body)
        _bytes_field(value, body)
    out = bytearray()
    _varint(len(body), out)
    return bytes(out + body)


def _pack(h: BatchHeader, attributes: int, base_ts: int, max_ts: int, count: int, body: bytes) -> bytes:
    out = bytearray(BATCH_OVERHEAD + len(body))
    _HEADER.pack_into(
        out, 0, h.base_offset, len(out) - LOG_OVERHEAD, h.partition_leader_epoch, CURRENT_MAGIC, 0,
        attributes, h.last_offset_delta, base_ts, max_ts, h.producer_id, h.producer_epoch,
        h.base_sequence, count,
    )
    out[BATCH_OVERHEAD:] = body
    _CRC.pack_into(out, CRC_OFFSET, compute_crc(out, 0, len(out)))
    return bytes(out)


def rebuild_batch(h: BatchHeader, records: Sequence[Record], delete_horizon_ms: int | None) -> bytes:
    """`h`'s batch holding only `records` (non-empty), compressed with the batch's own codec.

    With `delete_horizon_ms` the base timestamp carries the horizon and attribute bit 6 is set.
    The max timestamp is the batch's own under LogAppendTime, else the largest kept record's.
    """
    if not records:
        raise ValueError("rebuild_batch needs at least one record; use empty_batch")
    attributes = h.attributes & ~DELETE_HORIZON_MASK
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_MASK
        base_ts = delete_horizon_ms
    else:
        base_ts = records[0].timestamp
    if h.attributes & TIMESTAMP_TYPE_MASK:
        max_ts = h.max_timestamp
    else:
        max_ts = max(r.timestamp for r in records)
    body = b"".join(encode_record(r, h.base_offset, base_ts) for r in records)
    codec = h.attributes & COMPRESSION_MASK
    if codec:
        body = compress(codec, body)
    return _pack(h, attributes, base_ts, max_ts, len(records), body)


def empty_batch(h: BatchHeader) -> bytes:
    """Kafka's writeEmptyHeader: the batch's header fields without records (kept for producer state)."""
    attributes = h.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_MASK | CONTROL_MASK)
    return _pack(h, attributes, h.max_timestamp, h.max_timestamp, 0, b"")
