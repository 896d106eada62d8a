"""Spark benchmark: `readStream.format("pylog")` vs `read.format("pylog")` of the same topic, records/s.

One broker, a topic of --partitions partitions filled with --records records of --value-size bytes, a
local Spark session (--master, local[2] by default). Each timed run reads the whole topic and sums the value
lengths (checked against what was written): the batch read, the stream as one AvailableNow batch, and the
stream in --batches micro-batches (maxOffsetsPerTrigger), each into Spark's `noop` sink. Session start and a
warm-up read are not timed. With --sink, also the stream copied into another topic by
`writeStream.format("pylog")` in --batches micro-batches, exactly-once vs at-least-once (a second table).
With --planner, the planning job instead: standalone cluster vs local[*] vs the pure core (bench/spark_planner.py).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from typing import Sequence

from pylog.bench import _harness as h

TOPIC = "bench-spark"
HEADER = ["read", "records", "batches", "time s", "records/s", "vs batch"]
SINK_HEADER = ["write", "records", "batches", "time s", "records/s", "vs at-least-once"]


def _batch(spark, bootstrap: str, expected: int) -> float:
    t0 = time.perf_counter()
    total = (spark.read.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", TOPIC)
             .load().selectExpr("sum(length(value)) AS n").collect()[0]["n"])
    elapsed = time.perf_counter() - t0
    if total != expected:
        raise RuntimeError(f"batch read summed {total} value bytes, expected {expected}")
    return elapsed


def _timed_query(writer) -> tuple[float, list[int]]:
    """Run an AvailableNow query to its end: seconds taken and the input rows of each non-empty batch."""
    with tempfile.TemporaryDirectory(prefix="pylog-bench-ckpt-") as ckpt:
        t0 = time.perf_counter()
        q = writer.option("checkpointLocation", ckpt).trigger(availableNow=True).start()
        try:
            if not q.awaitTermination(3600):
                raise RuntimeError("the streaming query did not finish within an hour")
        finally:
            q.stop()
        elapsed = time.perf_counter() - t0
    return elapsed, [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]


def _stream(spark, bootstrap: str, expected_rows: int, per_trigger: int | None) -> tuple[float, int]:
    reader = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", TOPIC).option("startingOffsets", "earliest"))
    if per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(per_trigger))
    elapsed, batches = _timed_query(reader.load().selectExpr("length(value) AS n").writeStream.format("noop"))
    if sum(batches) != expected_rows:
        raise RuntimeError(f"streaming read saw {sum(batches)} records, expected {expected_rows}")
    return elapsed, len(batches)


def _copy(spark, bootstrap: str, records: int, per_trigger: int, semantics: str, out: str) -> float:
    """A stream copy of TOPIC into `out` with the pylog sink; seconds until it caught up."""
    h.create_topics(bootstrap, [out], 1)
    reader = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", TOPIC)
              .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", str(per_trigger)))
    elapsed, batches = _timed_query(reader.load().select("key", "value").writeStream.format("pylog")
                                    .option("kafka.bootstrap.servers", bootstrap).option("topic", out)
                                    .option("semantics", semantics))
    if sum(batches) != records:
        raise RuntimeError(f"the stream copy saw {sum(batches)} records, expected {records}")
    return elapsed


def run_sink(spark, bootstrap: str, records: int, reps: int, batches: int) -> list[list]:
    """Rows of SINK_HEADER: medians over `reps` stream copies per semantics."""
    times: dict[str, list[float]] = {"at-least-once": [], "exactly-once": []}
    for rep in range(reps):
        for semantics, got in times.items():
            got.append(_copy(spark, bootstrap, records, -(-records // batches), semantics, f"out-{semantics}-{rep}"))
    base = records / h.median(times["at-least-once"])
    return [[f"writeStream, {k}", records, batches, h.median(v), records / h.median(v),
             f"{records / h.median(v) / base:.2f}"] for k, v in times.items()]


def run(records: int, partitions: int, reps: int, value_size: int, batches: int, master: str = "local[2]",
        zk_connect: str | None = None, sink: bool = False) -> tuple[list[list], list[list]]:
    """Rows of HEADER (medians over `reps` runs of each read of the same topic) and of SINK_HEADER (--sink)."""
    import pylog.spark
    from pylog.spark.job import spark_session
    per_partition = records // partitions
    records = per_partition * partitions
    with h.pylog_cluster(1, zk_connect=zk_connect) as cluster:
        target = h.pylog_target(cluster)
        h.create_topics(cluster.bootstrap, [TOPIC], partitions)
        for p in range(partitions):
            h.produce(target, TOPIC, per_partition, value_size, h.SCENARIOS["1m"], partition=p)
        h.log(f"{records} records in {TOPIC}; starting Spark ({master})")
        spark = spark_session(master, app_name="pylog-bench-spark")
        try:
            pylog.spark.register(spark)
            _batch(spark, cluster.bootstrap, records * value_size)  # warm-up: Python workers, JIT
            times: dict[str, list[float]] = {"batch": [], "stream": [], "micro": []}
            counts = {"batch": 1, "stream": 1, "micro": batches}
            for rep in range(reps):
                h.log(f"rep {rep + 1}/{reps}")
                times["batch"].append(_batch(spark, cluster.bootstrap, records * value_size))
                times["stream"].append(_stream(spark, cluster.bootstrap, records, None)[0])
                elapsed, counts["micro"] = _stream(spark, cluster.bootstrap, records, -(-records // batches))
                times["micro"].append(elapsed)
            sink_rows = run_sink(spark, cluster.bootstrap, records, reps, batches) if sink else []
        finally:
            spark.stop()
    base = records / h.median(times["batch"])
    names = {"batch": "read (batch)", "stream": "readStream, AvailableNow, 1 batch",
             "micro": "readStream, AvailableNow, maxOffsetsPerTrigger"}
    return [[names[k], records, counts[k], h.median(v), records / h.median(v), f"{records / h.median(v) / base:.2f}"]
            for k, v in times.items()], sink_rows


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr); --planner: the planner benchmark."""
    if argv is None:
        argv = sys.argv[1:]
    if "--planner" in argv:
        from pylog.bench.spark_planner import main as planner_main
        return planner_main(argv)
    ap = argparse.ArgumentParser(prog="scripts/bench spark", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=400_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--batches", type=int, default=10, help="micro-batches of the rate-limited stream")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of each read (the median is reported)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--sink", action="store_true", help="also time the pylog sink, exactly-once vs at-least-once")
    args = ap.parse_args(argv)
    print(f"<!-- {h.machine_notes()} -->")
    rows, sink_rows = run(args.records, args.partitions, args.reps, args.value_size, args.batches, args.master,
                          sink=args.sink)
    title = f"{args.value_size} B records, {args.partitions} partitions, RF 1, {args.master}, median of {args.reps}"
    h.print_report(f"spark: {title}", HEADER, rows)
    if sink_rows:
        h.print_report(f"spark sink (stream copy to a 1-partition topic): {title}", SINK_HEADER, sink_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
