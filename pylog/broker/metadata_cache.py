"""What this broker believes about the cluster, as last told by the controller (UpdateMetadata)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

LEADER_DURING_DELETE = -2  # Kafka's marker for "this partition's topic is being deleted"


@dataclass(slots=True)
class BrokerEndpoint:
    """A live broker as clients should reach it."""

    id: int
    host: str
    port: int
    rack: str | None = None
    listeners: dict[str, tuple[str, int]] = field(default_factory=dict)  # every advertised listener

    def on(self, listener: str) -> "BrokerEndpoint | None":
        """The same broker as reached through `listener`, or None when it does not advertise it."""
        hp = self.listeners.get(listener)
        return None if hp is None else BrokerEndpoint(self.id, hp[0], hp[1], self.rack, self.listeners)


@dataclass(slots=True)
class PartitionInfo:
    """Leader, epochs and replica sets of one partition."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: list[int]
    replicas: list[int]
    offline_replicas: list[int] = field(default_factory=list)
    zk_version: int = 0
    controller_epoch: int = 0


class MetadataCache:
    """Live brokers, partition states and topic ids; mutated only from the event loop."""

    def __init__(self, inter_broker_listener: str = "PLAINTEXT") -> None:
        self.inter_broker_listener = inter_broker_listener  # `brokers` holds these endpoints
        self.brokers: dict[int, BrokerEndpoint] = {}
        self.topics: dict[str, dict[int, PartitionInfo]] = {}
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.controller_id: int = -1
        self.controller_epoch: int = -1

    def update(self, req) -> list[tuple[str, int]]:
        """Apply an UpdateMetadata request; return the partitions it removed (deleted topics)."""
        self.controller_id = req.controller_id
        self.controller_epoch = req.controller_epoch
        brokers: dict[int, BrokerEndpoint] = {}
        for b in req.live_brokers:
            listeners = {e.listener: (e.host, e.port) for e in b.endpoints}
            ep = listeners.get(self.inter_broker_listener) or next(iter(listeners.values()), None)
            if ep is not None:
                brokers[b.id] = BrokerEndpoint(b.id, ep[0], ep[1], b.rack, listeners)
        self.brokers = brokers
        removed: list[tuple[str, int]] = []
        for ts in req.topic_states:
            parts = self.topics.setdefault(ts.topic_name, {})
            if ts.topic_id is not None and ts.topic_id.int != 0:
                self.topic_ids[ts.topic_name] = ts.topic_id
            for ps in ts.partition_states:
                if ps.leader == LEADER_DURING_DELETE:
                    if parts.pop(ps.partition_index, None) is not None:
                        removed.append((ts.topic_name, ps.partition_index))
                    continue
                parts[ps.partition_index] = PartitionInfo(
                    ts.topic_name, ps.partition_index, ps.leader, ps.leader_epoch, list(ps.isr),
                    list(ps.replicas), list(ps.offline_replicas), ps.zk_version, ps.controller_epoch)
            if not parts:
                del self.topics[ts.topic_name]
                self.topic_ids.pop(ts.topic_name, None)
        return removed

    def partition(self, topic: str, partition: int) -> PartitionInfo | None:
        """One partition's state, or None when unknown."""
        parts = self.topics.get(topic)
        return parts.get(partition) if parts else None

    def brokers_on(self, listener: str | None) -> list[BrokerEndpoint]:
        """Live brokers as a client of `listener` reaches them, by id (Kafka omits brokers without it)."""
        ordered = sorted(self.brokers.values(), key=lambda b: b.id)
        if listener is None:
            return ordered
        return [ep for ep in (b.on(listener) for b in ordered) if ep is not None]

    def alive(self, broker_id: int) -> bool:
        """Whether the controller last listed this broker as live."""
        return broker_id in self.brokers

    def current_leader(self, topic: str, partition: int,
                       listener: str | None) -> tuple[int, int, BrokerEndpoint | None]:
        """KIP-951: (leader id, leader epoch, its endpoint on `listener`) for a NOT_LEADER answer; (-1, -1, None)
        when unknown, and no endpoint when the leader is not live or lacks the listener (as Kafka)."""
        info = self.partition(topic, partition)
        if info is None:
            return -1, -1, None
        b = self.brokers.get(info.leader)
        ep = None if b is None else b if listener is None else b.on(listener)
        return info.leader, info.leader_epoch, ep
