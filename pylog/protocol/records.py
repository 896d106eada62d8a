"""Kafka RecordBatch v2 (magic 2): header parsing, validation, in-place offset assignment.

The broker never decodes records on the hot paths: a produce request's batches are validated
(sizes, magic, CRC32C) and stamped with offsets and the leader epoch in place -- both fields sit
before the CRC-covered region, so the client's CRC stays valid -- and stored byte for byte.
Record-level decoding (`read_records`) and batch building (`build_batch`) reuse kafka-python's
`kafka.record` codec; they serve dump-log, internal producers and tests.

Batch layout (offsets in bytes, big-endian)::

    0 baseOffset int64        8 batchLength int32     12 partitionLeaderEpoch int32
    16 magic int8             17 crc uint32 (CRC32C of bytes 21..end)
    21 attributes int16       23 lastOffsetDelta int32  27 baseTimestamp int64
    35 maxTimestamp int64     43 producerId int64       51 producerEpoch int16
    53 baseSequence int32     57 recordsCount int32     61 records...
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence

from crc32c import crc32c
from kafka import codec as _codec
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from pylog.common.errors import ErrorCode, KafkaError

BATCH_OVERHEAD = 61  # header bytes of a v2 batch, including the 12 bytes of offset + length
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part not counted in batchLength
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21  # the CRC covers attributes..end of batch
MAX_TIMESTAMP_OFFSET = 35
CURRENT_MAGIC = 2

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

NO_TIMESTAMP = -1
COMPRESSION_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
TIMESTAMP_TYPE_NAMES = ("CreateTime", "LogAppendTime")

_HEADER = struct.Struct(">qiibIhiqqqhii")
_LENGTH = struct.Struct(">i")
_OFFSET = struct.Struct(">q")
_EPOCH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_ATTRS = struct.Struct(">h")
_INT_MAX = 2**31 - 1


class RecordError(KafkaError):
    """A produce/fetch record set the broker refuses."""

    code = ErrorCode.CORRUPT_MESSAGE


class CorruptRecordError(RecordError):
    """Bad CRC, impossible size, truncated batch or inconsistent offsets (CORRUPT_MESSAGE, 2)."""

    code = ErrorCode.CORRUPT_MESSAGE


class UnsupportedMagicError(RecordError):
    """A batch in message format v0/v1 (UNSUPPORTED_FOR_MESSAGE_FORMAT, 43)."""

    code = ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


@dataclass(slots=True)
class BatchHeader:
    """The 61-byte header of one v2 batch, plus where the batch starts in its buffer."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    position: int = 0

    @property
    def last_offset(self) -> int:
        """Offset of the last record in the batch."""
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """The offset right after this batch."""
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size(self) -> int:
        """Total bytes of the batch, including offset and length fields."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> int:
        """Codec id: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd."""
        return self.attributes & COMPRESSION_MASK

    @property
    def compression_name(self) -> str:
        """Kafka's name of the codec (`none`, `gzip`, ...)."""
        c = self.attributes & COMPRESSION_MASK
        return COMPRESSION_NAMES[c] if c < len(COMPRESSION_NAMES) else f"unknown({c})"

    @property
    def is_transactional(self) -> bool:
        """Whether the batch belongs to a transaction."""
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        """Whether the batch holds control records (transaction markers)."""
        return bool(self.attributes & CONTROL_MASK)

    @property
    def timestamp_type(self) -> int:
        """0 for CreateTime, 1 for LogAppendTime."""
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def timestamp_type_name(self) -> str:
        """`CreateTime` or `LogAppendTime`, as Kafka prints it."""
        return TIMESTAMP_TYPE_NAMES[self.timestamp_type]

    @property
    def delete_horizon_ms(self) -> int | None:
        """The compaction delete horizon (the base timestamp when its attribute bit is set)."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def last_sequence(self) -> int:
        """Sequence number of the last record, or -1 when the batch has none."""
        if self.base_sequence == -1:
            return -1
        return increment_sequence(self.base_sequence, self.last_offset_delta)


class Record(NamedTuple):
    """One decoded record."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    sequence: int = -1


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's sequence arithmetic: wraps from Int.MaxValue back to 0."""
    if sequence > _INT_MAX - increment:
        return increment - (_INT_MAX - sequence) - 1
    return sequence + increment


