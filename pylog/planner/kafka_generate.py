"""Kafka's `kafka-reassign-partitions.sh --generate` (ReassignPartitionsCommand.calculateAssignment): the baseline.

Per topic it re-runs the create-time assignment with a random start and shift over the broker list, ignoring
where replicas are now, so it moves nearly everything. Topics are visited in sorted order (Kafka uses hash-map
order) so that a seeded rng gives a reproducible plan.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from pylog.planner.assignment import RandomSource, assign_replicas_to_brokers
from pylog.planner.model import PlanError, TopicPartition

__all__ = ["calculate_assignment", "broker_metadata"]

NOT_ALL_RACKS = ("Not all brokers have rack information. Add --disable-rack-aware in command line to make "
                 "replica assignment without rack information.")


def broker_metadata(brokers: Sequence[tuple[int, str | None]], broker_list: Sequence[int],
                    rack_aware: bool = True) -> list[tuple[int, str | None]]:
    """Kafka's getBrokerMetadata: the cluster's brokers (in cluster order) that are in --broker-list."""
    wanted = set(broker_list)
    result = [(b, rack if rack_aware else None) for b, rack in brokers if b in wanted]
    if rack_aware and any(r is None for _, r in result) and not all(r is None for _, r in result):
        raise PlanError(NOT_ALL_RACKS)
    return result


def calculate_assignment(current: Mapping[TopicPartition, Sequence[int]],
                         brokers: Sequence[tuple[int, str | None]],
                         rng: RandomSource | None = None) -> dict[TopicPartition, list[int]]:
    """Kafka's calculateAssignment: per topic, assignReplicasToBrokers(brokers, #partitions, RF of partition 0)."""
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in current:
        by_topic.setdefault(tp[0], []).append(tp)
    proposed: dict[TopicPartition, list[int]] = {}
    for topic in sorted(by_topic):
        tps = sorted(by_topic[topic])
        rf = len(current[tps[0]])
        assigned = assign_replicas_to_brokers(brokers, len(tps), rf, rng=rng)
        proposed.update(((topic, p), reps) for p, reps in assigned.items())
    return proposed
