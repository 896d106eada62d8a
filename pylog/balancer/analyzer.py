"""Proposals: pylog's minimal-movement planner behind Cruise Control's optimization result.

The planner balances replica counts (overall and per topic), keeps replicas on distinct racks and
balances preferred leaders with the fewest changes; those are Cruise Control's RackAwareGoal,
ReplicaDistributionGoal, TopicReplicaDistributionGoal and LeaderReplicaDistributionGoal. With
`DiskUsageDistributionGoal` asked for, it balances bytes on disk instead of counts. Every result also
carries the planner's proven lower bounds (`pylogLowerBounds`), so a user can see how far a proposal
is from the fewest moves any plan could make.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pylog.balancer.cluster import MB, ClusterFacts, load_body
from pylog.balancer.config import BalancerConfig
from pylog.balancer.goals import CHECKED_GOALS, HARD_GOALS, check, refuse_hard_violations
from pylog.balancer.load import Capacity, broker_loads, with_capacity
from pylog.balancer.monitor import PartitionLoad
from pylog.common.types import TP
from pylog.planner.model import Broker, Partition, PlanError, PlanOptions, Snapshot
from pylog.planner.plan import Plan, plan_reassignment

COUNT_GOALS = ("RackAwareGoal", "ReplicaDistributionGoal", "TopicReplicaDistributionGoal",
               "LeaderReplicaDistributionGoal")
DISK_GOAL = "DiskUsageDistributionGoal"
KNOWN_GOALS = COUNT_GOALS + (DISK_GOAL,) + CHECKED_GOALS


class ProposalError(ValueError):
    """A request the analyzer refuses (unknown goal, impossible broker change); one line for the user."""


@dataclass
class Proposal:
    """A plan for the cluster: what changes, and Cruise Control's optimization result for it."""

    changed: dict[TP, list[int]]
    current: dict[TP, list[int]]
    body: dict
    removed_brokers: list[int]


def parse_goals(text: str | None) -> tuple[str, ...]:
    """The `goals` parameter: Cruise Control goal names (short or fully qualified) pylog can honour."""
    if not text:
        return COUNT_GOALS
    goals = tuple(g.strip().rsplit(".", 1)[-1] for g in text.split(",") if g.strip())
    unknown = [g for g in goals if g not in KNOWN_GOALS]
    if unknown:
        raise ProposalError(f"Unsupported goals {unknown}: pylog's planner provides {list(KNOWN_GOALS)}")
    return goals


def _snapshot(facts: ClusterFacts, excluded: re.Pattern | None) -> tuple[Snapshot, list[str] | None]:
    brokers = [Broker(b, rack) for b, rack in sorted(facts.metadata.brokers.items())]
    parts, topics = [], set()
    for (t, p), reps in sorted(facts.replicas.items()):
        size = None
        if facts.sizes is not None:
            found = [facts.sizes[((t, p), r)] for r in reps if ((t, p), r) in facts.sizes]
            size = max(found) if found else None
        parts.append(Partition(t, p, list(reps), size))
        if excluded is None or not excluded.fullmatch(t):
            topics.add(t)
    return Snapshot(brokers, parts), (None if excluded is None else sorted(topics))


def targets_for(action: str, ids: Sequence[int], facts: ClusterFacts, exclude: Iterable[int] = ()) -> list[int]:
    """The brokers the cluster should end up on for rebalance, add_broker or remove_broker."""
    alive = set(facts.metadata.brokers)
    if action == "rebalance":
        # Dead brokers' replicas are moved off, empty live brokers filled; `exclude` (recently removed
        # brokers, for self-healing) stay out unless nothing else is left.
        return sorted(alive - set(exclude)) or sorted(alive)
    if action == "add_broker":
        missing = sorted(set(ids) - alive)
        if missing:
            raise ProposalError(f"Broker(s) {missing} are not alive: start them before adding them")
        return sorted((facts.holders() & alive) | set(ids))
    unknown = sorted(set(ids) - alive - facts.holders())
    if unknown:
        raise ProposalError(f"Broker(s) {unknown} are not part of the cluster")
    return sorted(alive - set(ids))


