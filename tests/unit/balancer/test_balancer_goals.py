"""Hard and soft goals on a proposal's result, and the threshold-only mode's fewest moves."""

from __future__ import annotations

import pytest

from pylog.balancer.analyzer import propose
from pylog.balancer.cluster import ClusterFacts
from pylog.balancer.config import parse
from pylog.balancer.goals import HardGoalViolation
from pylog.balancer.load import Capacity
from pylog.balancer.monitor import PartitionLoad
from pylog.balancer.threshold import threshold_only
from pylog.cli.admin_client import ClusterMetadata, PartitionMetadata, TopicMetadata


def facts(replicas, brokers=(0, 1, 2, 3), sizes=None):
    parts = {p: PartitionMetadata(p, reps[0], tuple(reps), tuple(reps)) for p, reps in enumerate(replicas)}
    md = ClusterMetadata({b: None for b in brokers}, 0, {"t": TopicMetadata("t", None, False, parts)})
    return ClusterFacts(md, sizes, {b: "h" for b in brokers})


def cfg(**extra):
    return parse({"bootstrap.servers": "unused:1", **extra})


SKEWED = [[0, 1]] * 6 + [[0, 2]] * 4 + [[1, 2]] * 2  # broker 0: 10 replicas, 1: 8, 2: 6, 3: 0


def test_threshold_only_moves_just_the_excess_off_the_brokers_over_it():
    plan = threshold_only(facts(SKEWED), cfg(), ["ReplicaDistributionGoal"])
    # avg 6, upper ceil(6.6) = 7: broker 0 sheds 3, broker 1 sheds 1; broker 2 (at 6) is left alone.
    assert plan.body["summary"]["numReplicaMovements"] == plan.body["pylogLowerBounds"]["numReplicaMovements"] == 4
    moved_from = [next(b for b in plan.current[tp] if b not in new) for tp, new in plan.changed.items()]
    assert sorted(moved_from) == [0, 0, 0, 1]
    assert all(3 in new for new in plan.changed.values())  # the only broker under the average


def test_threshold_only_by_bytes_moves_the_largest_replicas_first():
    sizes = {(("t", p), b): (900 if p == 0 else 100) for p, reps in enumerate(SKEWED) for b in reps}
    plan = threshold_only(facts(SKEWED, sizes=sizes), cfg(), ["DiskUsageDistributionGoal"])
    assert ("t", 0) in plan.changed and plan.body["pylogThresholdOnly"]["balanceBy"] == "bytes"


def test_capacity_goals_are_hard_and_refuse_a_proposal_left_over_capacity():
    f = facts(SKEWED)
    loads = {("t", p): PartitionLoad(None, 1024.0 * 100, 0.0, 1.0, "test") for p in range(12)}
    caps = {-1: Capacity(None, 500.0, None)}  # 500 KB/s in per broker; 80 % of it is the limit
    goals = ["ReplicaDistributionGoal", "NetworkInboundCapacityGoal", "NetworkInboundUsageDistributionGoal"]
    with pytest.raises(HardGoalViolation, match="NetworkInboundCapacityGoal"):
        propose(f, cfg(), "rebalance", goals=goals, loads=loads, capacities=caps)
    ok = propose(f, cfg(), "rebalance", goals=goals, loads=loads, capacities=caps, skip_hard=True)
    by_goal = {g["goal"]: g for g in ok.body["goalSummary"]}
    assert by_goal["NetworkInboundCapacityGoal"]["status"] == "VIOLATED" and by_goal["NetworkInboundCapacityGoal"][
        "hardGoal"] is True
    assert by_goal["ReplicaDistributionGoal"]["hardGoal"] is False
    assert by_goal["NetworkInboundUsageDistributionGoal"]["status"] == "FIXED"  # 3 was empty, now all carry ~600
    roomy = propose(f, cfg(), "rebalance", goals=goals, loads=loads, capacities={-1: Capacity(None, 5000.0, None)})
    assert {g["goal"]: g["status"] for g in roomy.body["goalSummary"]}["NetworkInboundCapacityGoal"] == "NO-ACTION"
    assert "NetworkInCapacity" in roomy.body["loadAfterOptimization"]["brokers"][0]


def test_replica_capacity_goal():
    with pytest.raises(HardGoalViolation, match="ReplicaCapacityGoal"):
        propose(facts(SKEWED), cfg(**{"max.replicas.per.broker": "5"}), "rebalance",
                goals=["ReplicaDistributionGoal", "ReplicaCapacityGoal"])
