"""One Spark task's read: the records of one offset range, as rows of Spark's Kafka-source schema."""
from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Iterator

from pylog.spark.offsets import consumer, report_data_loss
from pylog.spark.options import SourceOptions
from pylog.spark.ranges import OffsetRange

__all__ = ["read_range"]

_POLL_MS = 1000


def _row(record, include_headers: bool) -> tuple:
    ts = _dt.datetime.fromtimestamp(record.timestamp / 1000, tz=_dt.timezone.utc)
    row = (record.key, record.value, record.topic, record.partition, record.offset, ts, record.timestamp_type)
    if include_headers:  # Spark's Kafka source gives null, not an empty array, for a record without headers
        row += ([(k, v) for k, v in record.headers] or None,)
    return row


def read_range(opts: SourceOptions, rng: OffsetRange) -> Iterator[tuple]:
    """Yield the records of [rng.start, rng.end); data found missing is reported per failOnDataLoss."""
    from kafka import TopicPartition
    from kafka.errors import OffsetOutOfRangeError
    if rng.size == 0:
        return
    tp = TopicPartition(rng.topic, rng.partition)
    c = consumer(opts)
    try:
        c.assign([tp])
        c.seek(tp, rng.start)
        idle_since = time.monotonic()
        while c.position(tp) < rng.end:
            try:
                records = c.poll(timeout_ms=_POLL_MS).get(tp, [])
            except OffsetOutOfRangeError:
                if not _skip_lost(c, tp, opts, rng):
                    return
                continue
            if not records:
                if not _still_reachable(c, tp, opts, rng, idle_since):
                    return
                continue
            idle_since = time.monotonic()
            for record in records:
                if record.offset >= rng.end:
                    return
                yield _row(record, opts.include_headers)
    finally:
        c.close()


def _skip_lost(c, tp, opts: SourceOptions, rng: OffsetRange) -> bool:
    """After OFFSET_OUT_OF_RANGE: report the loss, then seek to what is left of the range (False: nothing)."""
    pos = c.position(tp) if tp in c.assignment() else rng.start
    earliest = c.beginning_offsets([tp], 30_000)[tp]
    latest = c.end_offsets([tp], 30_000)[tp]
    if earliest > pos:
        report_data_loss(opts, f"offsets {pos}..{earliest - 1} of {rng.topic}-{rng.partition} were deleted "
                               f"(log start offset is now {earliest})")
        if earliest >= rng.end:
            return False
        c.seek(tp, earliest)
        return True
    report_data_loss(opts, f"{rng.topic}-{rng.partition} ends at {latest}, before offset {pos} the query "
                           "was to read from (the log was truncated or the topic recreated)")
    return False


def _still_reachable(c, tp, opts: SourceOptions, rng: OffsetRange, idle_since: float) -> bool:
    """After an empty poll: False when the range's end can no longer be reached (reported as a loss)."""
    from kafka.errors import KafkaError
    try:
        latest = c.end_offsets([tp], 30_000)[tp]
    except KafkaError:  # e.g. the leader just died: keep polling, within kafkaConsumer.pollTimeoutMs
        latest = rng.end
    if latest < rng.end:
        report_data_loss(opts, f"{rng.topic}-{rng.partition} ends at {latest}, before offset {rng.end} that "
                               "the batch was planned to read up to")
        return False
    if time.monotonic() - idle_since > opts.poll_timeout_ms / 1000:
        raise TimeoutError(f"pylog data source: no records from {rng.topic}-{rng.partition} at offset "
                           f"{c.position(tp)} for {opts.poll_timeout_ms} ms (kafkaConsumer.pollTimeoutMs)")
    return True
