"""AdminZkClient against real ZooKeeper: the znodes Kafka's tools write, and Kafka's error messages."""

from __future__ import annotations

import json
import re

import pytest

from pylog.zk import paths
from pylog.zk.admin import (REASSIGNMENT_IN_PROGRESS_MESSAGE, AdminZkClient, InvalidPartitionsError,
                            InvalidReplicaAssignmentError, InvalidTopicError, PreferredLeaderElectionInProgressError,
                            ReassignmentInProgressError, TopicAlreadyMarkedForDeletionError, TopicExistsError,
                            UnknownTopicOrPartitionError, validate_topic_name)
from pylog.zk.client import ZkClient
from pylog.zk.codecs import BrokerRegistration, EndPoint, PartitionState, TopicAssignment, TopicPartition
from pylog.zk.uuids import is_valid_uuid

pytestmark = pytest.mark.integration

ASSIGNMENT = {0: [1, 2], 1: [2, 3], 2: [3, 1]}


@pytest.fixture
def admin(zk: ZkClient) -> AdminZkClient:
    """An AdminZkClient on a chroot with Kafka's top-level paths."""
    zk.create_top_level_paths()
    return AdminZkClient(zk)


def test_create_topic_writes_config_first_then_v3_assignment(admin: AdminZkClient, zk: ZkClient) -> None:
    topic_id = admin.create_topic("foo", ASSIGNMENT, {})
    config_data, config_stat = zk.get(paths.config_entity("topics", "foo"))
    topic_data, topic_stat = zk.get(paths.topic("foo"))
    assert config_data == b'{"version":1,"config":{}}'  # written even when empty
    assert config_stat.czxid < topic_stat.czxid  # and written first
    assert is_valid_uuid(topic_id)
    assert json.loads(topic_data) == {"version": 3, "topic_id": topic_id, "adding_replicas": {},
                                      "removing_replicas": {}, "partitions": {"0": [1, 2], "1": [2, 3],
                                                                              "2": [3, 1]}}
    assert admin.get_topic_assignments(["foo", "nope"]) == {"foo": TopicAssignment(ASSIGNMENT, topic_id)}
    assert admin.create_topic("bar", {0: [1]}, {"retention.ms": "1000"}, topic_id="pC-Mn-Q4TV2l0TtBmqcSKg") == \
        "pC-Mn-Q4TV2l0TtBmqcSKg"
    assert admin.fetch_entity_config("topics", "bar") == {"retention.ms": "1000"}
    assert admin.get_all_topics() == ["bar", "foo"]


def test_create_topic_errors(admin: AdminZkClient) -> None:
    admin.create_topic("a_b", {0: [1]})
    with pytest.raises(TopicExistsError, match=r"^Topic 'a_b' already exists\.$"):
        admin.create_topic("a_b", {0: [1]})
    with pytest.raises(InvalidTopicError, match=r"^Topic 'a\.b' collides with existing topics: a_b$") as err:
        admin.create_topic("a.b", {0: [1]})
    assert err.value.error_code == 17
    with pytest.raises(InvalidReplicaAssignmentError, match="^All partitions should have the same number of replicas$"):
        admin.create_topic("x", {0: [1], 1: [1, 2]})
    with pytest.raises(InvalidReplicaAssignmentError, match=r"^Duplicate replica assignment found: Map\(0 -> List\(1, 1\)\)$"):
        admin.create_topic("x", {0: [1, 1]})
    with pytest.raises(InvalidReplicaAssignmentError, match="^partitions should be a consecutive 0-based integer sequence$"):
        admin.create_topic("x", {0: [1], 2: [1]})
    assert admin.get_all_topics() == ["a_b"]  # nothing half-written


