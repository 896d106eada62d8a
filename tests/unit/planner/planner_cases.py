"""Helpers shared by the planner tests: random clusters and a checker of the hard constraints."""
from __future__ import annotations

import random

from pylog.planner.assignment import assign_replicas_to_brokers
from pylog.planner.model import Broker, Partition, Snapshot


def kafka_cluster(n_brokers: int, topics: dict[str, int], rf: int, seed: int = 0, racks: int = 0,
                  sizes: bool = False) -> Snapshot:
    """A snapshot laid out the way Kafka creates topics (round-robin, random start per topic)."""
    rng = random.Random(seed)
    brokers = [Broker(b, f"r{b % racks}" if racks else None) for b in range(n_brokers)]
    meta = [(b.id, b.rack) for b in brokers]
    parts = []
    for topic, n in sorted(topics.items()):
        for p, reps in assign_replicas_to_brokers(meta, n, rf, rng=rng).items():
            parts.append(Partition(topic, p, reps, size_bytes=rng.randrange(1, 10_000) if sizes else None))
    return Snapshot(brokers, parts)


def check_constraints(snapshot: Snapshot, plan, targets: list[int], racks: dict[int, str | None]) -> None:
    """Hard constraints every plan must meet."""
    n_racks = len({racks[b] for b in targets if racks.get(b) is not None}) or 1
    for p in snapshot.partitions:
        if (p.topic, p.partition) not in plan.proposed:
            continue
        new = plan.proposed[(p.topic, p.partition)]
        assert len(new) == len(p.replicas), "replication factor changed"
        assert len(set(new)) == len(new), f"duplicate broker in {new}"
        assert set(new) <= set(targets), f"{new} uses a broker outside the target set"
        if n_racks > 1:
            assert len({racks[b] for b in new}) >= min(len(new), n_racks), f"{new} spans too few racks"
