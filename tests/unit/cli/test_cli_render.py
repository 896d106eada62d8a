"""Golden text of every result type against Kafka's formats (kafka-formats.md section 2), plus JSON and tables."""

import json

import pytest

from pylog.cli import render
from pylog.cli.results import (ConfigSynonymView, ConfigsAltered, ConfigsDescribed, ConfigView, DeletedTopic,
                               ElectionFailure, ElectionResult, EntityConfigs, ListedTopic, PartitionLine,
                               TopicCreated, TopicLine, TopicList, TopicsAltered, TopicsDeleted, TopicsDescribed)

ZK, BS = "zookeeper", "bootstrap-server"


def test_describe_lines_are_kafkas_tab_separated_format():
    r = TopicsDescribed(
        [TopicLine("foo", "pC-Mn-Q4TV2l0TtBmqcSKg", 3, 3, {"min.insync.replicas": "2",
                                                           "segment.bytes": "1073741824"})],
        [PartitionLine("foo", 0, 1, [1, 2, 3], [1, 2, 3]),
         PartitionLine("foo", 1, None, [2, 3, 1], []),
         PartitionLine("foo", 2, 3, [3, 4, 1, 2], [3, 1, 2], adding_replicas=[4], removing_replicas=[2])], BS)
    assert render.text(r) == [
        "Topic: foo\tTopicId: pC-Mn-Q4TV2l0TtBmqcSKg\tPartitionCount: 3\tReplicationFactor: 3\t"
        "Configs: min.insync.replicas=2,segment.bytes=1073741824",
        "\tTopic: foo\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",
        "\tTopic: foo\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: ",
        "\tTopic: foo\tPartition: 2\tLeader: 3\tReplicas: 3,4,1,2\tIsr: 3,1,2\tAdding Replicas: 4\t"
        "Removing Replicas: 2",
    ]


def test_describe_omits_missing_topic_id_and_ends_in_empty_configs():
    r = TopicsDescribed([TopicLine("bar", None, 1, 1, {})], [PartitionLine("bar", 0, 0, [0], [0])], BS)
    assert render.text(r) == ["Topic: bar\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: ",
                              "\tTopic: bar\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0"]


def test_zookeeper_describe_marks_pending_deletion_on_both_line_kinds():
    r = TopicsDescribed([TopicLine("bar", None, 1, 1, {}, marked_for_deletion=True)],
                        [PartitionLine("bar", 0, 0, [0], [0], marked_for_deletion=True)], ZK)
    assert render.text(r) == [
        "Topic: bar\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true",
        "\tTopic: bar\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tMarkedForDeletion: true"]


def test_report_output_has_only_partition_lines_in_order():
    r = TopicsDescribed([], [PartitionLine("a", 1, None, [1], []), PartitionLine("b", 0, None, [2], [])], BS)
    assert render.text(r) == ["\tTopic: a\tPartition: 1\tLeader: none\tReplicas: 1\tIsr: ",
                              "\tTopic: b\tPartition: 0\tLeader: none\tReplicas: 2\tIsr: "]


def test_create_texts(capsys):
    assert render.text(TopicCreated("foo", True, BS)) == ["Created topic foo."]
    assert render.text(TopicCreated("foo", False, BS)) == []
    render.emit(TopicCreated("a.b", True, ZK, [render.COLLISION_WARNING]), "text")
    assert capsys.readouterr().out == (
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
        "collide. To avoid issues it is best to use either, but not both.\nCreated topic a.b.\n")


def test_list_texts_differ_by_mode():
    topics = [ListedTopic("a"), ListedTopic("b", marked_for_deletion=True)]
    assert render.text(TopicList(topics, ZK)) == ["a", "b - marked for deletion"]
    assert render.text(TopicList(topics, BS)) == ["a\nb"]
    assert render.text(TopicList([], BS)) == [""]  # Kafka 3.x println("") on an empty cluster
    assert render.text(TopicList([], ZK)) == []


def test_delete_and_alter_texts():
    deleted = [DeletedTopic("a"), DeletedTopic("b", already_marked=True)]
    assert render.text(TopicsDeleted(deleted, ZK)) == [
        "Topic a is marked for deletion.", "Note: This will have no impact if delete.topic.enable is not set to true.",
        "Topic b is already marked for deletion."]
    assert render.text(TopicsDeleted(deleted, BS)) == []
    assert render.text(TopicsAltered(["a"], 4, False, BS)) == []
    assert render.text(TopicsAltered(["a"], 4, True, ZK)) == [
        "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future "
        "releases.", "         Going forward, please use kafka-configs.sh for this functionality",
        "Updated config for topic a.",
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the "
        "messages will be affected", "Adding partitions succeeded!"]