@pytest.mark.parametrize("name, message", [
    ("", "Topic name is illegal, it can't be empty"),
    (".", 'Topic name cannot be "." or ".."'),
    ("a" * 250, f"Topic name is illegal, it can't be longer than 249 characters, topic name: {'a' * 250}"),
    ("bad/name", "Topic name \"bad/name\" is illegal, it contains a character other than ASCII alphanumerics, "
                 "'.', '_' and '-'"),
])
def test_topic_name_rules(name: str, message: str) -> None:
    with pytest.raises(InvalidTopicError) as err:
        validate_topic_name(name)
    assert str(err.value) == message
    validate_topic_name("a" * 249)
    validate_topic_name("Az09._-")


def test_add_partitions(admin: AdminZkClient, zk: ZkClient) -> None:
    topic_id = admin.create_topic("foo", ASSIGNMENT)
    full = admin.add_partitions("foo", 5, {0: [9, 9], 3: [1, 3], 4: [2, 1]}, available_brokers=[1, 2, 3])
    assert full == {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3), 4: (2, 1)}  # partition 0's entry was ignored
    stored, _ = zk.get_topic_assignment("foo")  # type: ignore[misc]
    assert stored.topic_id == topic_id and dict(stored.partitions) == full

    cases = [
        (4, {}, InvalidPartitionsError, "Topic currently has 5 partitions, which is higher than the requested 4."),
        (5, {}, InvalidPartitionsError, "Topic already has 5 partitions."),
        (7, {5: [1, 2]}, InvalidReplicaAssignmentError,
         "Increasing the number of partitions by 2 but 1 assignments provided."),
        (6, {5: [1, 7]}, InvalidReplicaAssignmentError, "Unknown broker(s) in replica assignment: 7."),
        (6, {5: [1, 1]}, InvalidReplicaAssignmentError,
         "Duplicate brokers not allowed in replica assignment: 1, 1 for partition id 5."),
        (6, {5: [1]}, InvalidReplicaAssignmentError,
         "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [5] have "
         "replication factors [1], respectively."),
    ]
    for count, new, kind, message in cases:
        with pytest.raises(kind) as err:
            admin.add_partitions("foo", count, new, available_brokers=[1, 2, 3])
        assert str(err.value) == message
    with pytest.raises(UnknownTopicOrPartitionError, match="^The topic 'nope' does not exist.$"):
        admin.add_partitions("nope", 2, {1: [1]})
    assert len(zk.get_topic_assignment("foo")[0].partitions) == 5  # type: ignore[index]


def test_delete_topic(admin: AdminZkClient, zk: ZkClient) -> None:
    admin.create_topic("foo", {0: [1]})
    admin.delete_topic("foo")
    data, _ = zk.get(paths.delete_topic("foo"))
    assert data == b"" and admin.get_topics_marked_for_deletion() == ["foo"]
    with pytest.raises(TopicAlreadyMarkedForDeletionError, match="^topic foo is already marked for deletion$"):
        admin.delete_topic("foo")
    with pytest.raises(TopicExistsError, match="^Topic 'foo' is marked for deletion.$"):
        admin.create_topic("foo", {0: [1]})
    with pytest.raises(UnknownTopicOrPartitionError, match="^Topic `nope` to delete does not exist$"):
        admin.delete_topic("nope")
    # Names no topic can have (and no znode path can hold) are unknown topics, not crashes.
    for name in ("", "a/b", ".."):
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.delete_topic(name)
        with pytest.raises(UnknownTopicOrPartitionError, match="does not exist"):
            admin.add_partitions(name, 2, {1: [1]})
    assert admin.get_topic_assignments(["", "foo"]).keys() == {"foo"}


