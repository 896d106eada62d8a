"""Rewriting a v2 batch with fewer records, as Kafka's log cleaner does (MemoryRecords.filterTo), and
building the coordinators' small keyed batches straight into bytes.

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
    if n < 0x80:
        out.append(n)
        return
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
    return bytes(_packed(h, attributes, base_ts, max_ts, count, body))


def _packed(h: BatchHeader, attributes: int, base_ts: int, max_ts: int, count: int,
            body: bytes | bytearray) -> bytearray:
    out = bytearray(BATCH_OVERHEAD + len(body))
    _HEADER.pack_into(
        out, 0, h.base_offset, len(out) - LOG_OVERHEAD, h.partition_leader_epoch, CURRENT_MAGIC, 0,
        attributes, h.last_offset_delta, base_ts, max_ts, h.producer_id, h.producer_epoch,
        h.base_sequence, count,
    )
    out[BATCH_OVERHEAD:] = body
    _CRC.pack_into(out, CRC_OFFSET, compute_crc(out, 0, len(out)))
    return out


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


def build_keyed_batch(recs: Sequence[tuple[bytes, bytes | None]], timestamp_ms: int, producer_id: int = -1,
                      producer_epoch: int = -1, transactional: bool = False) -> tuple[bytearray, BatchHeader]:
    """An uncompressed batch of (key, value) records without headers, all at `timestamp_ms`, and its header.

    A coordinator writes one such batch per commit: built here in one pass (no record objects, no
    second parse), the header it returns is what validate_batches would read back from the bytes."""
    if not recs:
        raise ValueError("a record batch needs at least one record")
    body = bytearray()
    for i, (key, value) in enumerate(recs):
        rec = bytearray(b"\x00\x00")  # attributes, timestamp delta 0
        _uvarint(i << 1, rec)  # offset delta (zigzag of a non-negative int)
        _bytes_field(key, rec)
        _bytes_field(value, rec)
        rec.append(0)  # no headers
        _varint(len(rec), body)
        body += rec
    attributes = TRANSACTIONAL_MASK if transactional else 0
    h = BatchHeader(0, BATCH_OVERHEAD + len(body) - LOG_OVERHEAD, -1, CURRENT_MAGIC, 0, attributes, len(recs) - 1,
                    timestamp_ms, timestamp_ms, producer_id, producer_epoch, -1, len(recs), 0)
    out = _packed(h, attributes, timestamp_ms, timestamp_ms, len(recs), body)
    (h.crc,) = _CRC.unpack_from(out, CRC_OFFSET)
    return out, h
