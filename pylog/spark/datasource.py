"""`spark.read.format("pylog")`: a PySpark Python data source reading a topic over the Kafka protocol.

Options: bootstrap.servers (required), topic (required), startingOffsets / endingOffsets ("earliest" or
"latest"; defaults earliest / latest). One Spark input partition per topic-partition; offsets are fixed when
the read is planned, so a read is a consistent snapshot. Rows have Spark's Kafka-source schema. Uses
kafka-python with assign()+seek (no consumer group, nothing committed).
"""
from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

__all__ = ["PylogDataSource", "TopicPartitionRange"]

SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
          "timestampType int")


class TopicPartitionRange(InputPartition):
    """Offsets [start, end) of one topic-partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end


def _consumer(options: dict):
    from kafka import KafkaConsumer  # imported on the executor too
    return KafkaConsumer(bootstrap_servers=options["bootstrap.servers"].split(","), group_id=None,
                         enable_auto_commit=False, auto_offset_reset="earliest",
                         request_timeout_ms=int(options.get("requestTimeoutMs", 30000)))


class PylogReader(DataSourceReader):
    """Plans one input partition per topic-partition and reads each with its own consumer."""

    def __init__(self, options: dict) -> None:
        for key in ("bootstrap.servers", "topic"):
            if key not in options:
                raise ValueError(f'pylog data source: option "{key}" is required')
        self.options = dict(options)

    def partitions(self) -> list[TopicPartitionRange]:
        from kafka import TopicPartition
        topic = self.options["topic"]
        consumer = _consumer(self.options)
        try:
            ids = consumer.partitions_for_topic(topic)
            if not ids:
                raise ValueError(f"pylog data source: topic {topic!r} does not exist")
            tps = [TopicPartition(topic, p) for p in sorted(ids)]
            begin, end = consumer.beginning_offsets(tps), consumer.end_offsets(tps)
        finally:
            consumer.close()
        start_latest = self.options.get("startingOffsets", "earliest") == "latest"
        end_earliest = self.options.get("endingOffsets", "latest") == "earliest"
        result = []
        for tp in tps:
            start = end[tp] if start_latest else begin[tp]
            stop = begin[tp] if end_earliest else end[tp]
            result.append(TopicPartitionRange(tp.topic, tp.partition, start, max(start, stop)))
        return result

    def read(self, partition: TopicPartitionRange) -> Iterator[tuple]:
        from kafka import TopicPartition
        if partition.start >= partition.end:
            return
        tp = TopicPartition(partition.topic, partition.partition)
        consumer = _consumer(self.options)
        try:
            consumer.assign([tp])
            consumer.seek(tp, partition.start)
            while consumer.position(tp) < partition.end:
                for record in consumer.poll(timeout_ms=1000).get(tp, []):
                    if record.offset >= partition.end:
                        return
                    ts = _dt.datetime.fromtimestamp(record.timestamp / 1000, tz=_dt.timezone.utc)
                    yield (record.key, record.value, record.topic, record.partition, record.offset, ts,
                           record.timestamp_type)
        finally:
            consumer.close()


class PylogDataSource(DataSource):
    """The `pylog` format: batch reads of a pylog (or any Kafka-protocol) topic."""

    @classmethod
    def name(cls) -> str:
        return "pylog"

    def schema(self) -> str:
        return SCHEMA

    def reader(self, schema) -> PylogReader:
        return PylogReader(self.options)