def test_change_entity_config_then_notification(admin: AdminZkClient, zk: ZkClient) -> None:
    admin.create_topic("foo", {0: [1]})
    created = admin.change_entity_config("topics", "foo", {"retention.ms": "1000", "min.insync.replicas": "2"})
    name = created.rsplit("/", 1)[1]
    assert re.fullmatch(r"config_change_\d{10}", name) and created.startswith("/config/changes/")
    config_data, config_stat = zk.get(paths.config_entity("topics", "foo"))
    note_data, note_stat = zk.get(created)
    assert config_data == b'{"version":1,"config":{"retention.ms":"1000","min.insync.replicas":"2"}}'
    assert note_data == b'{"version":2,"entity_path":"topics/foo"}'
    assert config_stat.mzxid < note_stat.czxid  # config first, then the notification

    admin.change_entity_config("brokers", "<default>", {"log.cleaner.threads": "2"})
    admin.change_entity_config("brokers", "1", {})
    names = sorted(zk.get_children(paths.config_changes()))
    notes = zk.get_config_change_notifications(names)
    assert [n.entity_path for n in notes.values()] == ["topics/foo", "brokers/<default>", "brokers/1"]
    assert admin.fetch_all_entity_configs("brokers") == {"1": {}, "<default>": {"log.cleaner.threads": "2"}}

    with pytest.raises(UnknownTopicOrPartitionError, match="^Topic 'nope' does not exist.$"):
        admin.change_entity_config("topics", "nope", {})
    with pytest.raises(ValueError, match="^widgets is not a known entityType. Should be one of "
                                         r"List\(topics, clients, users, brokers, ips\)$"):
        admin.change_entity_config("widgets", "x", {})
    with pytest.raises(ValueError, match="^Error parsing broker x. The broker's Entity Name must be a single "
                                         "integer value$"):
        admin.change_entity_config("brokers", "x", {})


def test_topic_config_validator_is_applied(zk: ZkClient) -> None:
    def refuse(config: dict) -> None:
        if "bad" in config:
            raise ValueError("Invalid value x for configuration bad: nope")

    zk.create_top_level_paths()
    admin = AdminZkClient(zk, topic_config_validator=refuse)
    with pytest.raises(ValueError, match="configuration bad"):
        admin.create_topic("foo", {0: [1]}, {"bad": "x"})
    assert admin.get_all_topics() == [] and zk.exists(paths.config_entity("topics", "foo")) is None


def test_preferred_election_and_reassignment_requests(admin: AdminZkClient, zk: ZkClient) -> None:
    admin.write_preferred_replica_election([("foo", 0), ("bar", 1)])
    assert zk.get(paths.preferred_replica_election())[0] == \
        b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"bar","partition":1}]}'
    with pytest.raises(PreferredLeaderElectionInProgressError) as err:
        admin.write_preferred_replica_election([("foo", 1)])
    assert str(err.value) == "Preferred replica leader election currently in progress for foo-0,bar-1. Aborting operation"

    admin.write_reassign_partitions({TopicPartition("foo", 0): [3, 4]})
    assert zk.get(paths.reassign_partitions())[0] == \
        b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[3,4]}]}'
    with pytest.raises(ReassignmentInProgressError) as err2:
        admin.write_reassign_partitions({TopicPartition("foo", 1): [3, 4]})
    assert str(err2.value) == REASSIGNMENT_IN_PROGRESS_MESSAGE and err2.value.error_code == 60


def test_bulk_reads_for_tools(admin: AdminZkClient, zk: ZkClient) -> None:
    admin.create_topic("foo", ASSIGNMENT)
    zk.register_broker(BrokerRegistration(1, [EndPoint("PLAINTEXT", "h", 9092)], rack="r"))
    epoch = zk.try_elect_controller(1)
    zk.create_partition_states({TopicPartition("foo", 0): PartitionState(1, 0, [1, 2], epoch.epoch)},  # type: ignore
                               epoch.zk_version)  # type: ignore[union-attr]
    states = admin.get_partition_states(["foo", "nope"])
    assert list(states) == [("foo", 0), ("foo", 1), ("foo", 2)]
    assert states[TopicPartition("foo", 0)].isr == (1, 2) and states[TopicPartition("foo", 1)] is None  # type: ignore
    assert admin.get_broker_registrations()[1].rack == "r"
