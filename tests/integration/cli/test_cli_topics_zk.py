"""pylog-topics --zookeeper against a real ZooKeeper: the znodes it writes (like Kafka's AdminZkClient) and
the texts it prints (Kafka 2.8's ZooKeeper mode). Brokers are ephemeral registrations and partition
states are written the way the controller writes them, so no broker is needed.
"""

import json

import pytest

from pylog.cli.topics import topics_command
from pylog.zk import paths
from pylog.zk.codecs import ConfigChangeNotification, TopicAssignment

from cli_helpers import as_json, cli, register_brokers, script, write_states

pytestmark = pytest.mark.integration

PREFIX = "Error while executing topic command : "


def topics(zk_connect, *args):
    return cli(topics_command, "--zookeeper", zk_connect, *args)


def assignment(zk, topic) -> TopicAssignment:
    return TopicAssignment.decode(zk.get(paths.topic(topic))[0])


def test_create_writes_config_then_assignment_like_admin_zk_client(zk, zk_connect):
    register_brokers(zk, [0, 1, 2])
    r = topics(zk_connect, "--create", "--topic", "foo", "--partitions", "6", "--replication-factor", "2")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "Created topic foo.\n", "")
    a = assignment(zk, "foo")
    assert sorted(a.partitions) == list(range(6))
    assert all(len(set(reps)) == 2 and set(reps) <= {0, 1, 2} for reps in a.partitions.values())
    # Kafka's round robin: every broker leads as many partitions as the others.
    assert sorted(reps[0] for reps in a.partitions.values()) == [0, 0, 1, 1, 2, 2]
    assert a.topic_id is not None and len(a.topic_id) == 22
    # The config znode is written even when empty, and before the assignment (its czxid is older).
    config_data, config_stat = zk.get(paths.config_entity("topics", "foo"))
    assert json.loads(config_data) == {"version": 1, "config": {}}
    assert config_stat.czxid < zk.exists(paths.topic("foo")).czxid


def test_create_with_configs_and_manual_assignment(zk, zk_connect):
    register_brokers(zk, [1, 2])
    r = topics(zk_connect, "--create", "--topic", "bar", "--replica-assignment", "1:2,2:1,1:2",
               "--config", "retention.ms=1000", "--config", "min.insync.replicas=2")
    assert r.exit_code == 0, r.output
    assert dict(assignment(zk, "bar").partitions) == {0: (1, 2), 1: (2, 1), 2: (1, 2)}
    assert zk.get_entity_config("topics", "bar") == {"retention.ms": "1000", "min.insync.replicas": "2"}


def test_rack_aware_placement_and_its_refusals(zk, zk_connect):
    register_brokers(zk, [0, 1, 2, 3], racks={0: "a", 1: "a", 2: "b", 3: "b"})
    r = topics(zk_connect, "--create", "--topic", "r", "--partitions", "8", "--replication-factor", "2")
    assert r.exit_code == 0, r.output
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    assert all({racks[b] for b in reps} == {"a", "b"} for reps in assignment(zk, "r").partitions.values())
    register_brokers(zk, [4])  # no rack
    r = topics(zk_connect, "--create", "--topic", "s", "--partitions", "1", "--replication-factor", "2")
    assert r.exit_code == 1
    assert r.stderr == (PREFIX + "Not all brokers have rack information. Add --disable-rack-aware in command line "
                        "to make replica assignment without rack information.\n")
    r = topics(zk_connect, "--create", "--topic", "s", "--partitions", "1", "--replication-factor", "2",
               "--disable-rack-aware")
    assert r.exit_code == 0, r.output


def test_create_refusals_use_kafkas_texts(zk, zk_connect):
    register_brokers(zk, [0])
    assert topics(zk_connect, "--create", "--topic", "a_b", "--partitions", "1", "--replication-factor", "1"
                  ).exit_code == 0
    cases = [
        (["--topic", "a_b"], "Topic 'a_b' already exists."),
        (["--topic", "x", "--replication-factor", "3"], "Replication factor: 3 larger than available brokers: 1."),
        (["--topic", "a.b"], "Topic 'a.b' collides with existing topics: a_b"),
        (["--topic", "bad/name"], "Topic name \"bad/name\" is illegal, it contains a character other than ASCII "
                                  "alphanumerics, '.', '_' and '-'"),
    ]
    for args, message in cases:
        full = ["--create", "--partitions", "1"] + args
        if "--replication-factor" not in args:
            full += ["--replication-factor", "1"]
        r = topics(zk_connect, *full)
        assert (r.exit_code, r.stderr) == (1, PREFIX + message + "\n"), args
    r = topics(zk_connect, "--create", "--topic", "a_b", "--partitions", "1", "--replication-factor", "1",
               "--if-not-exists")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "WARNING: Due to limitations in metric names, topics with a "
                                                    "period ('.') or underscore ('_') could collide. To avoid issues "
                                                    "it is best to use either, but not both.\n", "")


