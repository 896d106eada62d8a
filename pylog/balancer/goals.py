"""The goals pylog checks rather than plans for, and Cruise Control's hard/soft distinction.

The planner balances counts or bytes and keeps racks apart (analyzer.py). The capacity goals and the
network balance goals are measured on the proposal's result with the load monitor's figures (load.py):
- ReplicaCapacityGoal: at most max.replicas.per.broker replicas on a broker;
- DiskCapacityGoal, NetworkInboundCapacityGoal, NetworkOutboundCapacityGoal: a broker's disk, bytes in and
  bytes out within capacity x disk/network.inbound/network.outbound.capacity.threshold (capacity.config.file);
- NetworkInboundUsageDistributionGoal, NetworkOutboundUsageDistributionGoal: within
  network.inbound/outbound.balance.threshold of the average, as the count goals.
Hard goals (Cruise Control's: rack awareness and the capacity goals) must hold after the proposal, or the
request fails as Cruise Control's OptimizationFailureException does (skip_hard_goal_check=true overrides);
soft goals are best effort and only reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pylog.balancer.config import BalancerConfig
from pylog.balancer.load import Capacity, capacity_of

HARD_GOALS = ("RackAwareGoal", "ReplicaCapacityGoal", "DiskCapacityGoal", "NetworkInboundCapacityGoal",
              "NetworkOutboundCapacityGoal")
CAPACITY_GOALS = {  # goal -> (load row field, capacity field, threshold key)
    "DiskCapacityGoal": ("DiskMB", "disk_mb", "disk.capacity.threshold"),
    "NetworkInboundCapacityGoal": ("NwIn", "nw_in_kb", "network.inbound.capacity.threshold"),
    "NetworkOutboundCapacityGoal": ("NwOutRate", "nw_out_kb", "network.outbound.capacity.threshold"),
}
NETWORK_BALANCE = {"NetworkInboundUsageDistributionGoal": ("NwIn", "network.inbound.balance.threshold"),
                   "NetworkOutboundUsageDistributionGoal": ("NwOutRate", "network.outbound.balance.threshold")}
CHECKED_GOALS = ("ReplicaCapacityGoal",) + tuple(CAPACITY_GOALS) + tuple(NETWORK_BALANCE)


class HardGoalViolation(ValueError):
    """A hard goal the proposal would leave violated."""


def _value(row: Mapping[str, float], field: str) -> float:
    if field == "NwIn":  # a broker receives its leaders' bytes in and its followers' replication
        return row.get("LeaderNwInRate", 0.0) + row.get("FollowerNwInRate", 0.0)
    return row.get(field, 0.0)


def over_capacity(goal: str, rows: Mapping[int, Mapping[str, float]], cfg: BalancerConfig,
                  capacities: Mapping[int, Capacity]) -> list[int]:
    """Brokers violating a capacity goal (none when no capacity is configured for them)."""
    if goal == "ReplicaCapacityGoal":
        return sorted(b for b, row in rows.items() if row["Replicas"] > cfg["max.replicas.per.broker"])
    field, attr, key = CAPACITY_GOALS[goal]
    bad = []
    for b, row in rows.items():
        cap = capacity_of(capacities, b)
        limit = getattr(cap, attr) if cap is not None else None
        if limit and _value(row, field) > limit * cfg[key]:
            bad.append(b)
    return sorted(bad)


def unbalanced(values: Mapping[int, float], threshold: float) -> bool:
    """Cruise Control's balance test: every broker within [avg*(2-t), avg*t]."""
    if not values:
        return False
    avg = sum(values.values()) / len(values)
    return any(v > avg * threshold + 1e-9 or v < avg * max(0.0, 2 - threshold) - 1e-9 for v in values.values()) \
        and not math.isclose(max(values.values()), min(values.values()))


def check(goals: Sequence[str], before: Mapping[int, Mapping[str, float]], after: Mapping[int, Mapping[str, float]],
          cfg: BalancerConfig, capacities: Mapping[int, Capacity], elapsed_ms: int) -> list[dict]:
    """goalSummary entries of the checked goals (before vs after the proposal)."""
    out = []
    for goal in goals:
        if goal in NETWORK_BALANCE:
            field, key = NETWORK_BALANCE[goal]
            was = unbalanced({b: _value(r, field) for b, r in before.items()}, cfg[key])
            now = unbalanced({b: _value(r, field) for b, r in after.items()}, cfg[key])
            extra = {}
        elif goal in CHECKED_GOALS:
            was, bad = bool(over_capacity(goal, before, cfg, capacities)), over_capacity(goal, after, cfg, capacities)
            now, extra = bool(bad), ({"brokersOverCapacity": bad} if bad else {})
        else:
            continue
        out.append({"goal": goal, "status": "VIOLATED" if now else ("FIXED" if was else "NO-ACTION"),
                    "optimizationTimeMs": elapsed_ms, "hardGoal": goal in HARD_GOALS, **extra})
    return out


def refuse_hard_violations(summary: Sequence[Mapping], skip: bool) -> None:
    """Cruise Control's OptimizationFailureException for a hard goal left violated (unless skipped)."""
    bad = [g["goal"] for g in summary if g["status"] == "VIOLATED" and g["goal"] in HARD_GOALS]
    if bad and not skip:
        raise HardGoalViolation(f"OptimizationFailureException: hard goal(s) {bad} would be violated by the proposal "
                                f"(skip_hard_goal_check=true to execute it anyway)")
