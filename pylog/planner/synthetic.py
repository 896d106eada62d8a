"""Synthetic cluster snapshots for benchmarks and tests: topics laid out the way Kafka creates them."""
from __future__ import annotations

import random

from pylog.planner.assignment import assign_replicas_to_brokers
from pylog.planner.model import Broker, Partition, Snapshot

__all__ = ["TOPIC_SIZES", "synthetic_snapshot"]

# Partition counts cycled through to build a mix of big and small topics.
TOPIC_SIZES = (1000, 200, 100, 50, 24, 12, 6, 3, 1)


def synthetic_snapshot(n_partitions: int, n_brokers: int, rf: int = 3, n_racks: int = 4, seed: int = 0,
                       with_sizes: bool = True) -> Snapshot:
    """A cluster of `n_brokers` on `n_racks` racks ("r0"...) with ~`n_partitions` partitions in mixed topics."""
    rng = random.Random(seed)
    brokers = [Broker(b, f"r{b % n_racks}" if n_racks else None) for b in range(n_brokers)]
    meta = [(b.id, b.rack) for b in brokers]
    parts: list[Partition] = []
    t = 0
    while len(parts) < n_partitions:
        count = min(TOPIC_SIZES[t % len(TOPIC_SIZES)], n_partitions - len(parts))
        topic = f"topic-{t:06d}"
        for p, reps in assign_replicas_to_brokers(meta, count, rf, rng=rng).items():
            # Log-normal-ish sizes: most partitions small, a few large (bytes).
            size = int(rng.lognormvariate(18, 1.5)) if with_sizes else None
            parts.append(Partition(topic, p, reps, size_bytes=size))
        t += 1
    return Snapshot(brokers, parts)
