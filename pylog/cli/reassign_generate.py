"""--generate and --export-snapshot: plan a reassignment of some topics onto a broker list.

The default planner is pylog's minimal-movement one (pylog.planner.plan, or the same plan made on
Spark with --spark); `--planner kafka` is Kafka's own --generate, which ignores where replicas are.
The input is a live cluster (ZooKeeper or a broker) or a --cluster-snapshot file. Like Kafka, the
proposal lists every partition of the topics, so runbooks can pass it to --execute as it is (unchanged
partitions are no-ops there, as in Kafka, apart from a leader-epoch bump); --changed-only lists only
the partitions whose replicas change.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pylog.cli.common import OperationError
from pylog.cli.reassign_cluster import ClusterView
from pylog.cli.reassign_results import GeneratedPlan, SnapshotExported
from pylog.cli.reassign_wait import step
from pylog.common.types import TP
from pylog.planner.formats import dump_snapshot, load_snapshot, parse_broker_list, parse_topics_to_move_json
from pylog.planner.kafka_generate import broker_metadata, calculate_assignment
from pylog.planner.model import PlanError, PlanOptions, Snapshot
from pylog.planner.plan import Plan, plan_reassignment, prepare
from pylog.planner.report import build_report


@dataclass(frozen=True)
class GenerateOptions:
    """What --generate was asked for beyond the topics and brokers."""

    planner: str = "pylog"              # or "kafka"
    options: PlanOptions = PlanOptions()
    broker_racks: Mapping[int, str] | None = None
    spark: bool = False
    spark_master: str = "local[*]"
    # With --spark on a live cluster (--bootstrap-server): where the job reads load (sizes, rates) from,
    # __pylog_partition_load or else the __pylog_metrics samples.
    load_bootstrap: str | None = None
    # Kafka proposes every partition of the topics, and scripts feed that to --execute even when nothing
    # moves (a no-op there); --changed-only keeps just the partitions whose replica list changes.
    changed_only: bool = False


def parse_broker_racks(text: str | None) -> dict[int, str]:
    """--broker-racks 3:r1,4:r2."""
    racks: dict[int, str] = {}
    for item in filter(None, (i.strip() for i in (text or "").split(","))):
        broker, _, rack = item.partition(":")
        if not broker.strip().isdigit() or not rack.strip():
            raise OperationError(f"--broker-racks expects BROKER:RACK pairs separated by commas, got {item!r}")
        racks[int(broker)] = rack.strip()
    return racks


def as_reassignment(assignment: Mapping[TP, Sequence[int]]) -> dict:
    """Kafka's reassignment document (formatAsReassignmentJson) as data: sorted, log_dirs all "any"."""
    return {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(assignment[(t, p)]),
         "log_dirs": ["any"] * len(assignment[(t, p)])} for t, p in sorted(assignment)]}


def read_text(path: str) -> str:
    """A JSON input file's text (Utils.readFileAsString)."""
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _live_snapshot(cluster: ClusterView, topics: Sequence[str]) -> Snapshot:
    snapshot = cluster.snapshot(topics)
    present = {p.topic for p in snapshot.partitions}
    missing = [t for t in topics if t not in present]
    if missing and cluster.via == "bootstrap-server":
        # What Kafka 3.3's describeTopics reports for the first missing topic.
        raise OperationError(f"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                             f"Topic {missing[0]} not found.")
    return snapshot


def _kafka_plan(snapshot: Snapshot, topics: Sequence[str], brokers: Sequence[int], opts: GenerateOptions,
                live: bool) -> Plan:
    """Kafka's calculateAssignment over the brokers it would see, with pylog's report of the result."""
    known = [(b.id, b.rack) for b in snapshot.brokers]
    if not live:  # a snapshot's --broker-list may name new, empty brokers (with --broker-racks)
        racks = dict(opts.broker_racks or {})
        known += [(b, racks.get(b)) for b in brokers if b not in {k for k, _ in known}]
        known.sort()
    metadata = broker_metadata(known, brokers, opts.options.rack_aware)
    wanted = set(topics)
    current = {p.tp: list(p.replicas) for p in snapshot.partitions if p.topic in wanted}
    proposed = calculate_assignment(current, metadata)  # Kafka's own errors (e.g. RF > brokers) come first
    prep = prepare(snapshot, topics, [b for b, _ in metadata], opts.options, opts.broker_racks)
    rows = [proposed[p.tp] for p in prep.partitions]
    report = build_report(prep, rows, {}, None, 0, planner="kafka")
    return Plan(current, dict(proposed), report)


def generate(cluster: ClusterView | None, snapshot_path: str | None, topics_file: str, broker_list: str,
             opts: GenerateOptions) -> GeneratedPlan:
    """The --generate action: parse, read the cluster (or snapshot), plan, and return both documents."""
    brokers = parse_broker_list(broker_list)
    topics = parse_topics_to_move_json(read_text(topics_file))
    if cluster is None:
        snapshot = load_snapshot(snapshot_path or "")
    else:
        snapshot = _live_snapshot(cluster, topics)
        unknown = sorted(set(brokers) - {b.id for b in snapshot.brokers})
        if unknown and opts.planner != "kafka":  # Kafka silently drops them; a plan onto them could not run
            raise OperationError(f"Broker(s) {','.join(map(str, unknown))} in --broker-list are not registered in "
                                 f"the cluster; to plan for brokers that do not exist yet, use --cluster-snapshot "
                                 f"(and --broker-racks)")
    start = time.perf_counter()
    try:
        if opts.planner == "kafka":
            plan = _kafka_plan(snapshot, topics, brokers, opts, cluster is not None)
            proposed = plan.proposed
        else:
            if opts.spark:
                from pylog.spark.job import run
                step(f"Planning {len(snapshot.partitions)} partition(s) with Spark ({opts.spark_master})")
                plan = run(snapshot, topics, brokers, opts.options, opts.broker_racks, opts.spark_master,
                           opts.load_bootstrap)
                step(f"Spark plan ready after {time.perf_counter() - start:.1f} s")
            else:
                plan = plan_reassignment(snapshot, topics, brokers, opts.options, opts.broker_racks)
            proposed = plan.changed() if opts.changed_only else plan.proposed
    except PlanError as exc:
        raise OperationError(str(exc)) from None
    plan.report.elapsed_s = time.perf_counter() - start
    return GeneratedPlan(as_reassignment(plan.current), as_reassignment(proposed),
                         "kafka" if opts.planner == "kafka" else ("pylog-spark" if opts.spark else "pylog"),
                         plan.report.to_dict(), "snapshot" if cluster is None else cluster.via)


def export_snapshot(cluster: ClusterView, path: str) -> SnapshotExported:
    """--export-snapshot: every broker and partition of the live cluster, with sizes where brokers tell them."""
    snapshot = cluster.snapshot(None)
    dump_snapshot(snapshot, path)
    sizes_known = bool(snapshot.partitions) and all(p.size_bytes is not None for p in snapshot.partitions)
    return SnapshotExported(path, len(snapshot.brokers), len(snapshot.partitions), sizes_known, cluster.via)
