"""Repairs that each need exactly the moves they make: offline replicas re-created elsewhere
(`fix_offline_replicas`, disk failures) and topics brought up to a replication factor (topic anomalies).

Every offline replica must move and every missing replica must be added, so the number of replica moves
is its own lower bound; what is chosen is where: the live broker holding the fewest replicas, on a rack
the partition does not use yet when there is one, so the repair does not unbalance the cluster.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pylog.balancer.analyzer import Proposal, ProposalError
from pylog.balancer.cluster import MB, ClusterFacts, load_body
from pylog.common.types import TP


def offline_replicas(facts: ClusterFacts) -> dict[TP, set[int]]:
    """Replicas Metadata reports offline on brokers that are alive: their log dir failed (KIP-112)."""
    alive = set(facts.metadata.brokers)
    return {(t, p): off for t, tm in facts.metadata.topics.items() for p, pm in tm.partitions.items()
            if (off := {r for r in pm.offline if r in alive})}


def _pick(candidates: Iterable[int], used: Sequence[int], counts: Counter, racks: Mapping[int, str | None]) -> int:
    used_racks = {racks.get(b) for b in used}
    ranked = sorted(candidates, key=lambda b: (racks.get(b) is not None and racks.get(b) in used_racks,
                                               counts[b], b))
    return ranked[0]


def proposal_body(facts: ClusterFacts, goal: str, current: Mapping[TP, list[int]], changed: Mapping[TP, list[int]],
          moves: int, verbose: bool) -> dict:
    """Cruise Control's optimization result for a proposal made outside the planner (moves = its bound)."""
    data = 0.0
    if facts.sizes is not None:
        for tp, new in changed.items():
            size = max((facts.sizes.get((tp, r), 0) for r in current[tp]), default=0)
            data += size * len(set(new) - set(current[tp]))
    rows: dict[int, dict[str, float]] = {}
    for tp, reps in current.items():
        for i, b in enumerate(changed.get(tp, reps)):
            row = rows.setdefault(b, {"Replicas": 0, "Leaders": 0, "DiskMB": 0.0})
            row["Replicas"] += 1
            row["Leaders"] += i == 0
    summary = {"numReplicaMovements": moves, "dataToMoveMB": round(data / MB, 3), "numIntraBrokerReplicaMovements": 0,
               "intraBrokerDataToMoveMB": 0, "numLeaderMovements": 0, "recentWindows": 0, "excludedTopics": [],
               "excludedBrokersForLeadership": [], "excludedBrokersForReplicaMove": [], "provisionStatus": "UNDECIDED"}
    body = {"summary": summary,
            "goalSummary": [{"goal": goal, "status": "FIXED" if changed else "NO-ACTION", "optimizationTimeMs": 0}],
            "loadAfterOptimization": load_body(rows, facts.metadata.brokers, facts.metadata.brokers, facts.hosts),
            "pylogLowerBounds": {"numReplicaMovements": moves, "gapReasons": []}, "version": 1}
    if verbose:
        body["proposals"] = [{"topicPartition": {"topic": t, "partition": p}, "oldLeader": current[(t, p)][0],
                              "oldReplicas": current[(t, p)], "newReplicas": new}
                             for (t, p), new in sorted(changed.items())]
    return body


def fix_offline(facts: ClusterFacts, offline: Mapping[TP, set[int]], exclude: Iterable[int] = (),
                verbose: bool = False) -> Proposal:
    """fix_offline_replicas: each offline replica moves to another live broker (same position in the list)."""
    alive = set(facts.metadata.brokers) - set(exclude) or set(facts.metadata.brokers)
    current = {tp: list(reps) for tp, reps in facts.replicas.items()}
    counts = Counter(b for reps in current.values() for b in reps)
    changed: dict[TP, list[int]] = {}
    for tp, bad in sorted(offline.items()):
        new = list(current[tp])
        for i, b in enumerate(new):
            if b not in bad:
                continue
            candidates = alive - set(new)
            if not candidates:
                raise ProposalError(f"{tp[0]}-{tp[1]}: no live broker left to take its offline replica on broker {b}")
            dest = _pick(candidates, [r for r in new if r != b], counts, facts.metadata.brokers)
            new[i] = dest
            counts[dest] += 1
            counts[b] -= 1
        changed[tp] = new
    moves = sum(len(set(new) - set(current[tp])) for tp, new in changed.items())
    return Proposal(changed, current, proposal_body(facts, "FixOfflineReplicas", current, changed, moves, verbose), [])


def raise_replication(facts: ClusterFacts, targets: Mapping[str, int], avoid: Iterable[int] = (),
                      verbose: bool = False) -> Proposal:
    """Add replicas until each topic in `targets` has that replication factor (capped at the live brokers);
    brokers in `avoid` (a log dir failed there) take new replicas only when nothing else is left."""
    alive = set(facts.metadata.brokers) - set(avoid) or set(facts.metadata.brokers)
    current = {tp: list(reps) for tp, reps in facts.replicas.items()}
    counts = Counter(b for reps in current.values() for b in reps)
    changed: dict[TP, list[int]] = {}
    for tp, reps in sorted(current.items()):
        want = min(targets.get(tp[0], 0), len(alive))
        new = list(reps)
        while len(new) < want:
            dest = _pick(alive - set(new), new, counts, facts.metadata.brokers)
            new.append(dest)
            counts[dest] += 1
        if new != reps:
            changed[tp] = new
    moves = sum(len(new) - len(current[tp]) for tp, new in changed.items())
    return Proposal(changed, current, proposal_body(facts, "TopicReplicationFactor", current, changed, moves, verbose), [])


def below_replication(facts: ClusterFacts, target: int, excluded) -> dict[str, int]:
    """Topics whose smallest partition replication factor is below `target` (those `excluded` matches left out)."""
    out = {}
    for t, tm in sorted(facts.metadata.topics.items()):
        if excluded is not None and excluded.fullmatch(t):
            continue
        rf = min((len(pm.replicas) for pm in tm.partitions.values()), default=target)
        if rf < target:
            out[t] = rf
    return out


def without_lost(proposal: Proposal, facts: ClusterFacts) -> tuple[Proposal, list[TP]]:
    """The proposal without the partitions that have no live replica left: nothing could copy them, so their
    reassignment would never finish (and would hold the execution forever); those are returned to be logged."""
    alive = set(facts.metadata.brokers)
    lost = sorted(tp for tp in proposal.changed if not alive & set(proposal.current.get(tp, ())))
    if not lost:
        return proposal, []
    kept = {tp: reps for tp, reps in proposal.changed.items() if tp not in set(lost)}
    return Proposal(kept, proposal.current, proposal.body, proposal.removed_brokers), lost
