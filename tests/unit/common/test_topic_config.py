"""Topic configs: validation messages, and resolution override -> broker synonym -> default."""

from __future__ import annotations

import pytest

from pylog.common.config import (
    TOPIC_SYNONYMS, BrokerConfig, ConfigError, Synonym, effective_topic_config, validate_topic_config,
)

ZK = {"zookeeper.connect": "127.0.0.1:2181"}


def test_unknown_topic_config_name() -> None:
    with pytest.raises(ConfigError) as info:
        validate_topic_config({"retention.ms": "1", "foo": "bar"})
    assert str(info.value) == "Unknown topic config name: foo"
    assert info.value.key == "foo"


def test_broker_key_is_not_a_topic_key() -> None:
    with pytest.raises(ConfigError, match="^Unknown topic config name: log.retention.ms$"):
        validate_topic_config({"log.retention.ms": "1"})


@pytest.mark.parametrize("props, message", [
    ({"retention.ms": "abc"}, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ({"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
    ({"min.insync.replicas": "0"}, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ({"cleanup.policy": "compact,nope"},
     "Invalid value nope for configuration cleanup.policy: String must be one of: compact, delete"),
    ({"min.cleanable.dirty.ratio": "2"},
     "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ({"unclean.leader.election.enable": "1"},
     "Invalid value 1 for configuration unclean.leader.election.enable: Expected value to be either true or false"),
    ({"leader.replication.throttled.replicas": "0:1,x"},
     "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: "
     "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
     "format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
     "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
])
def test_invalid_topic_values(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_topic_config(props)
    assert str(info.value) == message


def test_validate_returns_typed_values() -> None:
    typed = validate_topic_config({"retention.ms": " 1000 ", "cleanup.policy": "compact, delete",
                                   "unclean.leader.election.enable": "TRUE", "min.cleanable.dirty.ratio": "0.25",
                                   "follower.replication.throttled.replicas": "*",
                                   "leader.replication.throttled.replicas": "0:1, 1:2"})
    assert typed == {"retention.ms": 1000, "cleanup.policy": ["compact", "delete"],
                     "unclean.leader.election.enable": True, "min.cleanable.dirty.ratio": 0.25,
                     "follower.replication.throttled.replicas": ["*"],
                     "leader.replication.throttled.replicas": ["0:1", "1:2"]}


def test_synonym_table_matches_kafka() -> None:
    assert TOPIC_SYNONYMS["retention.ms"] == (Synonym("log.retention.ms"), Synonym("log.retention.minutes", 60_000),
                                              Synonym("log.retention.hours", 3_600_000))
    assert TOPIC_SYNONYMS["segment.ms"] == (Synonym("log.roll.ms"), Synonym("log.roll.hours", 3_600_000))
    assert TOPIC_SYNONYMS["flush.ms"] == (Synonym("log.flush.interval.ms"), Synonym("log.flush.scheduler.interval.ms"))
    assert TOPIC_SYNONYMS["max.message.bytes"] == (Synonym("message.max.bytes"),)
    assert TOPIC_SYNONYMS["file.delete.delay.ms"] == (Synonym("log.segment.delete.delay.ms"),)
    assert TOPIC_SYNONYMS["segment.index.bytes"] == (Synonym("log.index.size.max.bytes"),)
    assert TOPIC_SYNONYMS["min.cleanable.dirty.ratio"] == (Synonym("log.cleaner.min.cleanable.ratio"),)
    assert TOPIC_SYNONYMS["leader.replication.throttled.replicas"] == ()


def test_effective_config_from_override_broker_synonym_or_default() -> None:
    broker = BrokerConfig.from_props({**ZK, "log.retention.minutes": "10", "log.roll.hours": "1",
                                      "log.flush.scheduler.interval.ms": "2000", "message.max.bytes": "5000",
                                      "log.cleanup.policy": "compact,delete", "min.insync.replicas": "2"})
    eff = effective_topic_config({"min.insync.replicas": "3", "segment.bytes": "1048576"}, broker)
    assert eff["retention.ms"] == "600000"
    assert eff["segment.ms"] == "3600000"
    assert eff["flush.ms"] == "2000"
    assert eff["max.message.bytes"] == "5000"
    assert eff["cleanup.policy"] == "compact,delete"
    assert eff["min.insync.replicas"] == "3"          # the topic override wins
    assert eff["segment.bytes"] == "1048576"
    assert eff["index.interval.bytes"] == "4096"      # nobody set it: the default


def test_effective_config_uses_dynamic_broker_layers() -> None:
    broker = BrokerConfig.from_props({**ZK, "log.retention.hours": "1"}).with_dynamic(
        dynamic_default={"log.retention.ms": "1234"})
    assert effective_topic_config({}, broker)["retention.ms"] == "1234"


def test_effective_config_ignores_stale_unknown_keys_but_not_bad_values() -> None:
    assert "foo" not in effective_topic_config({"foo": "1"}, None)
    with pytest.raises(ConfigError):
        effective_topic_config({"retention.ms": "x"}, None)


def test_message_format_version_is_always_the_3_0_default() -> None:
    broker = BrokerConfig.from_props({**ZK, "log.message.format.version": "2.8"})
    assert effective_topic_config({}, broker)["message.format.version"] == "3.0-IV1"


def test_effective_config_with_flattened_dynamic_values() -> None:
    broker = BrokerConfig.from_props({**ZK, "log.retention.hours": "1", "min.insync.replicas": "2"})
    eff = effective_topic_config({}, broker, {"log.retention.ms": "1234", "broker.id": "9"})
    assert (eff["retention.ms"], eff["min.insync.replicas"]) == ("1234", "2")
    assert effective_topic_config({}, None, {"min.insync.replicas": "3"})["min.insync.replicas"] == "3"
