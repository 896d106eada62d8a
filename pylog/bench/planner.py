"""`scripts/bench planner`: our planner vs Kafka's --generate on synthetic clusters (time, moves, lower bounds).

Scenarios: add 10% brokers (spread over the racks), and remove one rack. Each row times one planner on the same
snapshot; `cpu s` is this process's CPU time (the machine may be shared: wall times are upper bounds). With
--spark the Spark job on local[*] is timed too, next to the pure core's time on the same snapshot. With
--oracle N, N small random clusters per layout are planned and compared with the exact min-cost-flow oracle.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

from pylog.planner.kafka_generate import broker_metadata, calculate_assignment
from pylog.planner.leaders import plan_leader_bound
from pylog.planner.model import Broker, Partition, PlanOptions, Snapshot
from pylog.planner.plan import plan_reassignment
from pylog.planner.synthetic import synthetic_snapshot

HEADER = ("partitions", "brokers", "scenario", "planner", "time s", "cpu s", "moves", "lower bound",
          "topic bound", "bytes moved", "leader changes", "leader bound", "spread r/t/l/tl")


def scenario(snapshot: Snapshot, name: str, n_racks: int) -> tuple[list[int], dict[int, str]]:
    """Target broker list and racks of new brokers for a scenario."""
    ids = [b.id for b in snapshot.brokers]
    if name == "add-10%":
        new = list(range(max(ids) + 1, max(ids) + 1 + max(1, len(ids) // 10)))
        return ids + new, {b: f"r{b % n_racks}" for b in new}
    if name == "remove-rack":
        return [b.id for b in snapshot.brokers if b.rack != f"r{n_racks - 1}"], {}
    raise ValueError(name)


def kafka_generate_row(snapshot: Snapshot, targets: list[int], racks: dict[int, str]
                       ) -> tuple[float, float, int, int, int, int]:
    """Wall time, CPU time, moves, bytes moved, leader changes and their bound for Kafka's --generate (seeded)."""
    meta = [(b.id, b.rack) for b in snapshot.brokers] + sorted(racks.items())
    start, cpu = time.perf_counter(), time.process_time()
    current = {p.tp: p.replicas for p in snapshot.partitions}
    proposed = calculate_assignment(current, broker_metadata(meta, targets), rng=random.Random(0))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    sizes = {p.tp: p.size_bytes or 0 for p in snapshot.partitions}
    moves = moved_bytes = leader_changes = 0
    for tp, reps in proposed.items():
        n = len(set(reps) - set(current[tp]))
        moves += n
        moved_bytes += n * sizes[tp]
        leader_changes += reps[0] != current[tp][0]
    tps = sorted(current)
    bound = plan_leader_bound([t for t, _ in tps], [current[tp][0] for tp in tps], [proposed[tp] for tp in tps],
                              sorted(targets), True)
    return elapsed, cpu, moves, moved_bytes, leader_changes, bound


def _plan_row(label: str, n_parts: int, n_brokers: int, name: str, plan, elapsed: float, cpu: float | None) -> tuple:
    r = plan.report
    spread = f"{r.replica_spread}/{r.max_topic_spread}/{r.leader_spread}/{r.max_topic_leader_spread}"
    return (n_parts, n_brokers, name, label, f"{elapsed:.1f}", "-" if cpu is None else f"{cpu:.1f}",
            r.replicas_moved, r.lower_bound, r.topic_lower_bound, r.bytes_moved, r.leader_changes, r.leader_bound,
            spread)


