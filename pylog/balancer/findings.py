"""What the anomaly detector looks for in one reading of the cluster, each with the fix it would run.

A finder returns None when all is well, else a Finding: Cruise Control's type-specific fields for the
anomaly listing and the function that makes the fix's proposal from a reading of the cluster.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass

from pylog.balancer.analyzer import Proposal, parse_goals, propose
from pylog.balancer.cluster import ClusterFacts
from pylog.balancer.config import BalancerConfig
from pylog.balancer.repairs import below_replication, fix_offline, offline_replicas, raise_replication
from pylog.cli.reassign_cluster import BrokerCluster

log = logging.getLogger("pylog.balancer")


@dataclass
class Finding:
    """An anomaly found: its listing fields, its fix, and a line for the log."""

    details: dict
    fix: Callable[[ClusterFacts], Proposal]
    summary: str


def find_disk_failures(cluster: BrokerCluster, facts: ClusterFacts, since: MutableMapping[tuple[int, str], int],
                       now: int, exclude: Iterable[int]) -> Finding | None:
    """Live brokers with offline replicas: their failed log dirs (DescribeLogDirs), first seen when."""
    offline = offline_replicas(facts)
    brokers = sorted({b for reps in offline.values() for b in reps})
    dirs: dict[int, list[str]] = {}
    for b in brokers:
        try:
            dirs[b] = cluster.admin.failed_log_dirs(b) or ["unknown"]
        except Exception as exc:  # the broker went away between the two requests: next reading
            log.debug("DescribeLogDirs on broker %d failed: %s", b, exc)
            dirs[b] = ["unknown"]
    seen = {(b, d) for b, ds in dirs.items() for d in ds}
    for key in list(since):
        if key not in seen:
            del since[key]
    for key in seen:
        since.setdefault(key, now)
    if not offline:
        return None
    excluded = set(exclude)
    details = {"failedDisksByTimeMs": {str(b): {d: since[(b, d)] for d in ds} for b, ds in sorted(dirs.items())}}
    return Finding(details, lambda f: fix_offline(f, offline_replicas(f), excluded),
                   f"{sum(len(r) for r in offline.values())} offline replica(s) on broker(s) {brokers}")


def find_topic_anomalies(facts: ClusterFacts, cfg: BalancerConfig, avoid: Iterable[int] = ()) -> Finding | None:
    """Topics below self.healing.target.topic.replication.factor (Cruise Control's TopicReplicationFactorAnomaly)."""
    target = cfg["self.healing.target.topic.replication.factor"]
    excluded = re.compile(cfg["topic.excluded.from.replication.factor.check"]) \
        if cfg["topic.excluded.from.replication.factor.check"] else None
    low = below_replication(facts, target, excluded)
    if not low:
        return None
    text = ", ".join(f"{t} (replication factor {rf})" for t, rf in low.items())
    details = {"description": f"Topics with replication factor below {target}: {text}",
               "targetReplicationFactor": target, "badTopicsByReplicationFactor": low}
    avoid = set(avoid)
    return Finding(details, lambda f: raise_replication(f, {t: target for t in low}, avoid), text)


def find_goal_violations(facts: ClusterFacts, cfg: BalancerConfig, executor) -> Finding | None:
    """The anomaly detection goals a rebalance would fix (fixable) or could not (unfixable)."""
    goals = parse_goals(cfg["anomaly.detection.goals"])
    proposal = propose(facts, cfg, "rebalance", goals=goals, exclude=executor.recently_removed)
    summary = proposal.body["goalSummary"]
    fixable = [g["goal"] for g in summary if g["status"] == "FIXED"]
    unfixable = [g["goal"] for g in summary if g["status"] == "VIOLATED"]
    if not unfixable and not (fixable and proposal.changed):
        return None
    details = {"fixableViolatedGoals": fixable, "unfixableViolatedGoals": unfixable}
    return Finding(details, lambda f: proposal, f"fixable {fixable}, unfixable {unfixable}")