def test_configs_texts():
    entry = ConfigView("retention.ms", "1000", False, "DYNAMIC_TOPIC_CONFIG", [
        ConfigSynonymView("DYNAMIC_TOPIC_CONFIG", "retention.ms", "1000"),
        ConfigSynonymView("DEFAULT_CONFIG", "log.retention.hours", "168")])
    bs = ConfigsDescribed([EntityConfigs("topics", "foo", [entry]),
                           EntityConfigs("brokers", "", [ConfigView("x", None, True)])], False, BS)
    assert render.text(bs) == [
        "Dynamic configs for topic foo are:",
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, "
        "DEFAULT_CONFIG:log.retention.hours=168}",
        "Default configs for brokers in the cluster are:",
        "  x=null sensitive=true synonyms={}"]
    assert render.text(ConfigsDescribed([EntityConfigs("brokers", "1", [])], True, BS)) == [
        "All configs for broker 1 are:"]
    zk = ConfigsDescribed([EntityConfigs("topics", "foo", [ConfigView("a", "1", False), ConfigView("b", "2", False)]),
                           EntityConfigs("brokers", "<default>", [])], False, ZK)
    assert render.text(zk) == ["Configs for topic 'foo' are a=1,b=2", "Configs for default brokers are "]
    assert render.text(ConfigsAltered("topics", "foo", {}, [], BS)) == ["Completed updating config for topic foo."]
    assert render.text(ConfigsAltered("brokers", "1", {}, [], BS)) == ["Completed updating config for broker 1."]
    assert render.text(ConfigsAltered("brokers", "", {}, [], BS)) == [
        "Completed updating default config for brokers in the cluster."]
    assert render.text(ConfigsAltered("topics", "foo", {}, [], ZK)) == [
        "Completed updating config for entity: topic 'foo'."]
    assert render.text(ConfigsAltered("brokers", "1", {}, [], ZK)) == [
        "Completed updating config for entity: brokers '1'."]


def test_election_texts():
    r = ElectionResult("PREFERRED", ["foo-0", "foo-2"], ["foo-1"], [ElectionFailure(
        "foo-3", "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException", "boom")], BS)
    assert render.text(r) == [
        "Successfully completed leader election (PREFERRED) for partitions foo-0, foo-2",
        "Valid replica already elected for partitions foo-1",
        "Error completing leader election (PREFERRED) for partition: foo-3: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: boom"]
    assert render.text(ElectionResult("UNCLEAN", [], [], [], BS)) == []


def test_json_carries_the_same_facts():
    r = TopicsDescribed([TopicLine("foo", None, 1, 1, {"a": "1"})], [PartitionLine("foo", 0, None, [1], [])], BS)
    doc = json.loads(json.dumps(render.to_json(r)))
    assert doc["topics"] == [{"topic": "foo", "topic_id": None, "partition_count": 1, "replication_factor": 1,
                              "configs": {"a": "1"}, "marked_for_deletion": False}]
    assert doc["partitions"][0]["leader"] is None and doc["partitions"][0]["replicas"] == [1]


def test_emit_formats(capsys):
    r = TopicList([ListedTopic("a")], BS)
    render.emit(r, "json")
    assert json.loads(capsys.readouterr().out) == {"topics": [{"name": "a", "marked_for_deletion": False}],
                                                   "via": BS}
    render.emit(r, "table")
    assert "a" in capsys.readouterr().out
    render.emit(TopicCreated("x.y", True, BS, ["warn"]), "table")
    out = capsys.readouterr()
    assert (out.out, out.err) == ("Created topic x.y.\n", "warn\n")


@pytest.mark.parametrize("result", [
    TopicsDescribed([TopicLine("foo", "id", 1, 1, {})], [PartitionLine("foo", 0, 1, [1], [1])], BS),
    ConfigsDescribed([EntityConfigs("topics", "foo", [ConfigView("a", "1", False)])], False, BS),
    ElectionResult("PREFERRED", ["a-0"], ["a-1"], [ElectionFailure("a-2", "x.Y", "m")], BS),
])
def test_tables_render(result, capsys):
    render.emit(result, "table")
    assert capsys.readouterr().out.strip()


def test_quota_lines_follow_the_admin_clients_hashmaps_and_java_doubles():
    # The orders and texts were checked against a JVM: HashMaps sized as DescribeClientQuotasResponse sizes them,
    # ClientQuotaEntity's Objects.hash of its map, Double.toString.
    from pylog.cli.results import QuotaEntity, QuotasDescribed
    r = QuotasDescribed([
        QuotaEntity(None, "throttled_client", False, True,
                    {"consumer_byte_rate": 1.0, "producer_byte_rate": 10485760.0, "request_percentage": 1.0}),
        QuotaEntity("alice", None, True, False, {"producer_byte_rate": 1024.0}),
        QuotaEntity(None, None, False, True, {"consumer_byte_rate": 2048.0}),
        QuotaEntity("bob", "app", True, True, {"producer_byte_rate": 1.0, "consumer_byte_rate": 2.0,
                                                "request_percentage": 3.0, "controller_mutation_rate": 0.0005})], None)
    assert render.text(r) == [
        "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0",
        "Quota configs for the default client-id are consumer_byte_rate=2048.0",
        "Quota configs for client-id 'throttled_client' are consumer_byte_rate=1.0, producer_byte_rate=1.048576E7, "
        "request_percentage=1.0",
        "Quota configs for user-principal 'bob', client-id 'app' are producer_byte_rate=1.0, consumer_byte_rate=2.0, "
        "controller_mutation_rate=5.0E-4, request_percentage=3.0",
    ]
