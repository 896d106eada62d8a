"""AdminZkClient: how admin tools (--zookeeper) and the broker's CreateTopics/DeleteTopics/CreatePartitions
handlers change the cluster, by writing the znodes the controller watches (Kafka's AdminZkClient and
ZkAdminManager, with their error messages).

Replica placement is not done here: callers pass the assignment (pylog.planner computes it).
Errors carry the Kafka error the broker should put in its response (`code`, from pylog.common.errors).
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

# The registry's shared ApiExceptions, named from here too (zk_admin.InvalidPartitionsError is that one class).
from pylog.common.errors import (BrokerNotAvailableError, ErrorCode, InvalidPartitionsError,  # noqa: F401
                                 InvalidReplicaAssignmentError, KafkaError)
from pylog.zk import errors, paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import BrokerRegistration, PartitionState, TopicAssignment, TopicPartition
from pylog.zk.codecs_admin import PreferredReplicaElection, ReassignPartitions
from pylog.zk.uuids import random_uuid

MAX_TOPIC_NAME_LENGTH = 249  # Topic.MAX_NAME_LENGTH
_LEGAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

# ReassignPartitionsCommand.cannotExecuteBecauseOfExistingMessage
REASSIGNMENT_IN_PROGRESS_MESSAGE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this "
    "and create a new partition assignment in addition to the existing one. The --additional flag can also "
    "be used to change the throttle by resubmitting the current reassignment.")


class AdminError(KafkaError):
    """An admin operation was refused with the Kafka error `code` (UNKNOWN_SERVER_ERROR unless a subclass says)."""


class UnknownTopicOrPartitionError(AdminError):
    """The topic does not exist (UNKNOWN_TOPIC_OR_PARTITION)."""

    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class InvalidTopicError(AdminError):
    """Illegal topic name, or it collides with an existing one (INVALID_TOPIC_EXCEPTION)."""

    code = ErrorCode.INVALID_TOPIC_EXCEPTION


class TopicExistsError(AdminError):
    """The topic exists or is being deleted (TOPIC_ALREADY_EXISTS)."""

    code = ErrorCode.TOPIC_ALREADY_EXISTS


class ReassignmentInProgressError(AdminError):
    """/admin/reassign_partitions already exists (REASSIGNMENT_IN_PROGRESS)."""

    code = ErrorCode.REASSIGNMENT_IN_PROGRESS


class TopicAlreadyMarkedForDeletionError(AdminError):
    """Deleting a topic twice; Kafka's broker swallows this and reports success, hence NONE."""

    code = ErrorCode.NONE


class PreferredLeaderElectionInProgressError(AdminError):
    """/admin/preferred_replica_election already exists (an AdminOperationException in Kafka, not an
    ApiException: UNKNOWN_SERVER_ERROR if it ever reached the wire)."""


def validate_topic_name(name: str) -> None:
    """Kafka's Topic.validate, with its messages; raises InvalidTopicError."""
    if not name:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} "
                                f"characters, topic name: {name}")
    if not set(name) <= _LEGAL_CHARS:
        raise InvalidTopicError(f'Topic name "{name}" is illegal, it contains a character other than '
                                "ASCII alphanumerics, '.', '_' and '-'")


def is_legal_topic_name(name: str) -> bool:
    """Whether Kafka would accept the name; no topic exists under an illegal one (nor is it a znode path)."""
    try:
        validate_topic_name(name)
    except InvalidTopicError:
        return False
    return True


def has_collision_chars(name: str) -> bool:
    """True if the name has '.' or '_', which collide in metric names."""
    return "." in name or "_" in name


def has_collision(a: str, b: str) -> bool:
    """True if two topic names are equal once '.' is read as '_' (Topic.hasCollision)."""
    return a.replace(".", "_") == b.replace(".", "_")


def _scala_map(assignment: Mapping[int, Sequence[int]]) -> str:
    """Render like Scala's Map.toString, as Kafka's message does: Map(0 -> List(1, 1))."""
    body = ", ".join(f"{p} -> List({', '.join(map(str, reps))})" for p, reps in assignment.items())
    return f"Map({body})"


