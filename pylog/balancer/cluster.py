"""What the balancer reads of a cluster, and the `load` and `kafka_cluster_state` bodies made from it.

The cluster is reached as pylog's tools reach it (Metadata, DescribeLogDirs, KIP-455 through a broker:
pylog.cli.reassign_cluster.BrokerCluster), one admin connection per task so that the HTTP threads and
the executor never share a socket.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pylog.cli.admin_client import BrokerAdmin, ClusterMetadata, PartitionMetadata
from pylog.cli.reassign_cluster import BrokerCluster
from pylog.common.types import TP

MB = 1024 * 1024


def open_cluster(bootstrap: str) -> BrokerCluster:
    """A fresh admin connection to the cluster (close it with close_cluster)."""
    return BrokerCluster(BrokerAdmin(bootstrap, 30000))


def close_cluster(cluster: BrokerCluster) -> None:
    """Close the connection open_cluster made."""
    cluster.admin.close()


@dataclass
class ClusterFacts:
    """One reading of the cluster: Metadata plus, best effort, every replica's size on disk."""

    metadata: ClusterMetadata
    sizes: dict[tuple[TP, int], int] | None
    hosts: dict[int, str]

    @property
    def replicas(self) -> dict[TP, tuple[int, ...]]:
        """Every partition's replica list."""
        return {(t, p): pm.replicas for t, tm in self.metadata.topics.items() for p, pm in tm.partitions.items()}

    def holders(self) -> set[int]:
        """Brokers that hold at least one replica (alive or not)."""
        return {b for reps in self.replicas.values() for b in reps}


def read(cluster: BrokerCluster, with_sizes: bool = True) -> ClusterFacts:
    """Metadata of every topic and, if asked, DescribeLogDirs of every live broker."""
    md = cluster.admin.metadata(None)
    # ClusterMetadata keeps racks only; the brokers' advertised hosts come from a brokers-only Metadata.
    hosts = {b.node_id: b.host for b in cluster.admin.client.refresh_metadata([]).brokers}
    return ClusterFacts(md, cluster.replica_sizes() if with_sizes else None, hosts)


def load_body(rows: Mapping[int, Mapping[str, float]], racks: Mapping[int, str | None],
              alive: Iterable[int], hosts: Mapping[int, str]) -> dict:
    """Cruise Control's `load` body: brokers[] and hosts[] (pylog brokers on one host share a Host row).

    Each row's figures are listed as given (Replicas, Leaders, DiskMB and, when the load monitor has
    samples, the network rates and capacities); a host sums its brokers' counts, sizes and rates."""
    live = set(alive)
    brokers = []
    by_host: dict[str, dict] = {}
    for b in sorted(rows):
        host = hosts.get(b, "")  # a dead broker's host is no longer advertised
        figures = {k: (int(v) if k in _COUNTS else round(v, 3)) for k, v in rows[b].items()}
        brokers.append({"Host": host, "Broker": b, "Rack": racks.get(b) or str(b),
                        "BrokerState": "ALIVE" if b in live else "DEAD", **figures})
        h = by_host.setdefault(host, {"Host": host, "Rack": racks.get(b) or str(b)})
        for k, v in figures.items():
            if k in _SUMMED:
                h[k] = round(h.get(k, 0) + v, 3) if isinstance(v, float) else h.get(k, 0) + v
    return {"brokers": brokers, "hosts": list(by_host.values()), "version": 1}


_COUNTS = ("Replicas", "Leaders")
_SUMMED = ("Replicas", "Leaders", "DiskMB", "LeaderNwInRate", "FollowerNwInRate", "NwOutRate", "PnwOutRate",
           "DiskCapacityMB", "NetworkInCapacity", "NetworkOutCapacity")


def _summary(counts: Mapping[int, int], leaders: Mapping[int, int], topics: int) -> dict:
    reps = list(counts.values()) or [0]
    leads = [leaders.get(b, 0) for b in counts] or [0]
    n = max(len(counts), 1)
    total = sum(reps)
    return {"Brokers": len(counts), "Topics": topics, "Replicas": total, "Leaders": sum(leads),
            "AvgReplicasPerBroker": total / n, "MaxReplicasPerBroker": max(reps),
            "StdReplicasPerBroker": statistics.pstdev(reps), "AvgLeadersPerBroker": sum(leads) / n,
            "MaxLeadersPerBroker": max(leads), "StdLeadersPerBroker": statistics.pstdev(leads)}


def _partition_item(topic: str, p: int, pm: PartitionMetadata, alive: set[int]) -> dict:
    return {"topic": topic, "partition": p, "leader": -1 if pm.leader is None else pm.leader,
            "replicas": list(pm.replicas), "in-sync": list(pm.isr),
            "out-of-sync": [r for r in pm.replicas if r not in pm.isr],
            "offline": [r for r in pm.replicas if r not in alive]}


def cluster_state_body(facts: ClusterFacts, verbose: bool, topic_pattern: re.Pattern | None = None) -> dict:
    """Cruise Control's `kafka_cluster_state` body: KafkaBrokerState and KafkaPartitionState."""
    md = facts.metadata
    alive = set(md.brokers)
    brokers = sorted(alive | facts.holders())
    replicas, leaders, out_of_sync, offline = Counter(), Counter(), Counter(), Counter()
    parts: dict[str, list] = {"offline": [], "with-offline-replicas": [], "urp": [], "other": []}
    for t, tm in sorted(md.topics.items()):
        for p, pm in sorted(tm.partitions.items()):
            for r in pm.replicas:
                replicas[r] += 1
                out_of_sync[r] += r not in pm.isr
                offline[r] += r not in alive
            if pm.leader is not None:
                leaders[pm.leader] += 1
            if topic_pattern is not None and not topic_pattern.fullmatch(t):
                continue
            item = _partition_item(t, p, pm, alive)
            if pm.leader is None:
                parts["offline"].append(item)
            elif item["offline"]:
                parts["with-offline-replicas"].append(item)
            elif item["out-of-sync"]:
                parts["urp"].append(item)
            elif verbose:
                parts["other"].append(item)
    if not verbose:
        del parts["other"]
    by_id = lambda c: {str(b): c.get(b, 0) for b in brokers}  # noqa: E731 - JSON object keys are strings
    broker_state = {"LeaderCountByBrokerId": by_id(leaders), "OutOfSyncCountByBrokerId": by_id(out_of_sync),
                    "ReplicaCountByBrokerId": by_id(replicas), "OfflineReplicaCountByBrokerId": by_id(offline),
                    "IsController": {str(b): b == md.controller_id for b in brokers},
                    "Summary": _summary({b: replicas.get(b, 0) for b in brokers}, leaders, len(md.topics))}
    return {"KafkaBrokerState": broker_state, "KafkaPartitionState": parts, "version": 1}
