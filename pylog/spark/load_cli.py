"""`scripts/spark-load`: keep `__pylog_partition_load` up to date from `__pylog_metrics` (spark-submit friendly).

A streaming query: every trigger it reads the new load samples the brokers published, and writes each sampled
partition's load over the last --window-ms (latest size, p95 of the leader's byte and message rates) to the
compacted load topic, exactly-once. It runs until stopped, or with --once it processes what is there now and
exits (Trigger.AvailableNow, for cron). The checkpoint keeps its offsets and windows across runs.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from pylog.common.metrics_format import LOAD_TOPIC, METRICS_TOPIC

__all__ = ["main"]

_INTERVAL = re.compile(r"^\s*\d+\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?)\s*$", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # a tool's bad input exits 1, with one line saying what is wrong
        self.print_usage(sys.stderr)
        print(f"Error: {message}", file=sys.stderr)
        sys.exit(1)


class LoadJobError(Exception):
    """A bad option or an unusable cluster, reported as one line and exit 1."""


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="spark-load", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap-server", required=True, help="host:port of the cluster whose load to keep")
    ap.add_argument("--checkpoint-location", required=True,
                    help="the query's checkpoint (a directory; keep it across runs for exactly-once)")
    ap.add_argument("--window-ms", type=int, default=3_600_000,
                    help="aggregate each partition's samples of this long, ending at its newest (default 1 h)")
    ap.add_argument("--trigger-interval", help='time between micro-batches, e.g. "30 seconds" (default "1 minute")')
    ap.add_argument("--once", action="store_true", help="process the samples there now, then exit (for cron)")
    ap.add_argument("--timeout-s", type=float, help="stop the query (exit 1) if it has not ended after this long")
    ap.add_argument("--load-topic-partitions", type=int, default=1,
                    help=f"partitions of {LOAD_TOPIC} when this job creates it (default 1)")
    ap.add_argument("--spark-master", help="Spark master URL (default: spark-submit's, else local[*])")
    return ap


def _check(args: argparse.Namespace) -> dict:
    """The trigger to use; LoadJobError for contradictory or malformed options."""
    if args.window_ms <= 0:
        raise LoadJobError(f"--window-ms must be positive, got {args.window_ms}")
    if args.load_topic_partitions <= 0:
        raise LoadJobError(f"--load-topic-partitions must be positive, got {args.load_topic_partitions}")
    if args.timeout_s is not None and args.timeout_s <= 0:
        raise LoadJobError(f"--timeout-s must be positive, got {args.timeout_s}")
    if args.once and args.trigger_interval:
        raise LoadJobError("--once and --trigger-interval exclude each other (--once runs one AvailableNow trigger)")
    if args.trigger_interval and not _INTERVAL.match(args.trigger_interval):
        raise LoadJobError(f'--trigger-interval: expected a duration like "30 seconds" or "5 minutes", '
                           f'got {args.trigger_interval!r}')
    if os.path.isfile(args.checkpoint_location):
        raise LoadJobError(f"--checkpoint-location {args.checkpoint_location} is a file, not a directory")
    return {"availableNow": True} if args.once else {"processingTime": args.trigger_interval or "1 minute"}


def _check_cluster(bootstrap: str, partitions: int) -> bool:
    """Raise LoadJobError when the cluster is unreachable or has no samples; create the load topic if needed."""
    from pylog.planner.model import PlanError
    from pylog.spark.load import ensure_load_topic, topic_exists
    try:
        exists = topic_exists(bootstrap, METRICS_TOPIC)
    except PlanError as exc:
        raise LoadJobError(str(exc)) from None
    if not exists:
        raise LoadJobError(f"{bootstrap} has no {METRICS_TOPIC} topic yet: brokers publish load samples to it "
                           f"every metrics.sample.interval.ms (on by default)")
    return ensure_load_topic(bootstrap, LOAD_TOPIC, partitions)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse flags, check the cluster, run the streaming query (until stopped, or one trigger with --once)."""
    args = _parser().parse_args(argv)
    try:
        trigger = _check(args)
        if _check_cluster(args.bootstrap_server, args.load_topic_partitions):
            print(f"created {LOAD_TOPIC} (cleanup.policy=compact)", file=sys.stderr)
    except LoadJobError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    from pylog.spark.job import spark_session
    from pylog.spark.load import start_load_query
    # Few shuffle partitions: each is one exactly-once sink task (a transaction) per trigger. Spark keeps the
    # number in the checkpoint after the first run.
    spark = spark_session(args.spark_master, app_name="pylog-partition-load",
                          conf={"spark.sql.shuffle.partitions": "2"})
    from pyspark.errors import StreamingQueryException
    try:
        query = start_load_query(spark, args.bootstrap_server, args.checkpoint_location, args.window_ms, trigger)
        try:
            ended = query.awaitTermination(args.timeout_s)
        except StreamingQueryException as exc:
            print(f"Error: the load query failed: {exc.getMessage().splitlines()[0]}", file=sys.stderr)
            return 1
        if ended is False:
            query.stop()
            print(f"Error: the query did not end within {args.timeout_s} s", file=sys.stderr)
            return 1
        # Progress objects: attributes over Spark Connect, where item access can miss the derived counts.
        rows = sum(int(getattr(p, "numInputRows", None) or p["numInputRows"] or 0) for p in query.recentProgress)
        print(f"{rows} samples read from {METRICS_TOPIC}; load written to {LOAD_TOPIC}", file=sys.stderr)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