def _violated(values: Mapping[int, float], threshold: float) -> bool:
    """Cruise Control's balance test: every broker within [avg*(2-t), avg*t] (rounded outwards)."""
    if not values:
        return False
    avg = sum(values.values()) / len(values)
    upper, lower = math.ceil(avg * threshold), math.floor(avg * max(0.0, 2 - threshold))
    return any(v > upper or v < lower for v in values.values())


def _goal_summary(goals: Sequence[str], plan: Plan, cfg: BalancerConfig, elapsed_ms: int) -> list[dict]:
    rows = [b for b in plan.report.brokers if b.role != "removed"]
    gone = sum(b.replicas_after for b in plan.report.brokers if b.role == "removed")
    before_after = {
        "ReplicaDistributionGoal": ("replicas", cfg["replica.count.balance.threshold"]),
        "LeaderReplicaDistributionGoal": ("leaders", cfg["leader.replica.count.balance.threshold"]),
        DISK_GOAL: ("bytes", cfg["disk.balance.threshold"]),
    }
    out = []
    for goal in goals:
        if goal in before_after:
            field, t = before_after[goal]
            was = _violated({b.id: getattr(b, f"{field}_before") for b in rows}, t)
            now = _violated({b.id: getattr(b, f"{field}_after") for b in rows}, t) or gone > 0
        elif goal == "RackAwareGoal":
            was, now = False, plan.report.rack_violations > 0
        else:  # TopicReplicaDistributionGoal: each topic within one replica per broker
            was, now = False, plan.report.max_topic_spread > 1
        status = "VIOLATED" if now else ("FIXED" if was else "NO-ACTION")
        out.append({"goal": goal, "status": status, "optimizationTimeMs": elapsed_ms,
                    "clusterModelStats": {"metadata": {"brokers": len(rows), "replicas": plan.report.replicas,
                                                       "topics": len({tp[0] for tp in plan.current})}}})
    return out


def _load_after(plan: Plan, facts: ClusterFacts) -> dict:
    rows = {b.id: {"Replicas": b.replicas_after, "Leaders": b.leaders_after, "DiskMB": b.bytes_after / MB}
            for b in plan.report.brokers}
    return load_body(rows, facts.metadata.brokers, facts.metadata.brokers, facts.hosts)


def _verbose_proposals(plan: Plan) -> list[dict]:
    return [{"topicPartition": {"topic": t, "partition": p}, "oldLeader": plan.current[(t, p)][0],
             "oldReplicas": plan.current[(t, p)], "newReplicas": reps}
            for (t, p), reps in sorted(plan.changed().items())]