def test_describe_golden_with_report_filters(zk, zk_connect):
    register_brokers(zk, [1, 2, 3])
    assert topics(zk_connect, "--create", "--topic", "foo", "--replica-assignment", "1:2:3,2:3:1,3:1:2,4:1:2",
                  "--config", "min.insync.replicas=2", "--config", "retention.ms=1000").exit_code == 0
    write_states(zk, "foo", {0: (1, [1, 2, 3]), 1: (2, [2, 3]), 3: (4, [4])})
    tid = assignment(zk, "foo").topic_id
    r = topics(zk_connect, "--describe", "--topic", "foo")
    assert r.exit_code == 0, r.output
    assert r.stdout == (
        f"Topic: foo\tTopicId: {tid}\tPartitionCount: 4\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2,retention.ms=1000\n"
        "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
        "\tTopic: foo\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3\n"
        "\tTopic: foo\tPartition: 2\tLeader: none\tReplicas: 3,1,2\tIsr: \n"
        "\tTopic: foo\tPartition: 3\tLeader: 4\tReplicas: 4,1,2\tIsr: 4\n")

    def shown(flag):
        res = topics(zk_connect, "--describe", flag)
        assert res.exit_code == 0, res.output
        return [line.split("\t")[2] for line in res.stdout.splitlines()]
    assert shown("--under-replicated-partitions") == ["Partition: 1", "Partition: 2", "Partition: 3"]
    assert shown("--unavailable-partitions") == ["Partition: 2", "Partition: 3"]  # broker 4 is not registered
    assert shown("--under-min-isr-partitions") == ["Partition: 2", "Partition: 3"]
    assert shown("--at-min-isr-partitions") == ["Partition: 1"]
    assert topics(zk_connect, "--create", "--topic", "plain", "--partitions", "1", "--replication-factor", "1"
                  ).exit_code == 0
    r = topics(zk_connect, "--describe", "--topics-with-overrides")
    assert [line.split("\t")[0] for line in r.stdout.splitlines()] == ["Topic: foo"]
    doc = as_json(topics(zk_connect, "--describe", "--topic", "foo", "--output", "json"))
    assert doc["topics"][0]["configs"] == {"min.insync.replicas": "2", "retention.ms": "1000"}
    assert [(p["partition"], p["leader"], p["isr"]) for p in doc["partitions"]] == [
        (0, 1, [1, 2, 3]), (1, 2, [2, 3]), (2, None, []), (3, 4, [4])]


def test_describe_shows_reassignment_and_pending_deletion(zk, zk_connect):
    register_brokers(zk, [1, 2, 3, 4])
    zk.set_or_create_entity_config("topics", "m", {})
    zk.create_topic_assignment("m", TopicAssignment({0: (3, 4, 1, 2)}, None, {0: (3, 4)}, {0: (1, 2)}))
    write_states(zk, "m", {0: (1, [1, 2, 3])})
    zk.create_delete_topic_path("m")
    r = topics(zk_connect, "--describe", "--topic", "m")
    assert r.stdout == (
        "Topic: m\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \tMarkedForDeletion: true\n"
        "\tTopic: m\tPartition: 0\tLeader: 1\tReplicas: 3,4,1,2\tIsr: 1,2,3\tAdding Replicas: 3,4\t"
        "Removing Replicas: 1,2\tMarkedForDeletion: true\n")


def test_missing_topics(zk, zk_connect):
    r = topics(zk_connect, "--describe", "--topic", "nope")
    assert (r.exit_code, r.stderr) == (1, PREFIX + "Topic 'nope' does not exist as expected\n")
    for action in (["--describe"], ["--delete"], ["--alter", "--partitions", "2"]):
        r = topics(zk_connect, *action, "--topic", "nope", "--if-exists")
        assert (r.exit_code, r.stdout, r.stderr) == (0, "", ""), action


