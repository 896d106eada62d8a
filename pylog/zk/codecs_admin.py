"""JSON of the admin-request, notification and bookkeeping znodes (ZkData.scala).

/admin/reassign_partitions (legacy), /admin/preferred_replica_election, pylog's /admin/shutdown_brokers/<id>,
/isr_change_notification/*, /log_dir_event_notification/* and /feature (/latest_producer_id_block is in codecs.py,
with the rule for the next block). Same rules as codecs.py:
compact JSON in Kafka's key order, decoders ignore key order and raise ValueError naming path and field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from pylog.zk import paths
from pylog.zk._json import JsonReader, dumps
from pylog.zk.codecs import TopicPartition

LOG_DIR_FAILURE_EVENT = 1  # LogDirEventNotificationHandler.LogDirFailureEvent
FEATURES_ENABLED = 1
FEATURES_DISABLED = 0


def _read_partition_entries(r: JsonReader, with_replicas: bool) -> list[tuple[TopicPartition, Any]]:
    """Parse the "partitions":[{"topic":..,"partition":..(,"replicas":[..])}] list shared by several znodes."""
    out = []
    for i, item in enumerate(r.list("partitions")):
        entry = r.child(f"partitions[{i}]", item)
        tp = TopicPartition(entry.str("topic"), entry.int("partition"))
        out.append((tp, entry.int_list("replicas") if with_replicas else None))
    return out


def _partition_list(partitions: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    """[{"topic":..,"partition":..}, ...] in the given order."""
    return [{"topic": tp[0], "partition": tp[1]} for tp in partitions]


def _unique(partitions: Iterable[Sequence[Any]]) -> tuple[TopicPartition, ...]:
    """Kafka holds these as a Set: keep the first occurrence of each partition, in order."""
    return tuple(dict.fromkeys(TopicPartition(t, p) for t, p in partitions))


@dataclass(frozen=True)
class ReassignPartitions:
    """/admin/reassign_partitions (legacy): target replicas per partition."""

    partitions: Mapping[TopicPartition, tuple[int, ...]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions",
                           {TopicPartition(*tp): tuple(reps) for tp, reps in self.partitions.items()})

    def encode(self) -> bytes:
        """{"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..]}]}."""
        items = [{"topic": tp.topic, "partition": tp.partition, "replicas": list(reps)}
                 for tp, reps in self.partitions.items()]
        return dumps({"version": 1, "partitions": items})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "ReassignPartitions":
        """Parse; extra keys (e.g. log_dirs) are ignored."""
        r = JsonReader(data, path or paths.reassign_partitions())
        r.version((1,), default=1)
        return cls(dict(_read_partition_entries(r, with_replicas=True)))


@dataclass(frozen=True)
class _PartitionListZNode:
    """{"version":1,"partitions":[{"topic":..,"partition":..}]}: a set of partitions, kept in order."""

    partitions: tuple[TopicPartition, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", _unique(self.partitions))

    @classmethod
    def _default_path(cls) -> str:
        raise NotImplementedError

    def encode(self) -> bytes:
        """Compact JSON, partitions in order."""
        return dumps({"version": 1, "partitions": _partition_list(self.partitions)})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> Any:
        """Parse; duplicates collapse as in Kafka's Set."""
        r = JsonReader(data, path or cls._default_path())
        return cls(tuple(tp for tp, _ in _read_partition_entries(r, with_replicas=False)))


class PreferredReplicaElection(_PartitionListZNode):
    """/admin/preferred_replica_election: the partitions to move back to their preferred leader."""

    @classmethod
    def _default_path(cls) -> str:
        return paths.preferred_replica_election()


class IsrChangeNotification(_PartitionListZNode):
    """/isr_change_notification/isr_change_<seq>: partitions whose ISR changed (IBP < 2.7-IV2)."""

    @classmethod
    def _default_path(cls) -> str:
        return paths.isr_change_prefix() + "<seq>"


@dataclass(frozen=True)
class LogDirEventNotification:
    """/log_dir_event_notification/log_dir_event_<seq>: {"version":1,"broker":N,"event":1}."""

    broker_id: int
    event: int = LOG_DIR_FAILURE_EVENT

    def encode(self) -> bytes:
        """Kafka's LogDirEventNotificationSequenceZNode.encode."""
        return dumps({"version": 1, "broker": self.broker_id, "event": self.event})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "LogDirEventNotification":
        """Parse one notification."""
        r = JsonReader(data, path or paths.log_dir_event_prefix() + "<seq>")
        return cls(r.int("broker"), r.int("event", LOG_DIR_FAILURE_EVENT))


@dataclass(frozen=True)
class ShutdownRequest:
    """/admin/shutdown_brokers/<id> (pylog): {"version":1,"broker_epoch":N}, the registration it is meant for.

    The epoch makes the request one-shot: a broker restarted since (a new registration czxid) ignores it.
    """

    broker_epoch: int

    def encode(self) -> bytes:
        """Compact JSON."""
        return dumps({"version": 1, "broker_epoch": self.broker_epoch})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "ShutdownRequest":
        """Parse a request."""
        r = JsonReader(data, path or paths.shutdown_brokers() + "/<id>")
        r.version((1,), default=1)
        return cls(r.int("broker_epoch"))


@dataclass(frozen=True)
class FeatureZNodeData:
    """/feature (KIP-584): finalized feature name -> max version level; v1 also writes min_version_level."""

    features: Mapping[str, int] = field(default_factory=dict)
    status: int = FEATURES_ENABLED
    version: int = 2

    def encode(self) -> bytes:
        """{"version":2,"status":1,"features":{"<name>":{"max_version_level":N}}}."""
        if self.version not in (1, 2):
            raise ValueError(f"Unsupported /feature version {self.version}")
        levels = {name: ({"max_version_level": lvl, "min_version_level": lvl} if self.version == 1
                         else {"max_version_level": lvl}) for name, lvl in self.features.items()}
        return dumps({"version": self.version, "status": self.status, "features": levels})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "FeatureZNodeData":
        """Parse versions 1 and 2 with Kafka's checks (status 0/1, levels >= 1)."""
        r = JsonReader(data, path or paths.feature())
        version = r.version((1, 2))
        status = r.int("status")
        if status not in (FEATURES_DISABLED, FEATURES_ENABLED):
            raise r.fail("status", f"has unknown value {status}")
        features = {}
        for name, levels in r.object("features").items():
            lr = r.child(f"features.{name}", levels)
            top = lr.int("max_version_level")
            low = lr.int("min_version_level") if version == 1 else 1
            if top < 1 or low < 1 or top < low:
                raise r.fail(f"features.{name}", f"has invalid levels min={low} max={top}")
            features[name] = top
        return cls(features, status, version)