def propose(facts: ClusterFacts, cfg: BalancerConfig, action: str, ids: Sequence[int] = (),
            goals: Sequence[str] = COUNT_GOALS, excluded: re.Pattern | None = None,
            verbose: bool = False, exclude: Iterable[int] = (), loads: Mapping[TP, PartitionLoad] | None = None,
            capacities: Mapping[int, Capacity] | None = None, skip_hard: bool = False) -> Proposal:
    """Plan with pylog's planner and describe it as Cruise Control's OptimizationResult; a hard goal left
    violated raises goals.HardGoalViolation unless skip_hard."""
    targets = targets_for(action, ids, facts, exclude)
    snapshot, topics = _snapshot(facts, excluded)
    planned = [g for g in goals if g not in CHECKED_GOALS]
    balance_by = "bytes" if DISK_GOAL in planned and facts.sizes is not None else "count"
    options = PlanOptions(balance_by=balance_by, rack_aware="RackAwareGoal" in planned,
                          leader_balance="LeaderReplicaDistributionGoal" in planned,
                          topic_balance="TopicReplicaDistributionGoal" in planned)
    start = time.perf_counter()
    try:
        plan = plan_reassignment(snapshot, topics, targets, options)
    except PlanError as exc:
        raise ProposalError(str(exc)) from None
    elapsed_ms = int((time.perf_counter() - start) * 1000)
    goal_summary = [{**g, "hardGoal": g["goal"] in HARD_GOALS} for g in _goal_summary(planned, plan, cfg, elapsed_ms)]
    load_after = _load_after(plan, facts)
    if loads or len(planned) < len(goals):
        before = broker_loads(facts, loads or {}, targets)
        after = broker_loads(facts, loads or {}, targets, {**plan.current, **plan.changed()})
        for rows in (before, after):
            with_capacity(rows, capacities or {})
        goal_summary += check(goals, before, after, cfg, capacities or {}, elapsed_ms)
        load_after = load_body(after, facts.metadata.brokers, facts.metadata.brokers, facts.hosts)
    refuse_hard_violations(goal_summary, skip_hard)
    r = plan.report
    sized = [p for p in snapshot.partitions if p.size_bytes is not None]
    summary = {
        "numReplicaMovements": r.replicas_moved, "dataToMoveMB": round(r.bytes_moved / MB, 3),
        "numIntraBrokerReplicaMovements": 0, "intraBrokerDataToMoveMB": 0,
        "numLeaderMovements": r.leader_changes, "recentWindows": 0,
        "monitoredPartitionsPercentage": 100.0 * len(sized) / max(len(snapshot.partitions), 1),
        "excludedTopics": sorted({p.topic for p in snapshot.partitions} - set(topics)) if topics is not None else [],
        "excludedBrokersForLeadership": [], "excludedBrokersForReplicaMove": [],
        "provisionStatus": "UNDECIDED",
    }
    body = {"summary": summary, "goalSummary": goal_summary, "loadAfterOptimization": load_after,
            "pylogLowerBounds": {"numReplicaMovements": r.lower_bound, "topicReplicaMovements": r.topic_lower_bound,
                                 "dataToMoveMB": round(r.bytes_lower_bound / MB, 3),
                                 "numLeaderMovements": r.leader_bound, "gapReasons": list(r.gap_reasons)},
            "version": 1}
    if verbose:
        body["proposals"] = _verbose_proposals(plan)
    removed = sorted(ids) if action == "remove_broker" else []
    return Proposal(plan.changed(), plan.current, body, removed)


def demote(facts: ClusterFacts, ids: Sequence[int], skip_urp: bool, followers_too: bool) -> Proposal:
    """demote_broker: the brokers become the least preferred replicas, so that preferred leader elections
    move leadership off them; no replica moves. A partition whose new preferred leader is out of sync is
    left alone (it could not take the leadership), as are under-replicated ones with skip_urp_demotion."""
    demoted = set(ids)
    unknown = sorted(demoted - set(facts.metadata.brokers) - facts.holders())
    if unknown:
        raise ProposalError(f"Broker(s) {unknown} are not part of the cluster")
    current, changed, leaders = {}, {}, 0
    for t, tm in sorted(facts.metadata.topics.items()):
        for p, pm in sorted(tm.partitions.items()):
            reps = list(pm.replicas)
            current[(t, p)] = reps
            new = [r for r in reps if r not in demoted] + [r for r in reps if r in demoted]
            if new == reps or not new or new[0] in demoted or new[0] not in pm.isr:
                continue
            if skip_urp and len(pm.isr) < len(reps):
                continue
            if not followers_too and reps[0] not in demoted:
                continue
            changed[(t, p)] = new
            leaders += pm.leader in demoted
    rows = {}
    for (t, p), reps in current.items():
        lead = changed.get((t, p), reps)[0]
        for b in reps:
            row = rows.setdefault(b, {"Replicas": 0, "Leaders": 0, "DiskMB": 0.0})
            row["Replicas"] += 1
            row["Leaders"] += b == lead
    summary = {"numReplicaMovements": 0, "dataToMoveMB": 0, "numIntraBrokerReplicaMovements": 0,
               "intraBrokerDataToMoveMB": 0, "numLeaderMovements": leaders, "recentWindows": 0,
               "excludedTopics": [], "excludedBrokersForLeadership": sorted(demoted),
               "excludedBrokersForReplicaMove": [], "provisionStatus": "UNDECIDED"}
    goal = {"goal": "PreferredLeaderElectionGoal", "status": "FIXED" if changed else "NO-ACTION",
            "optimizationTimeMs": 0}
    body = {"summary": summary, "goalSummary": [goal], "version": 1,
            "loadAfterOptimization": load_body(rows, facts.metadata.brokers, facts.metadata.brokers, facts.hosts)}
    return Proposal(changed, current, body, [])
