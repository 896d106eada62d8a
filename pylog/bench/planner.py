"""`scripts/bench planner`: our planner vs Kafka's --generate on synthetic clusters (time, moves, lower bound).

Scenarios: add 10% brokers (spread over the racks), and remove one rack. Spark local is timed too with --spark.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

from pylog.planner.kafka_generate import broker_metadata, calculate_assignment
from pylog.planner.model import PlanOptions, Snapshot
from pylog.planner.plan import plan_reassignment
from pylog.planner.synthetic import synthetic_snapshot

HEADER = ("partitions", "brokers", "scenario", "planner", "time s", "moves", "lower bound", "bytes moved")


def scenario(snapshot: Snapshot, name: str, n_racks: int) -> tuple[list[int], dict[int, str]]:
    """Target broker list and racks of new brokers for a scenario."""
    ids = [b.id for b in snapshot.brokers]
    if name == "add-10%":
        new = list(range(max(ids) + 1, max(ids) + 1 + max(1, len(ids) // 10)))
        return ids + new, {b: f"r{b % n_racks}" for b in new}
    if name == "remove-rack":
        return [b.id for b in snapshot.brokers if b.rack != f"r{n_racks - 1}"], {}
    raise ValueError(name)


def kafka_generate_row(snapshot: Snapshot, targets: list[int], racks: dict[int, str]) -> tuple[float, int, int]:
    """Time, moves and bytes moved by Kafka's --generate (seeded) on the same input."""
    meta = [(b.id, b.rack) for b in snapshot.brokers] + sorted(racks.items())
    start = time.perf_counter()
    current = {p.tp: p.replicas for p in snapshot.partitions}
    proposed = calculate_assignment(current, broker_metadata(meta, targets), rng=random.Random(0))
    elapsed = time.perf_counter() - start
    sizes = {p.tp: p.size_bytes or 0 for p in snapshot.partitions}
    moves = moved_bytes = 0
    for tp, reps in proposed.items():
        n = len(set(reps) - set(current[tp]))
        moves += n
        moved_bytes += n * sizes[tp]
    return elapsed, moves, moved_bytes


def run(sizes: Sequence[int], broker_counts: Sequence[int], scenarios: Sequence[str], spark: bool,
        topic_balance_off: bool, n_racks: int = 4) -> list[tuple]:
    """All rows of the benchmark table."""
    rows = []
    for n_parts in sizes:
        for n_brokers in broker_counts:
            snap = synthetic_snapshot(n_parts, n_brokers, rf=3, n_racks=n_racks, seed=1)
            for name in scenarios:
                targets, racks = scenario(snap, name, n_racks)
                variants = [("pylog", PlanOptions())]
                if topic_balance_off:
                    variants.append(("pylog --no-topic-balance", PlanOptions(topic_balance=False)))
                for label, opts in variants:
                    start = time.perf_counter()
                    plan = plan_reassignment(snap, None, targets, opts, broker_racks=racks)
                    elapsed = time.perf_counter() - start
                    r = plan.report
                    rows.append((n_parts, n_brokers, name, label, f"{elapsed:.1f}", r.replicas_moved,
                                 r.lower_bound, r.bytes_moved))
                    print(_fmt(rows[-1]), f"  (per-topic bound {r.topic_lower_bound}, spread {r.replica_spread},"
                          f" topic spread {r.max_topic_spread}, leader spread {r.leader_spread})",
                          file=sys.stderr, flush=True)
                if spark:
                    from pylog.spark.job import plan_with_spark, spark_session
                    session = spark_session("local[*]")
                    start = time.perf_counter()
                    plan = plan_with_spark(session, snap, None, targets, PlanOptions(), broker_racks=racks)
                    elapsed = time.perf_counter() - start
                    rows.append((n_parts, n_brokers, name, "pylog spark local[*]", f"{elapsed:.1f}",
                                 plan.report.replicas_moved, plan.report.lower_bound, plan.report.bytes_moved))
                    print(_fmt(rows[-1]), file=sys.stderr, flush=True)
                elapsed, moves, moved_bytes = kafka_generate_row(snap, targets, racks)
                rows.append((n_parts, n_brokers, name, "kafka --generate", f"{elapsed:.1f}", moves,
                             rows[-1][6], moved_bytes))
                print(_fmt(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _fmt(row: Sequence) -> str:
    return "| " + " | ".join(str(c) for c in row) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench planner", description=__doc__)
    ap.add_argument("--partitions", default="10000,100000,1000000", help="comma-separated partition counts")
    ap.add_argument("--brokers", default="100,1000", help="comma-separated broker counts")
    ap.add_argument("--scenarios", default="add-10%,remove-rack")
    ap.add_argument("--spark", action="store_true", help="also time the Spark job on local[*]")
    ap.add_argument("--no-topic-balance", action="store_true", help="also run with overall balance only")
    args = ap.parse_args(argv)
    rows = run([int(x) for x in args.partitions.split(",")], [int(x) for x in args.brokers.split(",")],
               args.scenarios.split(","), args.spark, args.no_topic_balance)
    print(_fmt(HEADER))
    print("|" + "---|" * len(HEADER))
    for row in rows:
        print(_fmt(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
