"""Broker and partition load as Cruise Control reports it (`load`, `partition_load`), and broker capacities.

Units are Cruise Control's: disk in MB, network rates in KB/s. A replica's load follows Cruise Control's
model: every replica holds the partition's bytes on disk and receives its bytes in (the leader from
producers, followers by replication); only the leader sends bytes out to consumers. PnwOutRate is what a
broker would send if it led every partition it holds. CPU is not modelled (pylog samples no per-partition
CPU), so no CpuPct is reported rather than a made-up one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pylog.balancer.cluster import MB, ClusterFacts
from pylog.balancer.monitor import PartitionLoad
from pylog.common.types import TP

KB = 1024.0
RESOURCES = ("disk", "nw_in", "nw_out")


class CapacityError(ValueError):
    """A capacity file problem; one line for the operator."""


@dataclass(frozen=True)
class Capacity:
    """One broker's capacity: disk MB, network in and out KB/s (None: not given)."""

    disk_mb: float | None
    nw_in_kb: float | None
    nw_out_kb: float | None


def _number(value: object, what: str) -> float:
    if isinstance(value, dict):  # JBOD: one figure per log dir
        return sum(_number(v, what) for v in value.values())
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise CapacityError(f"capacity {what} must be a number, not {value!r}") from None


def read_capacities(path: str | os.PathLike[str]) -> dict[int, Capacity]:
    """Cruise Control's capacity.config.file (brokerCapacities[]; brokerId -1 is the default)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as exc:
        raise CapacityError(f"cannot read capacity file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise CapacityError(f"capacity file {path} is not JSON: {exc}") from None
    out = {}
    for entry in doc.get("brokerCapacities", []) if isinstance(doc, dict) else []:
        cap = entry.get("capacity", {})
        get = lambda k: None if k not in cap else _number(cap[k], k)  # noqa: E731
        out[int(entry.get("brokerId", -1))] = Capacity(get("DISK"), get("NW_IN"), get("NW_OUT"))
    if not out:
        raise CapacityError(f"capacity file {path} has no brokerCapacities entries")
    return out


def capacity_of(capacities: Mapping[int, Capacity], broker: int) -> Capacity | None:
    """A broker's own entry, else the default (-1), else None."""
    return capacities.get(broker, capacities.get(-1))


def broker_loads(facts: ClusterFacts, loads: Mapping[TP, PartitionLoad], brokers: Iterable[int],
                 assignment: Mapping[TP, list[int]] | None = None) -> dict[int, dict[str, float]]:
    """Per broker: Replicas, Leaders, DiskMB and the network rates of the replicas it holds.

    `assignment` (default: the current one) lets a proposal's after-state be measured the same way;
    its first replica is taken as the leader."""
    rows = {b: _empty() for b in brokers}
    current = facts.replicas
    leaders = {(t, p): pm.leader for t, tm in facts.metadata.topics.items() for p, pm in tm.partitions.items()}
    for tp, reps in (assignment or current).items():
        load = loads.get(tp)
        lead = reps[0] if assignment is not None else leaders.get(tp)
        for b in reps:
            row = rows.setdefault(b, _empty())
            row["Replicas"] += 1
            row["DiskMB"] += _disk_bytes(facts, tp, b, load) / MB
            if load is None:
                continue
            row["PnwOutRate"] += load.bytes_out / KB
            if b == lead:
                row["Leaders"] += 1
                row["LeaderNwInRate"] += load.bytes_in / KB
                row["NwOutRate"] += load.bytes_out / KB
            else:
                row["FollowerNwInRate"] += load.bytes_in / KB
        if load is None and lead in rows:
            rows[lead]["Leaders"] += 1
    return rows


def _empty() -> dict[str, float]:
    return {"Replicas": 0, "Leaders": 0, "DiskMB": 0.0, "LeaderNwInRate": 0.0, "FollowerNwInRate": 0.0,
            "NwOutRate": 0.0, "PnwOutRate": 0.0}


def _disk_bytes(facts: ClusterFacts, tp: TP, broker: int, load: PartitionLoad | None) -> float:
    """The replica's size: DescribeLogDirs when the broker answered, else the samples' largest replica."""
    if facts.sizes is not None and (tp, broker) in facts.sizes:
        return facts.sizes[(tp, broker)]
    if facts.sizes is not None:
        found = [facts.sizes[(tp, r)] for r in facts.replicas.get(tp, ()) if (tp, r) in facts.sizes]
        if found:
            return max(found)  # a replica on a new broker will hold what the others hold
    return float(load.size_bytes or 0) if load is not None else 0.0


def with_capacity(rows: dict[int, dict[str, float]], capacities: Mapping[int, Capacity]) -> None:
    """Add DiskCapacityMB/DiskPct and NetworkInCapacity/NetworkOutCapacity where a capacity is configured."""
    for b, row in rows.items():
        cap = capacity_of(capacities, b)
        if cap is None:
            continue
        if cap.disk_mb:
            row["DiskCapacityMB"] = cap.disk_mb
            row["DiskPct"] = 100.0 * row["DiskMB"] / cap.disk_mb
        if cap.nw_in_kb:
            row["NetworkInCapacity"] = cap.nw_in_kb
        if cap.nw_out_kb:
            row["NetworkOutCapacity"] = cap.nw_out_kb


def partition_load_body(facts: ClusterFacts, loads: Mapping[TP, PartitionLoad], resource: str, entries: int,
                        topic=None, partitions: tuple[int, int] | None = None, broker: set[int] | None = None) -> dict:
    """Cruise Control's `partition_load`: records sorted by the resource, biggest first."""
    if resource not in RESOURCES:
        raise ValueError(f"resource must be one of {list(RESOURCES)} (pylog does not model CPU), not {resource!r}")
    records = []
    for t, tm in sorted(facts.metadata.topics.items()):
        if topic is not None and not topic.fullmatch(t):
            continue
        for p, pm in sorted(tm.partitions.items()):
            if partitions is not None and not partitions[0] <= p <= partitions[1]:
                continue
            if broker is not None and not broker & set(pm.replicas):
                continue
            load = loads.get((t, p))
            leader = -1 if pm.leader is None else pm.leader
            disk = max((_disk_bytes(facts, (t, p), r, load) for r in pm.replicas), default=0.0) / MB
            records.append({"topic": t, "partition": p, "leader": leader,
                            "followers": [r for r in pm.replicas if r != leader],
                            "disk": round(disk, 6),
                            "networkInbound": round(load.bytes_in / KB, 6) if load else 0.0,
                            "networkOutbound": round(load.bytes_out / KB, 6) if load else 0.0,
                            "msg_in": round(load.messages_in, 6) if load else 0.0})
    key = {"disk": "disk", "nw_in": "networkInbound", "nw_out": "networkOutbound"}[resource]
    records.sort(key=lambda r: (-r[key], r["topic"], r["partition"]))
    return {"records": records[:entries], "version": 1}
