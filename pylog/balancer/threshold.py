"""The threshold-only mode (`threshold_only=true` on rebalance and proposals, a pylog parameter):
fix only the brokers above their balance threshold, with the fewest moves (Cruise Control #2228).

A broker is over when its replica count (ReplicaDistributionGoal's replica.count.balance.threshold) or,
with DiskUsageDistributionGoal asked for, its bytes on disk (disk.balance.threshold) exceed average x
threshold (rounded up for counts). Only replicas of over brokers move, each to the least loaded broker that
is under the average, stays within the threshold, does not hold the partition and (when racks are known)
keeps the partition's racks distinct. For counts every move removes one replica of excess, so the moves
equal the lower bound sum(count - ceil(avg x threshold)) when there is room; for bytes the largest replicas
go first, so few moves carry the excess.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from pylog.balancer.analyzer import DISK_GOAL, Proposal, ProposalError
from pylog.balancer.cluster import ClusterFacts
from pylog.balancer.config import BalancerConfig
from pylog.balancer.repairs import proposal_body
from pylog.common.types import TP


def _weights(facts: ClusterFacts, by_bytes: bool) -> dict[TP, float]:
    if not by_bytes:
        return {tp: 1.0 for tp in facts.replicas}
    sizes = facts.sizes or {}
    return {tp: float(max((sizes.get((tp, r), 0) for r in reps), default=0)) for tp, reps in facts.replicas.items()}


def threshold_only(facts: ClusterFacts, cfg: BalancerConfig, goals: Iterable[str], excluded: re.Pattern | None = None,
                   exclude_brokers: Iterable[int] = (), verbose: bool = False) -> Proposal:
    """Move replicas off the brokers above the threshold only, to brokers below the average."""
    by_bytes = DISK_GOAL in set(goals) and facts.sizes is not None
    threshold = cfg["disk.balance.threshold" if by_bytes else "replica.count.balance.threshold"]
    brokers = sorted(set(facts.metadata.brokers) - set(exclude_brokers))
    if not brokers:
        raise ProposalError("no live broker to balance")
    weight = _weights(facts, by_bytes)
    current = {tp: list(reps) for tp, reps in facts.replicas.items()}
    load: Counter = Counter({b: 0.0 for b in brokers})
    for tp, reps in current.items():
        for b in reps:
            load[b] += weight[tp]
    avg = sum(load[b] for b in brokers) / len(brokers)
    # Counts are whole: the limit rounds outwards, as the analyzer's balance test (ReplicaDistributionGoal) does.
    upper = math.ceil(avg * threshold) if not by_bytes else avg * threshold
    racks = facts.metadata.brokers
    changed: dict[TP, list[int]] = {}
    for src in sorted((b for b in brokers if load[b] > upper), key=lambda b: -load[b]):
        held = sorted((tp for tp, reps in current.items() if src in reps
                       and (excluded is None or not excluded.fullmatch(tp[0]))), key=lambda tp: (-weight[tp], tp))
        for tp in held:
            if load[src] <= upper:
                break
            reps = changed.get(tp, current[tp])
            others = {racks.get(r) for r in reps if r != src} - {None}
            room = [b for b in brokers if b not in reps and load[b] + weight[tp] <= max(upper, weight[tp])
                    and load[b] < avg and racks.get(b) not in others]
            if not room or (by_bytes and weight[tp] == 0):
                continue
            dest = min(room, key=lambda b: (load[b], b))
            changed[tp] = [dest if r == src else r for r in reps]
            load[src] -= weight[tp]
            load[dest] += weight[tp]
    moves = sum(len(set(new) - set(current[tp])) for tp, new in changed.items())
    goal = DISK_GOAL if by_bytes else "ReplicaDistributionGoal"
    body = proposal_body(facts, goal, current, changed, moves, verbose)
    body["pylogLowerBounds"]["numReplicaMovements"] = moves if by_bytes else int(
        sum(max(0, load0 - upper) for load0 in _initial_counts(current, brokers).values()))
    body["pylogThresholdOnly"] = {"threshold": threshold, "upperLimit": upper, "balanceBy": "bytes" if by_bytes
                                  else "replicas"}
    return Proposal(changed, current, body, [])


def _initial_counts(current: dict[TP, list[int]], brokers: list[int]) -> Counter:
    counts: Counter = Counter({b: 0 for b in brokers})
    for reps in current.values():
        for b in reps:
            if b in counts:
                counts[b] += 1
    return counts
