"""The writers of the `pylog` format: exactly-once by default (txn_sink.py), at-least-once on request (sink.py)."""
from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage

from pylog.spark.options import SinkOptions
from pylog.spark.sink import write_rows
from pylog.spark.txn_sink import ensure_commit_topic, task_batch, write_exactly_once

__all__ = ["BatchWriter", "StreamWriter", "Written"]


@dataclass
class Written(WriterCommitMessage):
    """How many records one task stored (0 for a replayed task whose rows were already committed)."""

    records: int


class BatchWriter(DataSourceWriter):
    """`df.write.format("pylog")`: each task writes its rows (exactly-once: as batch 0 of this write)."""

    def __init__(self, opts: SinkOptions) -> None:
        self.opts = opts
        self.identity = f"write-{uuid.uuid4()}"  # made on the driver: every attempt of a task shares it
        if opts.exactly_once:
            ensure_commit_topic(opts)

    def write(self, iterator: Iterator) -> Written:
        """Produce one task's rows."""
        if not self.opts.exactly_once:
            return Written(write_rows(self.opts, iterator))
        partition, _, _ = task_batch()
        return Written(write_exactly_once(self.opts, iterator, self.identity, partition, 0))


class StreamWriter(DataSourceStreamWriter):
    """`df.writeStream.format("pylog")`: each micro-batch's tasks write their rows, tied to (query, batch, task)."""

    def __init__(self, opts: SinkOptions) -> None:
        self.opts = opts
        # Made on the driver when the query (re)starts: its tasks fence the query's transactions older than this.
        self.since_ms = int(time.time() * 1000)
        if opts.exactly_once:
            ensure_commit_topic(opts)

    def write(self, iterator: Iterator) -> Written:
        """Produce one task's rows."""
        if not self.opts.exactly_once:
            return Written(write_rows(self.opts, iterator))
        partition, query, batch = task_batch()
        if query is None or batch is None:
            raise RuntimeError("pylog data source: the task knows no streaming query id or batch id")
        return Written(write_exactly_once(self.opts, iterator, f"query-{query}", partition, batch, self.since_ms))

    def commit(self, messages: list, batchId: int) -> None:
        """Nothing to do: every task committed its own transaction (or found it committed) before finishing."""

    def abort(self, messages: list, batchId: int) -> None:
        """Nothing to undo: Spark replays the batch, and tasks whose marker is committed write nothing again."""
