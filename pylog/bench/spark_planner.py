"""`scripts/bench spark --planner`: the Spark planning job on a standalone cluster vs local[*] vs the pure core.

For each --partitions size, one seeded synthetic snapshot (--brokers brokers on 4 racks, RF 3) gets the "add 10%
brokers" plan from: the pure core (`plan_reassignment`'s steps timed one by one), the Spark job on `local[*]`,
and the Spark job on a standalone Master + Worker (--cores, --memory) started on loopback from PySpark's own
spark-class (SPARK_LOCAL_IP=127.0.0.1). Columns: `prepare` = phase A on the driver (targets, rack changes,
dealing), `rows` = the job's pandas input frame, `spark` = createDataFrame -> applyInPandas -> toPandas, of which
`mover cpu` is the CPU the mover itself took (summed over tasks; the rest of `spark` is Spark's cost: Arrow,
shuffle, Python workers, scheduling), `transport` = the same Spark stage run again with a function that plans
nothing (Spark's cost alone), `finish` = phase C on the driver (caps, preferred leaders, report). Each
Spark plan is checked equal to the pure core's. Session start is not timed (`session s` shows it); one small
warm-up plan runs first on each session.
"""
from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path
from typing import Sequence

from pylog.bench import _harness as h

HEADER = ["partitions", "planner", "total s", "prepare s", "rows s", "spark s", "mover cpu s", "transport s",
          "finish s", "groups / tasks", "moves", "same plan", "session s"]
PLANNERS = ("pure", "local", "standalone")


def _case(n_parts: int, n_brokers: int):
    from pylog.bench.planner import scenario
    from pylog.planner.synthetic import synthetic_snapshot
    snap = synthetic_snapshot(n_parts, n_brokers, rf=3, n_racks=4, seed=1)
    targets, racks = scenario(snap, "add-10%", 4)
    return snap, targets, racks


def pure_row(n_parts: int, snap, targets, racks) -> tuple[list, object]:
    """The pure core, step by step: (row, plan)."""
    from pylog.planner.model import PlanOptions
    from pylog.planner.plan import finish, prepare, run_group
    t0 = time.perf_counter()
    prep = prepare(snap, None, targets, PlanOptions(), racks)
    t1, cpu = time.perf_counter(), time.process_time()
    new, stats = {}, {}
    for group, idx in prep.groups.items():
        reps, stats[group] = run_group(prep, group)
        new.update(zip(idx, reps))
    t2, cpu = time.perf_counter(), time.process_time() - cpu
    plan = finish(prep, new, stats)
    t3 = time.perf_counter()
    return [n_parts, "pure core", t3 - t0, t1 - t0, "-", "-", cpu, "-", t3 - t2, f"{len(prep.groups)} / -",
            plan.report.replicas_moved, "-", "-"], plan


