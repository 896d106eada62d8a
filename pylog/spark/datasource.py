"""The `pylog` format for PySpark: `spark.read` / `readStream` / `df.write` / `writeStream.format("pylog")`.

A Python data source (PySpark >= 4.2) speaking the Kafka protocol with kafka-python, so it reads and writes
any Kafka-protocol cluster without Spark's JVM Kafka connector. Options and row schema are those of Spark's
`kafka` format (README, "Spark"); offsets live in Spark's checkpoint, nothing is committed to the cluster.
"""
from __future__ import annotations

from pyspark.sql.datasource import DataSource

from pylog.spark.options import OptionError, SinkOptions, parse_sink_options, parse_source_options, source_schema
from pylog.spark.ranges import OffsetRange
from pylog.spark.sink import BatchWriter, StreamWriter, check_sink_schema
from pylog.spark.source import BatchReader, StreamReader

__all__ = ["PylogDataSource", "OffsetRange", "register"]


class PylogDataSource(DataSource):
    """Reads and writes Kafka-protocol topics; options are checked when the DataFrame is defined."""

    @classmethod
    def name(cls) -> str:
        return "pylog"

    def schema(self) -> str:
        # Spark asks for the schema when load() defines the DataFrame: bad options fail right there.
        parse_source_options(self.options, streaming="endingoffsets" not in _keys(self.options))
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
    return opts


def register(spark) -> None:
    """Make `format("pylog")` available to `spark` (readers and writers, batch and streaming)."""
    spark.dataSource.register(PylogDataSource)