def run(sizes: Sequence[int], broker_counts: Sequence[int], scenarios: Sequence[str], spark: bool,
        topic_balance_off: bool, n_racks: int = 4) -> list[tuple]:
    """All rows of the benchmark table."""
    rows = []
    session = None
    for n_parts in sizes:
        for n_brokers in broker_counts:
            snap = synthetic_snapshot(n_parts, n_brokers, rf=3, n_racks=n_racks, seed=1)
            for name in scenarios:
                targets, racks = scenario(snap, name, n_racks)
                variants = [("pylog", PlanOptions())]
                if topic_balance_off:
                    variants.append(("pylog --no-topic-balance", PlanOptions(topic_balance=False)))
                for label, opts in variants:
                    start, cpu = time.perf_counter(), time.process_time()
                    plan = plan_reassignment(snap, None, targets, opts, broker_racks=racks)
                    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
                    rows.append(_plan_row(label, n_parts, n_brokers, name, plan, elapsed, cpu))
                    print(_fmt(rows[-1]), "\n   ", "; ".join(plan.report.gap_reasons), file=sys.stderr, flush=True)
                    if label == "pylog":
                        pure = plan
                if spark:
                    from pylog.spark.job import plan_with_spark, spark_session
                    session = session or spark_session("local[*]")
                    start = time.perf_counter()
                    plan = plan_with_spark(session, snap, None, targets, PlanOptions(), broker_racks=racks)
                    elapsed = time.perf_counter() - start
                    same = "same plan" if plan.proposed == pure.proposed else "DIFFERENT PLAN"
                    rows.append(_plan_row(f"pylog spark local[*] ({same})", n_parts, n_brokers, name, plan,
                                          elapsed, None))
                    print(_fmt(rows[-1]), file=sys.stderr, flush=True)
                elapsed, cpu, moves, moved_bytes, changes, bound = kafka_generate_row(snap, targets, racks)
                rows.append((n_parts, n_brokers, name, "kafka --generate", f"{elapsed:.1f}", f"{cpu:.1f}", moves,
                             pure.report.lower_bound, pure.report.topic_lower_bound, moved_bytes, changes, bound,
                             "-"))
                print(_fmt(rows[-1]), file=sys.stderr, flush=True)
    if session is not None:
        session.stop()
    return rows


def _random_cluster(rng: random.Random, layout: str) -> tuple[Snapshot, list[int], dict[int, str]] | None:
    from pylog.planner.assignment import assign_replicas_to_brokers
    n = rng.randint(3, 8)
    n_racks = 0 if layout == "no racks" else rng.randint(2, 3)
    if layout == "kafka racks":
        rack = {b: f"r{b % n_racks}" for b in range(n)}
    else:
        rack = {b: (f"r{rng.randrange(n_racks)}" if n_racks else None) for b in range(n)}
    parts = []
    for t in range(rng.randint(1, 3)):
        if layout == "kafka racks":
            rf = rng.randint(1, min(3, n, len(set(rack.values()))))
            laid = assign_replicas_to_brokers([(b, rack[b]) for b in range(n)], rng.randint(1, 8), rf, rng=rng)
            parts += [Partition(f"t{t}", p, reps) for p, reps in laid.items()]
        else:
            rf = rng.randint(1, min(3, n))
            parts += [Partition(f"t{t}", p, rng.sample(range(n), rf)) for p in range(rng.randint(1, 8))]
    targets = [b for b in range(n) if rng.random() < 0.8] + list(range(n, n + rng.randint(0, 3)))
    new_racks = {b: f"r{b % n_racks}" for b in targets if b >= n} if n_racks else {}
    if len(targets) < max(len(p.replicas) for p in parts):
        return None
    return Snapshot([Broker(b, rack[b]) for b in range(n)], parts), targets, new_racks