def validate_assignment(assignment: Mapping[int, Sequence[int]]) -> None:
    """AdminZkClient.validateTopicCreate's assignment checks: one RF, no duplicate replicas, ids 0..n-1."""
    if len({len(r) for r in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError("All partitions should have the same number of replicas")
    for replicas in assignment.values():
        if len(replicas) != len(set(replicas)):
            raise InvalidReplicaAssignmentError(f"Duplicate replica assignment found: {_scala_map(assignment)}")
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")


class AdminZkClient:
    """Topic, config and admin-request operations over a connected ZkClient."""

    def __init__(self, zk: ZkClient, topic_config_validator: Callable[[Mapping[str, str]], None] | None = None):
        self.zk = zk
        # Kafka runs LogConfig.validate here; pylog.common owns topic config rules, so callers pass them in.
        self.topic_config_validator = topic_config_validator

    # ------------------------------------------------------------------ topics

    def validate_topic_create(self, name: str, assignment: Mapping[int, Sequence[int]],
                              config: Mapping[str, str]) -> None:
        """Every check Kafka makes before writing a new topic's znodes."""
        validate_topic_name(name)
        if self.zk.is_topic_marked_for_deletion(name):
            raise TopicExistsError(f"Topic '{name}' is marked for deletion.")
        if self.zk.topic_exists(name):
            raise TopicExistsError(f"Topic '{name}' already exists.")
        if has_collision_chars(name):
            existing = self.zk.get_all_topics()
            if name in existing:  # created meanwhile: don't report it as colliding with itself
                raise TopicExistsError(f"Topic '{name}' already exists.")
            colliding = [t for t in existing if has_collision(name, t)]
            if colliding:
                raise InvalidTopicError(f"Topic '{name}' collides with existing topics: {', '.join(colliding)}")
        validate_assignment(assignment)
        if self.topic_config_validator is not None:
            self.topic_config_validator(config)

    def create_topic(self, name: str, assignment: Mapping[int, Sequence[int]],
                     config: Mapping[str, str] | None = None, topic_id: str | None = None,
                     validate: bool = True) -> str:
        """Create a topic: /config/topics/<t> first (always, even empty), then /brokers/topics/<t> v3.

        Returns the topic id (a fresh one unless given). TopicExistsError if the topic exists.
        """
        config = dict(config or {})
        if validate:
            self.validate_topic_create(name, assignment, config)
        topic_id = topic_id or random_uuid()
        self.zk.set_or_create_entity_config("topics", name, config)
        try:
            self.zk.create_topic_assignment(name, TopicAssignment(dict(assignment), topic_id))
        except errors.NodeExistsError:
            raise TopicExistsError(f"Topic '{name}' already exists.") from None
        return topic_id

    def add_partitions(self, name: str, num_partitions: int, new_assignment: Mapping[int, Sequence[int]],
                       available_brokers: Iterable[int] | None = None) -> dict[int, tuple[int, ...]]:
        """Grow a topic to num_partitions; existing partitions keep their replicas (entries for them are
        ignored), new_assignment gives the replicas of the new ones. Returns the full assignment.
        """
        current = self.zk.get_topic_assignment(name) if is_legal_topic_name(name) else None
        if current is None:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        existing, zk_version = current
        old = len(existing.partitions)
        if num_partitions < old:
            raise InvalidPartitionsError(
                f"Topic currently has {old} partitions, which is higher than the requested {num_partitions}.")
        if num_partitions == old:
            raise InvalidPartitionsError(f"Topic already has {old} partitions.")
        added = {int(p): tuple(r) for p, r in new_assignment.items() if int(p) not in existing.partitions}
        self._validate_new_partitions(existing, num_partitions, added, available_brokers)
        updated = TopicAssignment({**existing.partitions, **added}, existing.topic_id,
                                  existing.adding_replicas, existing.removing_replicas)
        try:
            self.zk.set_topic_assignment(name, updated, zk_version)
        except errors.BadVersionError:
            raise AdminError(f"Topic '{name}' was modified concurrently; retry adding partitions.") from None
        return dict(updated.partitions)

    @staticmethod
    def _validate_new_partitions(existing: TopicAssignment, num_partitions: int,
                                 added: Mapping[int, tuple[int, ...]], available: Iterable[int] | None) -> None:
        """ZkAdminManager.createPartitions + AdminZkClient.validateReplicaAssignment checks and messages."""
        old, increment = len(existing.partitions), num_partitions - len(existing.partitions)
        if available is not None:
            unknown = sorted({b for reps in added.values() for b in reps} - set(available))
            if unknown:
                raise InvalidReplicaAssignmentError(
                    f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.")
        if len(added) != increment:
            raise InvalidReplicaAssignmentError(
                f"Increasing the number of partitions by {increment} but {len(added)} assignments provided.")
        if sorted(added) != list(range(old, num_partitions)):
            raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")
        expected_rf = len(existing.replicas(0))
        for p, reps in sorted(added.items()):
            if not reps:
                raise InvalidReplicaAssignmentError(f"Cannot have replication factor of 0 for partition id {p}.")
            if len(reps) != len(set(reps)):
                raise InvalidReplicaAssignmentError(
                    f"Duplicate brokers not allowed in replica assignment: {', '.join(map(str, reps))} "
                    f"for partition id {p}.")
        bad = [(p, len(r)) for p, r in sorted(added.items()) if len(r) != expected_rf]
        if bad:
            raise InvalidReplicaAssignmentError(
                f"Inconsistent replication factor between partitions, partition 0 has {expected_rf} while "
                f"partitions [{', '.join(str(p) for p, _ in bad)}] have replication factors "
                f"[{', '.join(str(rf) for _, rf in bad)}], respectively.")

    def delete_topic(self, name: str) -> None:
        """Mark a topic for deletion (/admin/delete_topics/<t>); the controller does the rest."""
        if not is_legal_topic_name(name) or not self.zk.topic_exists(name):
            raise UnknownTopicOrPartitionError(f"Topic `{name}` to delete does not exist")
        try:
            self.zk.create_delete_topic_path(name)
        except errors.NodeExistsError:
            raise TopicAlreadyMarkedForDeletionError(f"topic {name} is already marked for deletion") from None

    def get_all_topics(self) -> list[str]:
        """All topic names, sorted."""
        return self.zk.get_all_topics()

    def get_topics_marked_for_deletion(self) -> list[str]:
        """Topics with a pending deletion, sorted."""
        return self.zk.get_topic_deletions()

    def get_topic_assignments(self, topics: Iterable[str]) -> dict[str, TopicAssignment]:
        """Assignments of the given topics that exist (bulk)."""
        return self.zk.get_topic_assignments(t for t in topics if is_legal_topic_name(t))

    def get_partition_states(self, topics: Iterable[str]) -> dict[TopicPartition, PartitionState | None]:
        """States of every partition of the given topics (bulk; None where the controller hasn't written one)."""
        assignments = self.get_topic_assignments(topics)
        return self.zk.get_partition_states(
            TopicPartition(t, p) for t, a in assignments.items() for p in sorted(a.partitions))

    def get_broker_registrations(self) -> dict[int, BrokerRegistration]:
        """Live brokers by id."""
        return {b: reg.registration for b, reg in self.zk.get_brokers().items()}

    # ------------------------------------------------------------------ configs

    def change_entity_config(self, entity_type: str, name: str, config: Mapping[str, str]) -> str:
        """Replace an entity's overrides, then notify brokers; returns the notification's path."""
        if entity_type not in paths.CONFIG_TYPES:
            raise ValueError(f"{entity_type} is not a known entityType. Should be one of "
                             f"List({', '.join(paths.CONFIG_TYPES)})")
        if entity_type == "topics":
            validate_topic_name(name)
            if not self.zk.topic_exists(name):
                raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
            if self.topic_config_validator is not None:
                self.topic_config_validator(config)
        if entity_type == "brokers" and name != paths.DEFAULT_ENTITY and not name.isdigit():
            raise ValueError(f"Error parsing broker {name}. The broker's Entity Name must be a single integer value")
        self.zk.set_or_create_entity_config(entity_type, name, config)
        return self.zk.create_config_change_notification(f"{entity_type}/{name}")

    def fetch_entity_config(self, entity_type: str, name: str) -> dict[str, str]:
        """An entity's overrides ({} if none)."""
        return self.zk.get_entity_config(entity_type, name)

    def fetch_all_entity_configs(self, entity_type: str) -> dict[str, dict[str, str]]:
        """Overrides of every entity of a type that has a znode (bulk)."""
        return self.zk.get_entity_configs(entity_type, self.zk.get_all_entities_with_config(entity_type))

    # ------------------------------------------------------------------ admin requests

    def write_preferred_replica_election(self, partitions: Iterable[Sequence[object]]) -> None:
        """Ask the controller for a preferred leader election; refused while one is pending."""
        try:
            self.zk.create_preferred_replica_election(PreferredReplicaElection(tuple(partitions)))  # type: ignore
        except errors.NodeExistsError:
            pending = self.zk.get_preferred_replica_election()
            names = ",".join(str(tp) for tp in pending.partitions) if pending else ""
            raise PreferredLeaderElectionInProgressError(
                f"Preferred replica leader election currently in progress for {names}. Aborting operation") from None

    def write_reassign_partitions(self, assignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """Start a legacy (ZooKeeper) reassignment; refused while one is in progress."""
        try:
            self.zk.create_reassign_partitions(ReassignPartitions(dict(assignment)))  # type: ignore[arg-type]
        except errors.NodeExistsError:
            raise ReassignmentInProgressError(REASSIGNMENT_IN_PROGRESS_MESSAGE) from None
