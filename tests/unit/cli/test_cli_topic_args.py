"""pylog-topics' pure parts: argument parsers with Kafka's messages, topic selection, describe's report rules."""

import pytest

from pylog.cli.common import OperationError
from pylog.cli.results import PartitionLine
from pylog.cli.topic_args import (ReportFlags, TopicRequest, ensure_topic_exists, include_list,
                                  parse_configs_to_delete, parse_replica_assignment, parse_topic_configs,
                                  select_topics)
from pylog.cli.topic_describe import TopicState, describe, replication_factor
from pylog.common.configdef import ConfigError


def test_replica_assignment_parses_partitions_and_replicas():
    assert parse_replica_assignment("1:2, 3 :4,5:6") == {0: [1, 2], 1: [3, 4], 2: [5, 6]}
    assert parse_replica_assignment("7") == {0: [7]}


@pytest.mark.parametrize("text, message", [
    ("1:1", "Partition replica lists may not contain duplicate entries: 1"),
    ("1:2,3", "Partition 1 has different replication factor: 3"),
    ("1:x", 'For input string: "x"'),
    ("1:", 'For input string: ""'),
])
def test_replica_assignment_errors(text, message):
    with pytest.raises(OperationError, match="^" + message.replace("(", r"\(") + "$"):
        parse_replica_assignment(text)


def test_topic_configs_are_split_trimmed_and_validated():
    assert parse_topic_configs(["retention.ms = 1000", "cleanup.policy=compact"]) == {
        "retention.ms": "1000", "cleanup.policy": "compact"}
    assert parse_topic_configs([]) == {}


@pytest.mark.parametrize("entry", ["retention.ms", "retention.ms=", "a=b=c"])
def test_topic_config_format_errors(entry):
    with pytest.raises(OperationError, match='all configs to be added must be in the format "key=val"'):
        parse_topic_configs([entry])


def test_unknown_or_invalid_topic_configs_are_refused_by_name():
    with pytest.raises(ConfigError, match="^Unknown topic config name: nope$"):
        parse_topic_configs(["nope=1"])
    with pytest.raises(ConfigError, match="retention.ms"):
        parse_topic_configs(["retention.ms=soon"])
    with pytest.raises(ConfigError, match="^Unknown topic config name: nope$"):
        parse_configs_to_delete(["retention.ms", "nope"])
    assert parse_configs_to_delete([" retention.ms "]) == ["retention.ms"]


def test_topic_selection_is_a_full_match_include_list():
    names = ["foo", "foo1", "bar", "__consumer_offsets"]
    assert select_topics(names, "foo", False) == ["foo"]
    assert select_topics(names, "foo.*", False) == ["foo", "foo1"]
    assert select_topics(names, "foo,bar", False) == ["bar", "foo"]
    assert select_topics(names, "'foo'", False) == ["foo"]
    assert select_topics(names, None, False) == ["__consumer_offsets", "bar", "foo", "foo1"]
    assert select_topics(names, None, True) == ["bar", "foo", "foo1"]
    assert select_topics(names, ".*", True, internal=["bar"]) == ["foo", "foo1"]
    with pytest.raises(OperationError, match=r"^\(foo is an invalid regex\.$"):
        include_list("(foo")


def test_ensure_topic_exists():
    ensure_topic_exists([], None, True)
    ensure_topic_exists([], "foo", False)
    with pytest.raises(OperationError, match="^Topic 'foo' does not exist as expected$"):
        ensure_topic_exists([], "foo", True)


@pytest.mark.parametrize("rf, partitions, message", [
    (0, None, "The replication factor must be between 1 and 32767 inclusive"),
    (32768, None, "The replication factor must be between 1 and 32767 inclusive"),
    (None, 0, "The partitions must be greater than 0"),
])
def test_create_range_checks(rf, partitions, message):
    with pytest.raises(OperationError, match=f"^{message}$"):
        TopicRequest(topic="t", replication_factor=rf, partitions=partitions).check_create()
    TopicRequest(topic="t", replication_factor=32767, partitions=1).check_create()


def P(partition, leader, replicas, isr, adding=(), removing=()):
    return PartitionLine("t", partition, leader, list(replicas), list(isr), list(adding), list(removing))


def test_replication_factor_ignores_replicas_being_added():
    assert replication_factor(P(0, 1, [3, 4, 1, 2], [1, 2], adding=[3, 4], removing=[1, 2])) == 2
    assert replication_factor(P(0, 1, [1, 2, 3], [1])) == 3
    # A finished reassignment (changing replicas no longer in the set) is ignored, as TopicCommand does.
    assert replication_factor(P(0, 1, [3, 4], [3, 4], adding=[5], removing=[6])) == 2


STATE = TopicState("t", None, [
    P(0, 1, [1, 2, 3], [1, 2, 3]),    # healthy
    P(1, 2, [2, 3, 1], [2, 3]),       # under-replicated, at min ISR 2
    P(2, None, [3, 1, 2], []),        # no leader
    P(3, 9, [9, 1, 2], [9]),          # leader on a dead broker, under min ISR
], {"min.insync.replicas": "2"}, min_isr=2)
LIVE = {1, 2, 3}


@pytest.mark.parametrize("flags, partitions", [
    (ReportFlags(under_replicated=True), [1, 2, 3]),
    (ReportFlags(unavailable=True), [2, 3]),
    (ReportFlags(under_min_isr=True), [2, 3]),
    (ReportFlags(at_min_isr=True), [1]),
])
def test_report_flags_select_partitions_and_hide_topic_lines(flags, partitions):
    r = describe([STATE], flags, LIVE, "bootstrap-server")
    assert r.topics == []
    assert [p.partition for p in r.partitions] == partitions


def test_plain_describe_shows_everything_and_overrides_flag_only_topic_lines():
    r = describe([STATE], ReportFlags(), LIVE, "bootstrap-server")
    assert [(t.topic, t.partition_count, t.replication_factor) for t in r.topics] == [("t", 4, 3)]
    assert len(r.partitions) == 4
    plain = TopicState("u", None, [P(0, 1, [1], [1])], {}, None)
    r = describe([STATE, plain], ReportFlags(topics_with_overrides=True), LIVE, "bootstrap-server")
    assert [t.topic for t in r.topics] == ["t"] and r.partitions == []


def test_without_min_isr_only_leaderless_partitions_are_under_min_isr():
    state = TopicState("t", None, [P(0, 1, [1, 2], [1]), P(1, None, [1, 2], [])], {}, None)
    assert [p.partition for p in describe([state], ReportFlags(under_min_isr=True), LIVE, "zookeeper").partitions] \
        == [1]
    assert describe([state], ReportFlags(at_min_isr=True), LIVE, "zookeeper").partitions == []
