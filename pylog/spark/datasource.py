"""The `pylog` format for PySpark: `spark.read` / `readStream` / `df.write` / `writeStream.format("pylog")`.

A Python data source (PySpark >= 4.2) speaking the Kafka protocol with kafka-python, so it reads and writes
any Kafka-protocol cluster without Spark's JVM Kafka connector. Options and row schema are those of Spark's
`kafka` format (README, "Spark"); offsets live in Spark's checkpoint, nothing is committed to the cluster.
"""
from __future__ import annotations

from dataclasses import replace

from pyspark.sql.datasource import DataSource

from pylog.spark.options import OptionError, SinkOptions, parse_sink_options, parse_source_options, source_schema
from pylog.spark.ranges import OffsetRange
from pylog.spark.sink import check_sink_schema
from pylog.spark.source import BatchReader, StreamReader
from pylog.spark.writers import BatchWriter, StreamWriter

__all__ = ["PylogDataSource", "OffsetRange", "register"]


class PylogDataSource(DataSource):
    """Reads and writes Kafka-protocol topics; options are checked when the DataFrame is defined."""

    @classmethod
    def name(cls) -> str:
        return "pylog"

    def schema(self) -> str:
        # Spark asks for the schema when load() defines the DataFrame: bad options fail right there.
        # Only a batch read may end; without an ending the read's kind is unknown here, so the stream's rules apply
        # (the batch-only ones are checked when a batch read is planned).
        ending = {"endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp"} & _keys(self.options)
        parse_source_options(self.options, streaming=not ending)
        return source_schema(str(self.options.get("includeHeaders", "false")).lower() == "true")

    def reader(self, schema) -> BatchReader:
        return BatchReader(parse_source_options(self.options, streaming=False))

    def streamReader(self, schema) -> StreamReader:
        return StreamReader(parse_source_options(self.options, streaming=True))

    def writer(self, schema, overwrite: bool) -> BatchWriter:
        return BatchWriter(_sink(self.options, schema, overwrite))

    def streamWriter(self, schema, overwrite: bool) -> StreamWriter:
        return StreamWriter(_sink(self.options, schema, overwrite))


def _keys(options) -> set[str]:
    return {str(k).lower() for k in options}


def _sink(options, schema, overwrite: bool) -> SinkOptions:
    if overwrite:
        raise OptionError("a topic can only be appended to: use mode(\"append\")")
    opts = parse_sink_options(options)
    check_sink_schema(schema, opts)
    if opts.exactly_once:
        idempotent = str(opts.client.get("enable_idempotence", True)).lower() != "false"
        if not idempotent or not _idempotence_available(opts.bootstrap):
            raise OptionError('semantics "exactly-once" needs an idempotent, transactional producer (InitProducerId); '
                              'use semantics "at-least-once"')
    elif "enable_idempotence" not in opts.client and not _idempotence_available(opts.bootstrap):
        # kafka-python turns idempotence on by default and then fails every send to a cluster without
        # InitProducerId; at-least-once does not need it, so the sink goes without rather than failing.
        opts = replace(opts, client={**opts.client, "enable_idempotence": False})
    return opts


_INIT_PRODUCER_ID = 22  # the Kafka API key an idempotent producer starts with


def _idempotence_available(bootstrap: str) -> bool:
    from pylog.client.sync import ClientError, KafkaClient
    try:
        with KafkaClient(bootstrap, client_id="pylog-spark") as client:
            client.version_for(_INIT_PRODUCER_ID)
        return True
    except ClientError:
        return False


def register(spark) -> None:
    """Make `format("pylog")` available to `spark` (readers and writers, batch and streaming)."""
    spark.dataSource.register(PylogDataSource)
