"""The leader's record checks before an append (the parts of Kafka's LogValidator pylog applies).

Batch-level checks (sizes, CRC, magic) happen when the request is parsed; these need the topic's
config: timestamps against message.timestamp.difference.max.ms, and keys on compacted topics.
"""

from __future__ import annotations

from typing import Sequence

from pylog.log.errors import InvalidTimestampError, RecordValidationError
from pylog.protocol.records import BatchHeader, read_records


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