def transport_s(session, snap, targets, racks) -> float:
    """Seconds of the job's Spark stage with a function that plans nothing (returns each group's rows as they
    are): what shipping the rows to the Python workers, grouping them and bringing them back costs alone."""
    from pylog.planner.model import PlanOptions
    from pylog.planner.plan import prepare
    from pylog.spark.job import IN_SCHEMA, input_rows
    rows = input_rows(prepare(snap, None, targets, PlanOptions(), racks))
    n_slices = max(2, min(64, rows["grp"].nunique(), len(rows) // 20_000 + 2))
    session.conf.set("spark.sql.shuffle.partitions", str(n_slices))
    t = time.perf_counter()
    out = (session.createDataFrame(rows, IN_SCHEMA).groupBy("grp")
           .applyInPandas(lambda pdf: pdf[["idx", "replicas"]], schema="idx long, replicas array<int>").toPandas())
    elapsed = time.perf_counter() - t
    if len(out) != len(rows):
        raise RuntimeError(f"the transport run returned {len(out)} rows of {len(rows)}")
    return elapsed


def spark_rows(kind: str, cases: dict, pure: dict, cores: int, memory: str) -> list[list]:
    """Rows of the Spark job on one kind of master, one per size (same snapshots as the pure rows)."""
    from pylog.spark.job import plan_with_spark, spark_session
    from pylog.spark.standalone import standalone_cluster
    rows = []
    label = "spark local[*]" if kind == "local" else f"spark standalone ({cores} cores)"
    with tempfile.TemporaryDirectory(prefix="pylog-bench-standalone-") as tmp, contextlib.ExitStack() as stack:
        t0 = time.perf_counter()
        master, conf = "local[*]", {}
        if kind == "standalone":
            master = stack.enter_context(standalone_cluster(Path(tmp), cores=cores, memory=memory))
            conf = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                    "spark.executor.memory": memory, "spark.cores.max": str(cores)}
        session = spark_session(master, app_name="pylog-bench-planner", conf=conf)
        stack.callback(session.stop)
        small = _case(2000, 20)
        plan_with_spark(session, small[0], None, small[1], broker_racks=small[2])  # warm-up: workers, JIT
        started = time.perf_counter() - t0
        for n_parts, (snap, targets, racks) in cases.items():
            h.log(f"{label}: planning {n_parts} partitions")
            times: dict[str, float] = {}
            t = time.perf_counter()
            plan = plan_with_spark(session, snap, None, targets, broker_racks=racks, timings=times)
            total = time.perf_counter() - t
            same = "-" if n_parts not in pure else ("yes" if plan.proposed == pure[n_parts].proposed else "NO")
            moved = transport_s(session, snap, targets, racks)
            rows.append([n_parts, label, total, times["prepare"], times["rows"], times["spark"], times["mover"], moved,
                         times["finish"], f"{int(times['groups'])} / {int(times['tasks'])}",
                         plan.report.replicas_moved, same, started])
            h.log(f"  {rows[-1]}")
    return rows


def run(sizes: Sequence[int], n_brokers: int, planners: Sequence[str], cores: int, memory: str) -> list[list]:
    """All rows: the pure core first (its plans are the reference), then each Spark master."""
    cases = {n: _case(n, n_brokers) for n in sizes}
    rows, pure = [], {}
    if "pure" in planners:
        for n, (snap, targets, racks) in cases.items():
            h.log(f"pure core: planning {n} partitions")
            row, pure[n] = pure_row(n, snap, targets, racks)
            rows.append(row)
    for kind in ("local", "standalone"):
        if kind in planners:
            rows += spark_rows(kind, cases, pure, cores, memory)
    return rows


def main(argv: Sequence[str]) -> int:
    """`scripts/bench spark --planner [...]`: prints a Markdown table on stdout (progress on stderr)."""
    import argparse
    ap = argparse.ArgumentParser(prog="scripts/bench spark --planner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--planner", action="store_true", required=True)
    ap.add_argument("--partitions", default="100000,1000000", help="comma-separated sizes")
    ap.add_argument("--brokers", type=int, default=100)
    ap.add_argument("--planners", default=",".join(PLANNERS), help=f"any of {','.join(PLANNERS)}")
    ap.add_argument("--cores", type=int, default=2, help="the standalone Worker's cores")
    ap.add_argument("--memory", default="4g", help="the standalone Worker's and executors' memory")
    args = ap.parse_args(argv)
    planners = [p.strip() for p in args.planners.split(",") if p.strip()]
    unknown = sorted(set(planners) - set(PLANNERS))
    if unknown or not planners:
        ap.error(f"--planners: expected some of {', '.join(PLANNERS)}, got {args.planners!r}")
    sizes = [int(s) for s in args.partitions.split(",") if s.strip()]
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(sizes, args.brokers, planners, args.cores, args.memory)
    h.print_report(f"spark planner: add 10% brokers to {args.brokers}, RF 3, 4 racks", HEADER, rows)
    return 0
