"""Partition reassignment (KIP-455) as pure decisions: what the controller does next for a partition.

No I/O: the controller (reassignment.py) reads ZooKeeper, asks these functions, and applies the
answer. Kafka's rules (KafkaController / ControllerContext in 3.3):
* a reassignment to `target` writes the full set `(target ++ original).distinct`, with
  adding = full - original and removing = full - target (ReplicaAssignment.reassignTo); the
  original replicas are the current ones minus the replicas being added, so a new target given
  while one is in flight still starts from the same original set;
* cancelling (target None) reassigns back to the original replicas;
* a partition finishes once every target replica is in the ISR: the leader stays if it is a live
  target replica, else the first live in-sync target replica leads; the ISR keeps only target
  replicas and the removed replicas are stopped and deleted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import AbstractSet, Iterable, Sequence

from pylog.controller.context import Assignment
from pylog.controller.election import Election, reassignment_leader


def reassign_to(current: Assignment, target: Sequence[int]) -> Assignment:
    """ReplicaAssignment.reassignTo: the full replica set during a move to `target`."""
    original = current.original
    full = tuple(dict.fromkeys((*target, *original)))
    return Assignment(full, tuple(r for r in full if r not in original), tuple(r for r in full if r not in target))


def build_reassignment(current: Assignment, target: Sequence[int] | None) -> Assignment | None:
    """maybeBuildReassignment: the new assignment, or None when cancelling with nothing in flight."""
    if current.reassigning:
        return reassign_to(current, current.original if target is None else target)
    return None if target is None else reassign_to(current, target)


def _scala_list(values: Iterable[int]) -> str:
    return "List(" + ", ".join(str(v) for v in values) + ")"


def validate_target(current: Assignment, replicas: Sequence[int], live: AbstractSet[int]) -> str | None:
    """KafkaController.validateReplicas: Kafka's INVALID_REPLICA_ASSIGNMENT message, or None if valid."""
    if not replicas:
        return "Empty replica list specified in partition reassignment."
    if len(set(replicas)) != len(replicas):
        return f"Duplicate replica ids in partition reassignment replica list: {_scala_list(replicas)}"
    if any(r < 0 for r in replicas):
        return f"Invalid broker id in replica list: {_scala_list(replicas)}"
    adding = reassign_to(current, replicas).adding
    if not set(adding) <= set(live):
        return (f"Replica assignment has brokers that are not alive. Replica list: {_scala_list(adding)}, "
                f"live broker list: Set({', '.join(str(b) for b in sorted(live))})")
    return None


def unneeded_replicas(before: Assignment, after: Assignment) -> tuple[int, ...]:
    """Replicas a new target drops from an in-flight reassignment (they are stopped at once)."""
    return tuple(r for r in before.replicas if r not in after.replicas)


class Step(enum.Enum):
    """What a reassigning partition waits for, or does, next."""

    CATCH_UP = "catch-up"    # target replicas are not all in the ISR yet: replicate and wait for ISR changes
    COMPLETE = "complete"    # write `final`, stop and delete `removed`, write the target assignment
    NO_LEADER = "no-leader"  # caught up, but no live in-sync target replica can lead: wait for a broker


@dataclass(frozen=True, slots=True)
class Plan:
    """The next step for one partition, with what completing it writes."""

    step: Step
    final: Election | None = None
    removed: tuple[int, ...] = ()


def is_complete(a: Assignment, isr: Sequence[int]) -> bool:
    """isReassignmentComplete: nothing in flight, or every target replica is in the ISR."""
    return not a.reassigning or set(a.target) <= set(isr)


def finish_state(target: Sequence[int], leader: int, isr: Sequence[int], live: AbstractSet[int]) -> Election | None:
    """The leader and ISR a finished reassignment writes: ISR cut to the target; the leader kept if it is
    a live target replica (moveReassignedPartitionLeaderIfRequired), else the first live in-sync one."""
    new_isr = tuple(r for r in isr if r in target)
    if leader in target and leader in live:
        return Election(leader, new_isr)
    chosen = reassignment_leader(target, new_isr, live)
    return None if chosen is None else Election(chosen.leader, new_isr)


def next_step(a: Assignment, leader: int, isr: Sequence[int], live: AbstractSet[int]) -> Plan:
    """Decide a reassigning partition's next step from its assignment, leader, ISR and live brokers."""
    if not is_complete(a, isr):
        return Plan(Step.CATCH_UP)
    target = a.target
    removed = tuple(r for r in a.replicas if r not in target)
    final = finish_state(target, leader, isr, live)
    return Plan(Step.NO_LEADER if final is None else Step.COMPLETE, final, removed)
