"""The controller's cache of the cluster: live brokers, assignments, leaders and ISRs.

One owner: the controller's event task. Nothing else reads or writes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from typing import Iterable

from pylog.common.types import TP
from pylog.controller.states import PARTITION_PREVIOUS, REPLICA_PREVIOUS, PartitionLifecycle, ReplicaLifecycle
from pylog.controller.states import split_valid, transition
from pylog.zk.codecs import BrokerRegistration, PartitionState as LeaderIsr

TPR = tuple[str, int, int]  # a partition's replica: topic, partition, broker


@dataclass(slots=True)
class Assignment:
    """A partition's replicas; during a reassignment `replicas` is target + original (KIP-455)."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def target(self) -> tuple[int, ...]:
        """Where the replicas will be once the reassignment completes."""
        return tuple(r for r in self.replicas if r not in self.removing)

    @property
    def original(self) -> tuple[int, ...]:
        """Where the replicas were before the reassignment started."""
        return tuple(r for r in self.replicas if r not in self.adding)

    @property
    def reassigning(self) -> bool:
        """Whether a reassignment is in progress."""
        return bool(self.adding or self.removing)


@dataclass(slots=True)
class LiveBroker:
    """A registered broker and its epoch (the czxid of its registration znode)."""

    registration: BrokerRegistration
    epoch: int


@dataclass
class ControllerContext:
    """Everything the controller knows; reset on every failover."""

    epoch: int = 0
    epoch_zk_version: int = -1
    live: dict[int, LiveBroker] = field(default_factory=dict)
    shutting_down: set[int] = field(default_factory=set)
    topic_ids: dict[str, str | None] = field(default_factory=dict)
    assignments: dict[TP, Assignment] = field(default_factory=dict)
    leaders: dict[TP, LeaderIsr] = field(default_factory=dict)
    partition_states: dict[TP, PartitionLifecycle] = field(default_factory=dict)
    replica_states: dict[TPR, ReplicaLifecycle] = field(default_factory=dict)
    topics_to_delete: set[str] = field(default_factory=set)
    deletion_pending_replicas: dict[str, set[tuple[int, int]]] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    offline_replicas: dict[int, set[TP]] = field(default_factory=dict)  # on failed log dirs, by broker (KIP-112)

    @property
    def live_ids(self) -> set[int]:
        """Registered brokers (including ones in controlled shutdown)."""
        return set(self.live)

    def partitions_of(self, topic: str) -> list[TP]:
        """A topic's partitions, sorted."""
        return sorted(tp for tp in self.assignments if tp[0] == topic)

    def topics(self) -> set[str]:
        """Every known topic."""
        return set(self.topic_ids)

    def offline_brokers_of(self, tp: TP) -> set[int]:
        """Brokers whose replica of `tp` sits on a failed log dir (they may not lead it)."""
        return {b for b, tps in self.offline_replicas.items() if tp in tps}

    def partitions_on(self, broker_id: int) -> list[TP]:
        """Partitions with a replica on a broker."""
        return [tp for tp, a in self.assignments.items() if broker_id in a.replicas]

    def move_partitions(self, tps: Iterable[TP], target: PartitionLifecycle) -> list[TP]:
        """Partition state changes, checked against PARTITION_PREVIOUS; returns those that moved.

        Only the returned partitions may go on to the change's effects (ZooKeeper, requests).
        """
        return transition(self.partition_states, tps, target, PARTITION_PREVIOUS)

    def may_move_partitions(self, tps: Iterable[TP], target: PartitionLifecycle) -> list[TP]:
        """The partitions allowed to move to `target` (refusals logged), moving none: checked before a
        ZooKeeper write whose success decides the move."""
        return split_valid(list(dict.fromkeys(tps)),
                           lambda tp: self.partition_states.get(tp, PartitionLifecycle.NON_EXISTENT),
                           target, PARTITION_PREVIOUS)

    def move_replicas(self, replicas: Iterable[TPR], target: ReplicaLifecycle) -> list[TPR]:
        """Replica state changes, checked against REPLICA_PREVIOUS; returns those that moved (and may
        go on to the change's effects)."""
        return transition(self.replica_states, replicas, target, REPLICA_PREVIOUS)

    def initialize_states(self) -> None:
        """A new controller's starting states, read off what it loaded (Kafka's initializePartitionState
        and initializeReplicaState: set, not transitioned, since there is no previous state)."""
        live = self.live_ids
        for tp, a in self.assignments.items():
            for r in a.replicas:
                self.replica_states[(*tp, r)] = ReplicaLifecycle.ONLINE if r in live else ReplicaLifecycle.OFFLINE
            st = self.leaders.get(tp)
            self.partition_states[tp] = (PartitionLifecycle.NEW if st is None else
                                         PartitionLifecycle.ONLINE if st.leader in live else PartitionLifecycle.OFFLINE)

    def remove_topic(self, topic: str) -> None:
        """Forget a topic that is gone from ZooKeeper (whatever state its partitions were in)."""
        for tp in self.partitions_of(topic):
            self.assignments.pop(tp, None)
            self.leaders.pop(tp, None)
            self.partition_states.pop(tp, None)
        for key in [k for k in self.replica_states if k[0] == topic]:
            del self.replica_states[key]
        self.topic_ids.pop(topic, None)
        self.topics_to_delete.discard(topic)
        self.deletion_pending_replicas.pop(topic, None)
        self.topic_configs.pop(topic, None)
