"""Planner input/output data: brokers, partitions, cluster snapshots, options."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Broker", "Partition", "Snapshot", "PlanOptions", "PlanError", "TopicPartition"]

TopicPartition = tuple[str, int]


class PlanError(ValueError):
    """A planner input the planner cannot work with; the message is meant for the user as is."""


@dataclass(frozen=True, slots=True)
class Broker:
    """A broker: id, optional rack, optional capacity (relative weight for its share of replicas/bytes)."""

    id: int
    rack: str | None = None
    capacity: float | None = None


@dataclass(slots=True)
class Partition:
    """A partition's current replicas (in order: the first is the preferred leader) and optional load."""

    topic: str
    partition: int
    replicas: list[int]
    size_bytes: int | None = None
    bytes_in_per_sec: float | None = None
    bytes_out_per_sec: float | None = None
    messages_in_per_sec: float | None = None

    @property
    def tp(self) -> TopicPartition:
        """(topic, partition), the sort key Kafka uses for its JSON."""
        return (self.topic, self.partition)


@dataclass(slots=True)
class Snapshot:
    """A cluster as the planner sees it: brokers and the partitions' current replicas and loads."""

    brokers: list[Broker]
    partitions: list[Partition]
    version: int = 1
    extra: dict = field(default_factory=dict)  # unknown top-level keys, kept so a rewrite loses nothing


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """How to plan: what to balance, which constraints, and caps on the movement (Yelp-style)."""

    balance_by: str = "count"        # "count" (replicas per broker) or "bytes" (disk usage)
    topic_balance: bool = True       # also balance each topic's replicas/leaders per broker (within one)
    rack_aware: bool = True          # False = --disable-rack-aware
    leader_balance: bool = True      # reorder replicas so preferred leaders are balanced
    max_moves: int | None = None     # --max-moves: at most this many replica moves
    max_bytes: int | None = None     # --max-bytes: at most this many bytes moved
    max_leader_changes: int | None = None  # --leader-changes: at most this many preferred-leader changes

    def __post_init__(self) -> None:
        if self.balance_by not in ("count", "bytes"):
            raise PlanError(f"balance_by must be 'count' or 'bytes', not {self.balance_by!r}")
        for name in ("max_moves", "max_bytes", "max_leader_changes"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise PlanError(f"{name} must be >= 0, not {value}")
