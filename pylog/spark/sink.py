"""Rows with Spark's Kafka-sink columns become records: the columns' checks and the at-least-once write.

Columns: `value` (required, string or binary), `key` (string or binary), `topic` (string; the `topic`
option wins over it), `partition` (int; else the producer's key-hash partitioner), `headers`
(array<struct<key string, value binary>>). Each task produces its rows and waits until every record is
acknowledged, so a finished batch is stored; a retried task writes its rows again (duplicates possible).
The exactly-once write (txn_sink.py) sends the same records inside a transaction.
"""
from __future__ import annotations

from collections.abc import Iterator

from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType

from pylog.spark.options import OptionError, SinkOptions

__all__ = ["check_sink_schema", "send_rows", "write_rows"]

_TEXT_OR_BYTES = (StringType, BinaryType)
_HEADERS = ArrayType(StructType().add("key", StringType()).add("value", BinaryType()))


def check_sink_schema(schema: StructType, opts: SinkOptions) -> None:
    """OptionError unless the columns are what Spark's Kafka sink accepts."""
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    if "value" not in fields:
        raise OptionError("required column 'value' not found (string or binary)")
    expected = {"value": _TEXT_OR_BYTES, "key": _TEXT_OR_BYTES, "topic": (StringType,), "partition": (IntegerType,)}
    for name, types in expected.items():
        if name in fields and not isinstance(fields[name], types):
            raise OptionError(f"column '{name}' must be {' or '.join(t.typeName() for t in types)}, "
                              f"not {fields[name].simpleString()}")
    if "headers" in fields and not _is_headers(fields["headers"]):
        raise OptionError(f"column 'headers' must be {_HEADERS.simpleString()}, not {fields['headers'].simpleString()}")
    if opts.topic is None and "topic" not in fields:
        raise OptionError('no topic: set the option "topic" or give the rows a \'topic\' column')


def _is_headers(dtype) -> bool:
    if not isinstance(dtype, ArrayType) or not isinstance(dtype.elementType, StructType):
        return False
    inner = {f.name: f.dataType for f in dtype.elementType.fields}
    return isinstance(inner.get("key"), StringType) and isinstance(inner.get("value"), BinaryType)


def _bytes(value) -> bytes | None:
    return value.encode() if isinstance(value, str) else (bytes(value) if value is not None else None)


def send_rows(producer, opts: SinkOptions, rows: Iterator, failures: list) -> int:
    """Send every row (failures collect send errors); the caller flushes or commits."""
    count = 0
    for row in rows:
        fields = row.asDict()
        topic = opts.topic or fields.get("topic")
        if not topic:
            raise ValueError("pylog data source: a row has a null topic; set the option \"topic\" for a default")
        headers = [(h["key"], _bytes(h["value"])) for h in fields.get("headers") or ()]
        future = producer.send(topic, value=_bytes(fields["value"]), key=_bytes(fields.get("key")),
                               headers=headers or None, partition=fields.get("partition"))
        future.add_errback(failures.append)
        count += 1
    return count


def write_rows(opts: SinkOptions, rows: Iterator) -> int:
    """Produce every row and wait for all acknowledgements; raises the first failure."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=opts.bootstrap.split(","), **opts.client)
    failures: list[BaseException] = []
    try:
        count = send_rows(producer, opts, rows, failures)
        producer.flush()
    finally:
        producer.close()
    if failures:
        raise RuntimeError(f"pylog data source: {len(failures)} of {count} records were not stored: {failures[0]!r}")
    return count