def oracle_rows(samples: int, seed: int = 0) -> list[tuple]:
    """Per layout: how often the plan is balanced when it can be, takes the oracle's fewest moves, and changes
    the fewest leaders (for its replica sets; and against the fewest of any plan with the fewest moves)."""
    from pylog.planner.oracle import balanced_bounds, fewest_orphans, leader_optimum, optimum, topic_bounds
    rng = random.Random(seed)
    rows = []
    for layout in ("no racks", "kafka racks", "any racks"):
        feasible = balanced = optimal = bound_reached = reachable = extra = 0
        leaders_balanced = leader_best = leader_floor = 0
        for _ in range(samples):
            case = _random_cluster(rng, layout)
            if case is None:
                continue
            snap, targets, new_racks = case
            racks = {b.id: b.rack for b in snap.brokers}
            racks.update(new_racks)
            plan = plan_reassignment(snap, None, targets, broker_racks=new_racks)
            bounds = (snap.partitions, targets, {b: racks.get(b) for b in targets},
                      balanced_bounds(snap.partitions, targets), topic_bounds(snap.partitions, targets))
            best = optimum(*bounds)
            if best is None:
                continue
            r = plan.report
            feasible += 1
            balanced += r.replica_spread <= 1 and r.max_topic_spread <= 1
            optimal += r.replicas_moved == best
            extra += r.replicas_moved - best
            if best == r.topic_lower_bound:
                reachable += 1
                bound_reached += r.replicas_moved == best
            fewest, as_balanced = _leader_oracle(snap, plan, targets)
            leaders_balanced += as_balanced
            leader_best += r.leader_changes == fewest
            leader_floor += r.leader_changes == max(r.leader_bound, fewest_orphans(*bounds) or 0)
        rows.append((layout, feasible, balanced, optimal, extra, reachable, bound_reached, leaders_balanced,
                     leader_best, leader_floor))
    return rows


def _leader_oracle(snap: Snapshot, plan, targets: list[int]) -> tuple[int | None, bool]:
    """(fewest leader changes for the plan's replica sets at the plan's leader balance, whether the plan's
    leaders are as balanced as those replica sets allow: per topic first, then overall)."""
    from pylog.planner.oracle import leader_optimum
    parts = snap.partitions
    args = ([p.topic for p in parts], [p.replicas[0] for p in parts], [plan.proposed[p.tp] for p in parts], targets)
    r = plan.report
    topic_ok, overall_ok = r.max_topic_leader_spread <= 1, r.leader_spread <= 1
    could_topic = leader_optimum(*args, overall=False) is not None
    could_both = could_topic and leader_optimum(*args) is not None
    could_overall = leader_optimum(*args, per_topic=False) is not None
    as_balanced = (topic_ok or not could_topic) and (overall_ok or not (could_both or (not could_topic
                                                                                     and could_overall)))
    return leader_optimum(*args, per_topic=balanced_topics(plan, targets), overall=overall_ok), as_balanced


def balanced_topics(plan, targets: Sequence[int]) -> set[str]:
    """Topics whose preferred leaders the plan keeps within one over the target brokers."""
    counts: dict[str, dict[int, int]] = {}
    for (topic, _), reps in plan.proposed.items():
        per = counts.setdefault(topic, {b: 0 for b in targets})
        per[reps[0]] = per.get(reps[0], 0) + 1
    return {t for t, per in counts.items() if max(per.values()) - min(per.values()) <= 1}


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
    ap.add_argument("--oracle", type=int, default=0, metavar="N",
                    help="also compare with the exact oracle on N small random clusters per layout")
    args = ap.parse_args(argv)
    if args.oracle:
        header = ("layout", "balanced within one possible", "plan balanced", "plan optimal", "extra moves",
                  "bound reachable", "bound reached", "leaders as balanced as possible", "fewest leader changes",
                  "leader floor reached")
        print(_fmt(header))
        print("|" + "---|" * len(header))
        for row in oracle_rows(args.oracle):
            print(_fmt(row), flush=True)
        print()
    if args.partitions:
        rows = run([int(x) for x in args.partitions.split(",")], [int(x) for x in args.brokers.split(",")],
                   args.scenarios.split(","), args.spark, args.no_topic_balance)
        print(_fmt(HEADER))
        print("|" + "---|" * len(HEADER))
        for row in rows:
            print(_fmt(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
