"""Partition and replica state machines as data: each state lists the states it may follow.

Kafka calls these PartitionState and ReplicaState; here they are PartitionLifecycle and
ReplicaLifecycle, because zk.codecs.PartitionState is the partition state znode (leader, ISR).

Transitions (partitions):
  NON_EXISTENT -> NEW            topic or partitions created (assignment known, no leader yet)
  NEW -> ONLINE                  first leader = first live replica, ISR = live replicas
  ONLINE/OFFLINE -> ONLINE       an election (offline, preferred, reassignment, controlled shutdown)
  NEW/ONLINE/OFFLINE -> OFFLINE  no eligible leader left
  OFFLINE -> NON_EXISTENT        topic deleted
Transitions (replicas):
  NON_EXISTENT -> NEW            replica assigned (reassignment target, new partition)
  NEW/ONLINE/OFFLINE -> ONLINE   its broker is live and told its role
  NEW/ONLINE/OFFLINE -> OFFLINE  its broker died or shuts down: removed from ISRs
  OFFLINE/ONLINE -> DELETION_STARTED -> DELETED -> NON_EXISTENT   topic deletion / reassignment removal
"""

from __future__ import annotations

import enum
import logging
from typing import Callable, Hashable, Iterable, MutableMapping, TypeVar

log = logging.getLogger("pylog.state.change")


class PartitionLifecycle(enum.Enum):
    """Where a partition is in its life, as the controller sees it."""

    NON_EXISTENT = 0
    NEW = 1
    ONLINE = 2
    OFFLINE = 3


class ReplicaLifecycle(enum.Enum):
    """Where one replica is in its life, as the controller sees it."""

    NON_EXISTENT = 0
    NEW = 1
    ONLINE = 2
    OFFLINE = 3
    DELETION_STARTED = 4
    DELETED = 5


P, R = PartitionLifecycle, ReplicaLifecycle

PARTITION_PREVIOUS: dict[PartitionLifecycle, frozenset[PartitionLifecycle]] = {
    P.NEW: frozenset({P.NON_EXISTENT}),
    P.ONLINE: frozenset({P.NEW, P.ONLINE, P.OFFLINE}),
    P.OFFLINE: frozenset({P.NEW, P.ONLINE, P.OFFLINE}),
    P.NON_EXISTENT: frozenset({P.OFFLINE, P.NEW}),
}

REPLICA_PREVIOUS: dict[ReplicaLifecycle, frozenset[ReplicaLifecycle]] = {
    R.NEW: frozenset({R.NON_EXISTENT}),
    R.ONLINE: frozenset({R.NEW, R.ONLINE, R.OFFLINE}),
    R.OFFLINE: frozenset({R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_STARTED}),
    R.DELETION_STARTED: frozenset({R.OFFLINE, R.ONLINE, R.DELETION_STARTED}),
    R.DELETED: frozenset({R.DELETION_STARTED}),
    R.NON_EXISTENT: frozenset({R.DELETED, R.NEW}),
}

K = TypeVar("K", bound=Hashable)
S = TypeVar("S", PartitionLifecycle, ReplicaLifecycle)


def split_valid(items: Iterable[K], current: Callable[[K], S], target: S,
                previous: dict[S, frozenset[S]]) -> list[K]:
    """The items that may move to `target`; each refused one is logged, none raises."""
    ok = []
    allowed = previous[target]
    for item in items:
        state = current(item)
        if state in allowed:
            ok.append(item)
        else:
            # Kafka's controller logs (never throws) and leaves the item where it is.
            log.error("Invalid state transition of %s from %s to %s: it should be in one of %s before moving to %s",
                      item, state.name, target.name, ",".join(sorted(s.name for s in allowed)), target.name)
    return ok


def transition(states: MutableMapping[K, S], items: Iterable[K], target: S,
               previous: dict[S, frozenset[S]]) -> list[K]:
    """The one transition function: move `items` to `target` where `previous` allows it.

    An item missing from `states` is NON_EXISTENT, and moving to NON_EXISTENT forgets it. Returns
    the items that moved; refused ones are logged and keep their state.
    """
    absent = type(target).NON_EXISTENT
    moved = split_valid(list(dict.fromkeys(items)), lambda k: states.get(k, absent), target, previous)
    for item in moved:
        if target is absent:
            states.pop(item, None)
        else:
            states[item] = target
    return moved
