"""The Spark planning job: phase A (targets, rack changes, dealing) in the driver, phase B (the per-topic mover)
on the executors, phase C (caps, leaders, report) in the driver -- the same functions as the pure core, so the
plan is identical to `plan_reassignment`'s. Each row carries a partition and its rack changes; the per-topic
targets travel as a broadcast variable (in the function's closure over Spark Connect, which has no SparkContext)."""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence

from pylog.planner.model import PlanOptions, Snapshot
from pylog.planner.mover import TopicStats, plan_topic
from pylog.planner.plan import Plan, finish, prepare, plan_reassignment
from pylog.planner.report import load_summary
from pylog.spark.cds import archive_for_driver, with_archive

__all__ = ["spark_session", "plan_with_spark", "run"]

IN_SCHEMA = "grp string, idx long, replicas array<int>, size long, dep_src array<int>, dep_rack array<int>"
_OUT_SCHEMA = "idx long, replicas array<int>, rack_fix int, detour int, unbalanced int, mover_s double"


def spark_session(master: str | None = "local[*]", app_name: str = "pylog-planner",
                  conf: Mapping[str, str] | None = None):
    """A SparkSession whose Python workers run this interpreter (the venv), UI off, few shuffle partitions.

    `master` None: spark-submit's --master when launched by it, else local[*]."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    if master is not None and master.startswith("sc://"):  # Spark Connect: the server owns the configuration
        session = SparkSession.builder.remote(master).appName(app_name).getOrCreate()
        for key, value in (conf or {}).items():  # runtime settings only (the server fixed the static ones)
            session.conf.set(key, value)
        return session
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit
        master = "local[*]"
    builder = SparkSession.builder if master is None else SparkSession.builder.master(master)
    builder = (builder.appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8" if (master or "").startswith("local") else "200")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               # Workers fork from a daemon that imported the data source and kafka-python once (daemon.py).
               .config("spark.python.daemon.module", "pylog.spark.daemon")
               .config("spark.driver.memory", os.environ.get("PYLOG_SPARK_DRIVER_MEMORY", "4g")))
    # Spark's JVMs map their classes from the archive scripts/setup made, if any (cds.py): half the start-up.
    archive_for_driver()
    for key, value in with_archive(conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def input_rows(prep):
    """One pandas row per planned partition: its group (topic), replicas, size and rack departures."""
    import pandas as pd
    leaving: dict[int, list[tuple[int, int]]] = {}
    for deps in prep.departures.values():
        for i, src, rack in deps:
            leaving.setdefault(i, []).append((src, rack))
    order = [(g, i) for g, idx in prep.groups.items() for i in idx]
    return pd.DataFrame({
        "grp": [g for g, _ in order],
        "idx": [i for _, i in order],
        "replicas": [list(prep.partitions[i].replicas) for _, i in order],
        "size": [prep.partitions[i].size_bytes or 0 for _, i in order],
        "dep_src": [[s for s, _ in leaving.get(i, ())] for _, i in order],
        "dep_rack": [[r for _, r in leaving.get(i, ())] for _, i in order],
    })


def _group_planner(ctx, targets, shipped):
    """The applyInPandas function: phase B (the per-topic mover) for one group, timed on the executor."""
    def plan_group(pdf):
        import pandas as pd
        start = time.process_time()
        pdf = pdf.sort_values("idx")
        group = pdf["grp"].iloc[0]
        levels, extras = (shipped if targets is None else targets.value)[group]
        parts = [(int(i), [int(b) for b in reps], int(s)) for i, reps, s in
                 zip(pdf["idx"], pdf["replicas"], pdf["size"])]
        deps = [(int(i), int(s), int(r)) for i, srcs, racks in zip(pdf["idx"], pdf["dep_src"], pdf["dep_rack"])
                for s, r in zip(srcs, racks)]
        new, stats = plan_topic(parts, levels, extras, ctx, deps)
        n = len(new)
        pad = [0] * (n - 1)  # a group's figures ride on its first row
        return pd.DataFrame({"idx": [p[0] for p in parts], "replicas": new,
                             "rack_fix": [stats.rack_fix_moves] + pad, "detour": [stats.detour_moves] + pad,
                             "unbalanced": [stats.unbalanced] + pad,
                             "mover_s": [time.process_time() - start] + [0.0] * (n - 1)})
    return plan_group


def plan_with_spark(spark, snapshot: Snapshot, topics: Sequence[str] | None, broker_list: Sequence[int] | None,
                    options: PlanOptions = PlanOptions(), broker_racks: Mapping[int, str] | None = None,
                    timings: dict[str, float] | None = None) -> Plan:
    """The plan `plan_reassignment` would make, with the per-topic work fanned out on Spark.

    `timings`, when given, gets each step's wall seconds (prepare, rows, spark, finish), `mover`: the CPU
    seconds the executors spent in the mover itself (the rest of `spark` is Spark's own cost), and the number
    of `groups` (applyInPandas calls) and `tasks`."""
    if options.balance_by == "bytes":  # bytes balancing is one global pass: nothing to fan out
        return plan_reassignment(snapshot, topics, broker_list, options, broker_racks)
    clock = time.perf_counter()
    times = timings if timings is not None else {}

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = now - clock
        clock = now

    prep = prepare(snapshot, topics, broker_list, options, broker_racks)
    lap("prepare")
    per_group = {g: (prep.levels[g], prep.extras[g]) for g in prep.groups}
    # A Spark Connect session has no SparkContext to broadcast with: the targets then travel in the function.
    targets = None if _is_connect(spark) else spark.sparkContext.broadcast(per_group)
    shipped = per_group if targets is None else None  # what the function's closure carries: nothing when broadcast
    rows = input_rows(prep)
    lap("rows")
    # About 20k partitions per task: enough to keep the executors busy, few tasks for small plans.
    n_slices = max(2, min(64, len(prep.groups), len(rows) // 20_000 + 2))
    times["groups"], times["tasks"] = len(prep.groups), n_slices
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(n_slices))
    try:
        df = spark.createDataFrame(rows, IN_SCHEMA)
        out = df.groupBy("grp").applyInPandas(_group_planner(prep.ctx, targets, shipped), schema=_OUT_SCHEMA).toPandas()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
        if targets is not None:
            targets.unpersist()
    lap("spark")
    times["mover"] = float(out["mover_s"].sum())
    new = {int(i): [int(b) for b in reps] for i, reps in zip(out["idx"], out["replicas"])}
    stats = {"spark": TopicStats(int(out["rack_fix"].sum()), int(out["detour"].sum()), int(out["unbalanced"].sum()))}
    plan = finish(prep, new, stats)
    lap("finish")
    return plan


def _is_connect(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def run(snapshot: Snapshot, topics: Sequence[str] | None, broker_list: Sequence[int] | None,
        options: PlanOptions = PlanOptions(), broker_racks: Mapping[int, str] | None = None,
        master: str | None = "local[*]", metrics_bootstrap: str | None = None,
        metrics_window_ms: int | None = None) -> Plan:
    """The whole pipeline: (optionally) the cluster's load -- `__pylog_partition_load` when the load job keeps it,
    else the `__pylog_metrics` samples aggregated here -- then the plan on Spark; the report says which."""
    spark = spark_session(master)
    source = None
    if metrics_bootstrap:
        from pylog.spark.load import planner_load
        from pylog.spark.metrics import apply_load
        rows, source = planner_load(spark, metrics_bootstrap, metrics_window_ms)
        snapshot = apply_load(snapshot, rows)
    plan = plan_with_spark(spark, snapshot, topics, broker_list, options, broker_racks)
    if source is not None:
        planned = [p for p in snapshot.partitions if p.tp in plan.current]
        plan.report.load = load_summary(planned, plan.proposed, source)
    return plan