def parse_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Parse the batch header at `pos`; raises CorruptRecordError if fewer than 61 bytes remain."""
    if len(buf) - pos < BATCH_OVERHEAD:
        raise CorruptRecordError(
            f"Truncated record batch at position {pos}: {len(buf) - pos} bytes left, "
            f"a batch header needs {BATCH_OVERHEAD}"
        )
    return BatchHeader(*_HEADER.unpack_from(buf, pos), pos)


def compute_crc(buf: bytes | bytearray | memoryview, pos: int, size: int) -> int:
    """CRC32C of the CRC-covered part (attributes..end) of the batch at `pos` of `size` bytes."""
    with memoryview(buf) as mv:
        return crc32c(mv[pos + ATTRIBUTES_OFFSET : pos + size])


def validate_batches(
    buf: bytes | bytearray | memoryview, *, check_offsets: bool = True
) -> list[BatchHeader]:
    """Check that `buf` is a sequence of complete, intact magic-2 batches; return their headers.

    Checks per batch (Kafka's ByteBufferLogInputStream, DefaultRecordBatch.ensureValid and
    LogValidator): length fields, magic 2, CRC32C over attributes..end, records_count >= 1 and
    `last_offset_delta == records_count - 1` (skipped with check_offsets=False, e.g. for batches
    that compaction thinned out). An empty buffer gives an empty list; the caller decides (Kafka
    answers a produce without batches with INVALID_RECORD).
    """
    headers: list[BatchHeader] = []
    append = headers.append
    unpack_from = _HEADER.unpack_from
    end = len(buf)
    pos = 0
    with memoryview(buf) as mv:
        while pos < end:
            remaining = end - pos
            if remaining < LOG_OVERHEAD:
                raise CorruptRecordError(
                    f"Truncated record batch at position {pos}: only {remaining} bytes left"
                )
            (length,) = _LENGTH.unpack_from(mv, pos + 8)
            if length < 14:  # Kafka's LegacyRecord.RECORD_OVERHEAD_V0: the smallest any format allows
                raise CorruptRecordError(
                    f"Record size {length} is less than the minimum record overhead (14)"
                )
            size = length + LOG_OVERHEAD
            if size > remaining:
                raise CorruptRecordError(
                    f"Truncated record batch at position {pos}: batch size {size} but only "
                    f"{remaining} bytes left"
                )
            magic = mv[pos + MAGIC_OFFSET]
            if magic != CURRENT_MAGIC:
                if magic < CURRENT_MAGIC:  # 0 and 1 (the byte is unsigned here; >127 is garbage)
                    raise UnsupportedMagicError(
                        f"Produce requests are only allowed to contain record batches with magic "
                        f"version 2, found magic {magic} at position {pos}"
                    )
                raise CorruptRecordError(f"Invalid magic {magic} in record batch at position {pos}")
            if size < BATCH_OVERHEAD:
                raise CorruptRecordError(
                    f"Record batch is corrupt (the size {size} is smaller than the minimum "
                    f"allowed overhead {BATCH_OVERHEAD})"
                )
            h = BatchHeader(*unpack_from(mv, pos), pos)
            computed = crc32c(mv[pos + ATTRIBUTES_OFFSET : pos + size])
            if computed != h.crc:
                raise CorruptRecordError(
                    f"Record is corrupt (stored crc = {h.crc}, computed crc = {computed})"
                )
            if check_offsets:
                _check_offsets(h)
            append(h)
            pos += size
    return headers


def _check_offsets(h: BatchHeader) -> None:
    """LogValidator.validateBatch's offset/count checks (Kafka raises InvalidRecordException)."""
    if h.last_offset_delta < 0:
        raise CorruptRecordError(
            f"Batch has an invalid offset range: [{h.base_offset}, {h.last_offset}]"
        )
    if h.records_count <= 0:
        raise CorruptRecordError(f"Invalid reported count for record batch: {h.records_count}")
    if h.last_offset_delta + 1 != h.records_count:
        raise CorruptRecordError(
            f"Inconsistent batch offset range [{h.base_offset}, {h.last_offset}] and count of "
            f"records {h.records_count}"
        )


def iter_batches(buf: bytes | bytearray | memoryview, pos: int = 0) -> Iterator[BatchHeader]:
    """Yield the header of each complete batch from `pos`; stop silently at a truncated tail.

    Nothing is validated beyond the length fields (a length below the v2 header size also ends
    the iteration), so this is for data already checked, e.g. read back from a segment.
    """
    end = len(buf)
    unpack_from = _HEADER.unpack_from
    while end - pos >= BATCH_OVERHEAD:
        h = BatchHeader(*unpack_from(buf, pos), pos)
        size = h.batch_length + LOG_OVERHEAD
        if size < BATCH_OVERHEAD or size > end - pos:
            return
        yield h
        pos += size


