"""A Spark driver, as its own process, that copies one topic to another through the `pylog` exactly-once sink.

Run by tests/integration/spark/test_spark_exactly_once_kills.py with the venv's python so the test can SIGKILL
it (its JVM and, in local mode, its executors and python workers die with its process group). Each python task
slows down by --row-ms per row, so a task holds its transaction open long enough to be killed inside it, and
leaves a file named by its pid under --pids (the test's way to find, and stop at the end, the python workers of
this driver on a standalone cluster's executors, and only those). One progress line per micro-batch goes to stdout as JSON.

    python spark_copy_driver.py MASTER BOOTSTRAP CHECKPOINT --pids DIR [--row-ms 5] [--max-offsets 600]
"""
from __future__ import annotations

import argparse
import json
import sys


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("master")
    p.add_argument("bootstrap")
    p.add_argument("checkpoint")
    p.add_argument("--pids", required=True, help="directory where each python worker that runs a task leaves its pid")
    p.add_argument("--source", default="in")
    p.add_argument("--sink", default="out")
    p.add_argument("--row-ms", type=float, default=5.0)
    p.add_argument("--max-offsets", type=int, default=600)
    p.add_argument("--conf", action="append", default=[], help="key=value Spark settings")
    return p.parse_args(argv)


SESSION_UP = "pylog copy driver: session up"
QUERY_STARTED = "pylog copy driver: query started"


def main(argv: list[str]) -> int:
    """Copy SOURCE to SINK until caught up (Trigger.AvailableNow); exit 0 once the query finished."""
    args = _args(argv)
    import pylog.spark
    from pylog.spark.job import spark_session
    from pyspark.sql.functions import udf

    # Rows travel from the UDF to the sink's worker 10 at a time (not the whole task at once), so a task's
    # transaction holds records for most of the task.
    conf = {"spark.sql.execution.python.udf.maxRecordsPerBatch": "10",
            "spark.sql.execution.arrow.maxRecordsPerBatch": "10",
            **dict(item.split("=", 1) for item in args.conf)}
    spark = spark_session(args.master, app_name="pylog-exactly-once-kills", conf=conf)
    print(SESSION_UP, file=sys.stderr, flush=True)  # the JVM is up and the application registered
    try:
        pylog.spark.register(spark)
        pids, row_s = args.pids, args.row_ms / 1000

        @udf("binary")
        def slow(value):
            import os
            import time
            open(os.path.join(pids, str(os.getpid())), "a").close()
            time.sleep(row_s)
            return value

        src = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", args.bootstrap)
               .option("subscribe", args.source).option("startingOffsets", "earliest")
               .option("maxOffsetsPerTrigger", str(args.max_offsets)).load())
        q = (src.select("key", slow("value").alias("value"), "partition").writeStream.format("pylog")
             .option("kafka.bootstrap.servers", args.bootstrap).option("topic", args.sink)
             .option("checkpointLocation", args.checkpoint).trigger(availableNow=True).start())
        print(QUERY_STARTED, file=sys.stderr, flush=True)  # the session is up: what follows is the query's own
        seen, done = 0, False
        while not done:
            done = q.awaitTermination(0.5)
            progress = q.recentProgress
            for p in progress[seen:]:
                print(json.dumps({"batch": p["batchId"], "rows": p["numInputRows"]}), flush=True)
            seen = len(progress)
        if q.exception() is not None:
            print(f"query failed: {q.exception()}", file=sys.stderr, flush=True)
            return 1
        return 0
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