def test_alter_adds_partitions_deterministically_and_refuses_a_decrease(zk, zk_connect):
    register_brokers(zk, [0, 1, 2])
    assert topics(zk_connect, "--create", "--topic", "g", "--replica-assignment", "1:2,2:0").exit_code == 0
    r = topics(zk_connect, "--alter", "--topic", "g", "--partitions", "5")
    assert (r.exit_code, r.stdout) == (0, "WARNING: If partitions are increased for a topic that has a key, the "
                                          "partition logic or ordering of the messages will be affected\n"
                                          "Adding partitions succeeded!\n")
    # AdminZkClient.createNewPartitionsAssignment: start index = first broker id >= partition 0's leader (1).
    assert dict(assignment(zk, "g").partitions) == {0: (1, 2), 1: (2, 0), 2: (0, 2), 3: (1, 2), 4: (2, 0)}
    r = topics(zk_connect, "--alter", "--topic", "g", "--partitions", "2")
    assert (r.exit_code, r.stderr) == (1, PREFIX + "The number of partitions for a topic can only be increased. "
                                              "Topic g currently has 5 partitions, 2 would not be an increase.\n")
    r = topics(zk_connect, "--alter", "--topic", "g", "--partitions", "6", "--replica-assignment",
               "1:2,2:0,0:1,1:0,2:1,0:2")
    assert r.exit_code == 0, r.output
    assert assignment(zk, "g").partitions[5] == (0, 2)


def test_alter_configs_through_zookeeper_notifies_brokers(zk, zk_connect):
    register_brokers(zk, [0])
    assert topics(zk_connect, "--create", "--topic", "c", "--partitions", "1", "--replication-factor", "1",
                  "--config", "retention.ms=5").exit_code == 0
    r = topics(zk_connect, "--alter", "--topic", "c", "--config", "segment.ms=100", "--delete-config",
               "retention.ms")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[2] == "Updated config for topic c."
    assert zk.get_entity_config("topics", "c") == {"segment.ms": "100"}
    changes = zk.get_children(paths.config_changes())
    notes = zk.get_config_change_notifications(changes)
    assert ConfigChangeNotification("topics/c") in notes.values()


def test_delete_and_list(zk, zk_connect):
    register_brokers(zk, [0])
    for t in ("d1", "d2", "__consumer_offsets"):
        assert topics(zk_connect, "--create", "--topic", t, "--partitions", "1", "--replication-factor", "1"
                      ).exit_code == 0
    r = topics(zk_connect, "--delete", "--topic", "d1")
    assert (r.exit_code, r.stdout) == (0, "Topic d1 is marked for deletion.\n"
                                          "Note: This will have no impact if delete.topic.enable is not set to true.\n")
    assert zk.exists(paths.delete_topic("d1")) is not None
    assert topics(zk_connect, "--delete", "--topic", "d1").stdout == "Topic d1 is already marked for deletion.\n"
    r = topics(zk_connect, "--list")
    assert r.stdout == "__consumer_offsets\nd1 - marked for deletion\nd2\n"
    assert topics(zk_connect, "--list", "--exclude-internal").stdout == "d1 - marked for deletion\nd2\n"
    r = topics(zk_connect, "--delete", "--topic", "__consumer_offsets")
    assert (r.exit_code, r.stderr) == (1, PREFIX + "Topic __consumer_offsets is a kafka internal topic and is not "
                                              "allowed to be marked for deletion.\n")
    assert as_json(topics(zk_connect, "--list", "--output", "json"))["topics"][1] == {
        "name": "d1", "marked_for_deletion": True}


def test_wrapper_script_runs_from_anywhere(zk, zk_connect):
    register_brokers(zk, [0])
    p = script("pylog-topics.sh", "--zookeeper", zk_connect, "--create", "--topic", "w", "--partitions", "2",
               "--replication-factor", "1")
    assert (p.returncode, p.stdout, p.stderr) == (0, "Created topic w.\n", "")
    p = script("pylog-topics.sh", "--zookeeper", zk_connect, "--list")
    assert (p.returncode, p.stdout) == (0, "w\n")
    p = script("pylog-topics.sh", "--zookeeper", zk_connect, "--describe", "--topic", "nope")
    assert (p.returncode, p.stdout, p.stderr) == (1, "", PREFIX + "Topic 'nope' does not exist as expected\n")
    p = script("pylog-topics.sh", "--zookeeper", zk_connect, "--list", "--delete")
    assert p.returncode == 2 and "exactly one action" in p.stderr
