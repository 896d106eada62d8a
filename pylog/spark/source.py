"""The readers of the `pylog` format: a batch snapshot and a micro-batch stream with Spark's Kafka-source rules.

Offsets are planned on the driver; every task reads its own range with its own consumer (fetch.py). The
stream's offsets are the checkpoint's per-partition JSON, `{"topic": {"0": 123}}`.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxBytes, ReadMaxRows,
                                              SupportsTriggerAvailableNow)

from pylog.common.types import TP
from pylog.spark.fetch import read_range
from pylog.spark.offsets import OffsetReader, commit_to_group, new_partition_starts, report_data_loss
from pylog.spark.options import SourceOptions, offsets_json
from pylog.spark.ranges import OffsetRange, byte_limit, delay_batch, rate_limit, split_ranges

__all__ = ["BatchReader", "StreamReader"]

log = logging.getLogger(__name__)


def _from_json(offsets: dict) -> dict[TP, int]:
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


class BatchReader(DataSourceReader):
    """startingOffsets .. endingOffsets of the subscribed partitions, fixed when the read is planned."""

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts

    def partitions(self) -> list[OffsetRange]:
        """One range per partition (more with minPartitions); offsets resolved now, so the read is a snapshot."""
        reader = OffsetReader(self.opts)
        try:
            tps = reader.require_partitions()
            start = reader.resolve(self.opts.starting, tps, "startingOffsets")
            end = reader.resolve(self.opts.ending, tps, "endingOffsets")
        finally:
            reader.close()
        ranges = [OffsetRange(t, p, start[(t, p)], max(start[(t, p)], end[(t, p)])) for t, p in tps]
        # Spark needs at least one partition to run a read, even of nothing.
        return split_ranges(ranges, self.opts.min_partitions) or [OffsetRange("", -1, 0, 0)]

    def read(self, partition: OffsetRange) -> Iterator[tuple]:
        """The rows of one range."""
        return read_range(self.opts, partition)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches over the subscribed partitions, new partitions included from their first offset."""

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self.offsets = OffsetReader(opts)
        self.target: dict[TP, int] | None = None  # Trigger.AvailableNow's end
        self.available: dict | None = None  # Spark asks for it right after latestOffset, which knows it
        self.last_trigger = 0.0  # Spark's lastTriggerMillis: 0, so the first trigger is never delayed
        self.shown: dict | None = None  # the offsets last committed to commitOffsetsToGroup

    def initialOffset(self) -> dict:
        """Where a new query starts: startingOffsets resolved against the partitions existing now."""
        tps = self.offsets.require_partitions()
        return offsets_json(self.offsets.resolve(self.opts.starting, tps, "startingOffsets"))

    def getDefaultReadLimit(self) -> ReadLimit:
        """maxOffsetsPerTrigger as Spark's row limit, else maxBytesPerTrigger as its byte limit."""
        if self.opts.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)  # maxBytesPerTrigger applies beside it
        if self.opts.max_bytes_per_trigger is not None:
            return ReadMaxBytes(self.opts.max_bytes_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Remember the latest offsets now: an AvailableNow query stops there."""
        tps = self.offsets.partitions()
        self.target = self.offsets.latest(tps)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """The next batch's end: the latest offsets, within the read limit and the AvailableNow target."""
        self._show_progress(start)
        begin = _from_json(start)
        tps = self.offsets.partitions()
        gone = sorted(set(begin) - set(tps))
        if gone:
            report_data_loss(self.opts, f"partitions {gone} were deleted")
        begin.update(new_partition_starts(self.offsets, begin, tps))
        latest = self.offsets.latest(tps)
        self.available = offsets_json(latest)
        if self.target is not None:  # partitions found after the target was taken get nothing
            latest = {tp: min(end, self.target.get(tp, begin[tp])) for tp, end in latest.items()}
        elif self._delay(begin, latest):
            return start  # fewer than minOffsetsPerTrigger new offsets and maxTriggerDelay not yet passed
        if isinstance(limit, ReadMaxRows):
            latest = rate_limit(begin, latest, limit.max_rows)
        if self.opts.max_bytes_per_trigger is not None and not isinstance(limit, ReadAllAvailable):
            earliest = self.offsets.earliest(list(latest))
            latest = byte_limit(begin, latest, self.opts.max_bytes_per_trigger,
                                self.offsets.bytes_per_offset(list(latest), earliest, self.offsets.latest(list(latest))))
        for tp, end in latest.items():
            if tp in begin and end < begin[tp]:
                report_data_loss(self.opts, f"{tp[0]}-{tp[1]} offset went back from {begin[tp]} to {end}")
                latest[tp] = begin[tp]  # nothing to read there; an offset must not go backwards
        return offsets_json(latest)

    def _delay(self, begin: dict[TP, int], latest: dict[TP, int]) -> bool:
        """Spark's delayBatch over the new offsets; a batch that goes ahead restarts the delay's clock."""
        now = time.monotonic() * 1000
        available = sum(max(0, end - begin.get(tp, end)) for tp, end in latest.items())
        if delay_batch(available, self.opts.min_offsets_per_trigger, now - self.last_trigger,
                       self.opts.max_trigger_delay_ms):
            return True
        self.last_trigger = now
        return False

    def _show_progress(self, start: dict) -> None:
        """`start` to `commitOffsetsToGroup` when it moved: lag tools see the query (never read back)."""
        # Spark plans batch N+1 only after batch N is in its commit log, so `start` is always a committed batch's
        # end (or the query's first offsets). Spark's own commit() callback for batch N comes only with batch N+1,
        # so a query that caught up would never show its last batch.
        if self.opts.commit_offsets_to_group is not None and start != self.shown:
            commit_to_group(self.opts, _from_json(start))
            self.shown = start

    def reportLatestOffset(self) -> dict | None:
        """The newest offsets available, for the query's progress report (as seen by the last latestOffset)."""
        return self.available

    def partitions(self, start: dict, end: dict) -> list[OffsetRange]:
        """The ranges between two checkpointed offsets; a partition new in `end` starts at its earliest."""
        begin, until = _from_json(start), _from_json(end)
        new = [tp for tp in until if tp not in begin]
        if new:
            begin.update(self.offsets.earliest(new))
        ranges = [OffsetRange(t, p, begin[(t, p)], max(begin[(t, p)], until[(t, p)])) for t, p in until]
        return split_ranges(ranges, self.opts.min_partitions)

    def read(self, partition: OffsetRange) -> Iterator[tuple]:
        """The rows of one range."""
        return read_range(self.opts, partition)

    def stop(self) -> None:
        """Close the driver's connection."""
        self.offsets.close()
