"""Kafka's create-time replica assignment (AdminUtils.assignReplicasToBrokers) and add-partitions assignment.

One implementation, shared by the broker's CreateTopics/CreatePartitions and the CLI's topic creation, so both
place replicas exactly as Kafka 3.3 does (kafka-formats.md section 4).
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Protocol

from pylog.common.errors import (BrokerNotAvailableError, InvalidPartitionsError, InvalidReplicaAssignmentError,
                                 InvalidReplicationFactorError, KafkaError)

__all__ = [
    "AdminOperationError",
    "AssignmentError",
    "BrokerNotAvailableError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "assign_replicas_to_brokers",
    "rack_alternated_broker_list",
    "new_partitions_assignment",
]


class AssignmentError(KafkaError, ValueError):
    """The placement's own refusals; `code` is UNKNOWN_SERVER_ERROR, as Kafka's AdminOperationException is not
    an ApiException. Its ApiExceptions (invalid partitions, replication factor, replica assignment, broker not
    available) are the registry's classes in pylog.common.errors, shared with the ZooKeeper admin client."""


class AdminOperationError(AssignmentError):
    """Kafka's AdminOperationException (not an ApiException, so UNKNOWN_SERVER_ERROR on the wire)."""


class RandomSource(Protocol):
    """What the assignment needs from a random generator: Java's `rand.nextInt(n)`."""

    def randrange(self, n: int) -> int:  # pragma: no cover - protocol
        """Return a uniform integer in [0, n)."""


_RNG = random.Random()


def _replica_index(first: int, second_shift: int, replica: int, n_brokers: int) -> int:
    # Kafka's replicaIndex: never 0, so a follower never lands on the leader's slot.
    shift = 1 + (second_shift + replica) % (n_brokers - 1)
    return (first + shift) % n_brokers


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """Kafka's getRackAlternatedBrokerList: one broker per rack in turn, racks sorted, ids ascending in a rack."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    racks = sorted(by_rack)
    iterators = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_racks):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            result.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return result


def assign_replicas_to_brokers(
    brokers: Sequence[tuple[int, str | None]],
    n_partitions: int,
    rf: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: RandomSource | None = None,
) -> dict[int, list[int]]:
    """Place `n_partitions` x `rf` replicas on `brokers` ((id, rack) in the caller's order) exactly like Kafka.

    Random start index and shift come from `rng.randrange` (two draws, start first) unless
    `fixed_start_index` >= 0. Raises the `AssignmentError` subclass Kafka would, with Kafka's message.
    """
    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if rf <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if rf > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {rf} larger than available brokers: {len(brokers)}."
        )
    rng = rng if rng is not None else _RNG
    if all(rack is None for _, rack in brokers):
        return _assign_rack_unaware(n_partitions, rf, [b for b, _ in brokers], fixed_start_index,
                                    start_partition_id, rng)
    if any(rack is None for _, rack in brokers):
        raise AdminOperationError("Not all brokers have rack information for replica rack aware assignment.")
    racks = {b: rack for b, rack in brokers if rack is not None}
    return _assign_rack_aware(n_partitions, rf, racks, fixed_start_index, start_partition_id, rng)


def _start_and_shift(n: int, fixed_start_index: int, rng: RandomSource) -> tuple[int, int]:
    # Order matters for seeded reproducibility: Kafka draws the start index first, then the shift.
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    start = rng.randrange(n)
    return start, rng.randrange(n)


def _assign_rack_unaware(n_partitions: int, rf: int, broker_ids: list[int], fixed_start_index: int,
                         start_partition_id: int, rng: RandomSource) -> dict[int, list[int]]:
    n = len(broker_ids)
    start_index, shift = _start_and_shift(n, fixed_start_index, rng)
    partition_id = max(0, start_partition_id)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        replicas = [broker_ids[first]]
        replicas.extend(broker_ids[_replica_index(first, shift, j, n)] for j in range(rf - 1))
        result[partition_id] = replicas
        partition_id += 1
    return result


def _assign_rack_aware(n_partitions: int, rf: int, racks: dict[int, str], fixed_start_index: int,
                       start_partition_id: int, rng: RandomSource) -> dict[int, list[int]]:
    num_racks = len(set(racks.values()))
    arranged = rack_alternated_broker_list(racks)
    n = len(arranged)
    start_index, shift = _start_and_shift(n, fixed_start_index, rng)
    partition_id = max(0, start_partition_id)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        brokers_used = {leader}
        k = 0
        for _ in range(rf - 1):
            while True:
                broker = arranged[_replica_index(first, shift * num_racks, k, n)]
                rack = racks[broker]
                k += 1
                # Skip a broker whose rack already has a replica while some rack has none, or a broker that
                # already has a replica while some broker has none (Kafka's two skip rules).
                if ((rack not in racks_used or len(racks_used) == num_racks)
                        and (broker not in brokers_used or len(brokers_used) == n)):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        result[partition_id] = replicas
        partition_id += 1
    return result


def _validate_manual_assignment(assignment: Mapping[int, Sequence[int]], expected_rf: int,
                                available: set[int]) -> None:
    # Kafka's AdminZkClient.validateReplicaAssignment, same checks in the same order.
    for partition_id, replicas in assignment.items():
        if not replicas:
            raise InvalidReplicaAssignmentError(f"Cannot have replication factor of 0 for partition id {partition_id}.")
        if len(replicas) != len(set(replicas)):
            raise InvalidReplicaAssignmentError(
                "Duplicate brokers not allowed in replica assignment: "
                f"{', '.join(map(str, replicas))} for partition id {partition_id}.")
        if not set(replicas) <= available:
            raise BrokerNotAvailableError(
                f"Some brokers specified for partition id {partition_id} are not available. "
                f"Specified brokers: {', '.join(map(str, replicas))}, "
                f"available brokers: {', '.join(map(str, sorted(available)))}.")
    bad = sorted((p, len(r)) for p, r in assignment.items() if len(r) != expected_rf)
    if bad:
        raise InvalidReplicaAssignmentError(
            "Inconsistent replication factor between partitions, "
            f"partition 0 has {expected_rf} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
            f"replication factors [{', '.join(str(rf) for _, rf in bad)}], respectively.")


def new_partitions_assignment(
    topic: str,
    existing: Mapping[int, Sequence[int]],
    brokers: Sequence[tuple[int, str | None]],
    num_partitions: int,
    replica_assignment: Mapping[int, Sequence[int]] | None = None,
) -> dict[int, list[int]]:
    """Kafka's AdminZkClient.createNewPartitionsAssignment: the assignment of the partitions to add only.

    Deterministic: start index and shift are the index of the first broker whose id >= partition 0's leader.
    """
    if 0 not in existing:
        shown = "{" + ", ".join(f"{p}: {list(r)}" for p, r in sorted(existing.items())) + "}"
        raise AdminOperationError(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: {shown}")
    partition0 = list(existing[0])
    to_add = num_partitions - len(existing)
    if to_add <= 0:
        raise InvalidPartitionsError(
            "The number of partitions for a topic can only be increased. "
            f"Topic {topic} currently has {len(existing)} partitions, "
            f"{num_partitions} would not be an increase.")
    if replica_assignment is not None:
        _validate_manual_assignment(replica_assignment, len(partition0), {b for b, _ in brokers})
        return {p: list(r) for p, r in replica_assignment.items()}
    start_index = next((i for i, (b, _) in enumerate(brokers) if b >= partition0[0]), -1)
    return assign_replicas_to_brokers(brokers, to_add, len(partition0), fixed_start_index=max(0, start_index),
                                      start_partition_id=len(existing))