def assign_offsets(
    buf: bytearray | memoryview, headers: Sequence[BatchHeader], first_offset: int, leader_epoch: int
) -> int:
    """Stamp base offsets from `first_offset` and the leader epoch into each batch, in place.

    Both fields precede the CRC-covered region, so the batches stay valid without a new CRC.
    The headers are updated too. Returns the last offset assigned.
    """
    pack_offset = _OFFSET.pack_into
    pack_epoch = _EPOCH.pack_into
    offset = first_offset
    for h in headers:
        pos = h.position
        pack_offset(buf, pos, offset)
        pack_epoch(buf, pos + 12, leader_epoch)
        h.base_offset = offset
        h.partition_leader_epoch = leader_epoch
        offset += h.last_offset_delta + 1
    return offset - 1


def set_log_append_time(buf: bytearray | memoryview, h: BatchHeader, now_ms: int) -> None:
    """Mark a batch LogAppendTime with `now_ms` as max timestamp (Kafka's setMaxTimestamp).

    Both fields are CRC-covered, so this recomputes the CRC -- the price of
    message.timestamp.type=LogAppendTime.
    """
    attributes = h.attributes | TIMESTAMP_TYPE_MASK
    if attributes == h.attributes and h.max_timestamp == now_ms:
        return
    _ATTRS.pack_into(buf, h.position + ATTRIBUTES_OFFSET, attributes)
    _OFFSET.pack_into(buf, h.position + MAX_TIMESTAMP_OFFSET, now_ms)
    h.attributes = attributes
    h.max_timestamp = now_ms
    h.crc = compute_crc(buf, h.position, h.size)
    _CRC.pack_into(buf, h.position + CRC_OFFSET, h.crc)


def read_records(batch: bytes | bytearray | memoryview) -> list[Record]:
    """Decode the records of one complete v2 batch (any compression), with absolute offsets."""
    h = parse_header(batch)
    decoded = DefaultRecordBatch(batch[: h.size])
    out: list[Record] = []
    base_seq = h.base_sequence
    base = h.base_offset
    try:
        for r in decoded:
            seq = -1 if base_seq == -1 else increment_sequence(base_seq, r.offset - base)
            out.append(Record(r.offset, r.timestamp, r.key, r.value, list(r.headers), seq))
    except Exception as e:  # the codecs raise their own types (lz4: RuntimeError, gzip: OSError, zstd: ZstdError)
        raise CorruptRecordError(f"Cannot decode the records of the batch at offset {base}: {e}") from e
    return out


_ENCODERS = {
    1: _codec.gzip_encode,
    2: _codec.snappy_encode,
    3: _codec.lz4_encode,
    4: _codec.zstd_encode,
}


def compress(codec: int, body: bytes) -> bytes:
    """The records section compressed with codec id `codec` (1 gzip, 2 snappy, 3 lz4, 4 zstd)."""
    return _ENCODERS[codec](body)


def build_batch(
    records: Sequence[tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]], int | None]],
    base_offset: int = 0,
    leader_epoch: int = -1,
    compression: int = 0,
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    timestamp_type: int = 0,
) -> bytes:
    """Build one v2 batch of (key, value, headers, timestamp_ms) records.

    Records are encoded by kafka-python's DefaultRecordBatchBuilder; the header is written here
    so the codec is applied even when it doesn't shrink the data, and so base offset, leader
    epoch, control and timestamp-type attributes can be set. A None timestamp means now.
    """
    if not records:
        raise ValueError("a record batch needs at least one record")
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        batch_size=2**31 - 1,
    )
    for i, (key, value, headers, ts) in enumerate(records):
        builder.append(i, timestamp=ts, key=key, value=value, headers=list(headers))
    raw = builder.build()  # uncompressed; we take its header values and record bytes
    plain = _HEADER.unpack_from(raw, 0)
    body = bytes(raw[BATCH_OVERHEAD:])
    if compression:
        body = compress(compression, body)
    attributes = compression
    if timestamp_type:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_MASK
    if is_control:
        attributes |= CONTROL_MASK
    out = bytearray(BATCH_OVERHEAD + len(body))
    _HEADER.pack_into(
        out, 0, base_offset, len(out) - LOG_OVERHEAD, leader_epoch, CURRENT_MAGIC, 0, attributes,
        len(records) - 1, plain[7], plain[8], producer_id, producer_epoch, base_sequence,
        len(records),
    )
    out[BATCH_OVERHEAD:] = body
    _CRC.pack_into(out, CRC_OFFSET, compute_crc(out, 0, len(out)))
    return bytes(out)
