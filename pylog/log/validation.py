"""An append's checks before anything is written (the parts of Kafka's LogValidator pylog applies).

Batch-level checks (sizes, CRC, magic) happen when the request is parsed; these need the topic's
config or the log's end: batch sizes against max.message.bytes and segment.bytes, timestamps
against message.timestamp.difference.max.ms, keys on compacted topics, and a follower's offsets.
"""

from __future__ import annotations

from typing import Sequence

from pylog.common.clock import now_ms as _now_ms
from pylog.log.config import LONG_MAX, LogConfig
from pylog.log.errors import (
    InvalidTimestampError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    RecordValidationError,
    UnexpectedAppendOffsetError,
)
from pylog.protocol.records import BatchHeader, read_records


def check_leader_append(
    buf: bytes | bytearray | memoryview,
    headers: Sequence[BatchHeader],
    config: LogConfig,
    name: str,
    now_ms: int | None,
    keys_known: bool,
) -> None:
    """Every check of Log.append_as_leader, in Kafka's order (see its doc for the errors)."""
    max_bytes = config.max_message_bytes
    for h in headers:
        if h.batch_length + 12 > max_bytes:
            raise RecordTooLargeError(
                f"The record batch size in the append to {name} is {h.batch_length + 12} bytes "
                f"which exceeds the maximum configured value of {max_bytes}."
            )
    if config.message_timestamp_difference_max_ms < LONG_MAX and config.message_timestamp_type == "CreateTime":
        now = _now_ms() if now_ms is None else now_ms
        check_timestamps(headers, now, config.message_timestamp_difference_max_ms)
    if config.compact and not keys_known:
        check_keys(buf, headers, name)
    check_fits_segment(len(buf), config, name)


def check_follower_append(
    buf: bytes | bytearray | memoryview,
    headers: Sequence[BatchHeader],
    next_offset: int,
    log_start_offset: int,
    config: LogConfig,
    name: str,
) -> None:
    """A follower's batches start at or after the LEO, their offsets increase, and they fit a segment."""
    first = headers[0].base_offset
    last = headers[-1].base_offset + headers[-1].last_offset_delta
    if first < next_offset:
        raise UnexpectedAppendOffsetError(
            f"Unexpected offset in append to {name}. First offset {first} is less than the next "
            f"offset {next_offset}. Last offset in append: {last}. Log start offset = "
            f"{log_start_offset}",
            first, last,
        )
    prev = first - 1
    for h in headers:
        if h.base_offset <= prev or h.last_offset_delta < 0:
            raise UnexpectedAppendOffsetError(
                f"Out of order offsets found in append to {name}: batch [{h.base_offset}, "
                f"{h.last_offset}] after offset {prev}",
                first, last,
            )
        prev = h.base_offset + h.last_offset_delta
    check_fits_segment(len(buf), config, name)


def check_fits_segment(size: int, config: LogConfig, name: str) -> None:
    """An append larger than segment.bytes could never be written (RecordBatchTooLargeError)."""
    if size > config.segment_bytes:
        raise RecordBatchTooLargeError(
            f"Message batch size is {size} bytes in append to partition {name}, which "
            f"exceeds the maximum configured segment size of {config.segment_bytes}."
        )


def check_timestamps(headers: Sequence[BatchHeader], now: int, limit: int) -> None:
    """message.timestamp.difference.max.ms, checked on each batch's first and max timestamps.

    Kafka checks every record; the batch bounds catch a skewed producer clock without decoding
    records.
    """
    for h in headers:
        for ts in (h.base_timestamp, h.max_timestamp):
            if ts != -1 and abs(ts - now) > limit:
                raise InvalidTimestampError(
                    f"Timestamp {ts} of message with offset {h.base_offset} is out of range. The "
                    f"timestamp should be within [{now - limit}, {now + limit}]"
                )


def check_keys(buf: bytes | bytearray | memoryview, headers: Sequence[BatchHeader], name: str) -> None:
    """A compacted topic refuses records without a key (RecordValidationError, INVALID_RECORD)."""
    errors: list[tuple[int, str]] = []
    for h in headers:
        if h.is_control:
            continue
        for i, r in enumerate(read_records(buf[h.position : h.position + h.size])):
            if r.key is None:
                errors.append((i, f"Compacted topic cannot accept message without key in topic partition {name}"))
    if errors:
        raise RecordValidationError(errors)
