"""DescribeConfigs entries: sources, synonyms, defaults, as Kafka's ConfigHelper reports them."""

from __future__ import annotations

from pylog.common.config import (
    BrokerConfig, ConfigEntry, ConfigSource, describe_broker_config, describe_topic_config,
)

ZK = {"zookeeper.connect": "127.0.0.1:2181"}


def by_name(entries: list[ConfigEntry]) -> dict[str, ConfigEntry]:
    return {e.name: e for e in entries}


def kafka_configs_line(e: ConfigEntry) -> str:
    """kafka-configs --describe's line format, to compare with output captured from real Kafka."""
    synonyms = ", ".join(str(s) for s in e.synonyms)
    return f"{e.name}={'null' if e.value is None else e.value} sensitive={str(e.is_sensitive).lower()} " \
           f"synonyms={{{synonyms}}}"


def test_config_source_wire_ids() -> None:
    assert [(s.name, int(s)) for s in ConfigSource] == [
        ("UNKNOWN", 0), ("TOPIC_CONFIG", 1), ("DYNAMIC_BROKER_CONFIG", 2), ("DYNAMIC_DEFAULT_BROKER_CONFIG", 3),
        ("STATIC_BROKER_CONFIG", 4), ("DEFAULT_CONFIG", 5), ("DYNAMIC_BROKER_LOGGER_CONFIG", 6)]
    assert ConfigSource.DYNAMIC_TOPIC_CONFIG is ConfigSource.TOPIC_CONFIG
    assert ConfigSource.TOPIC_CONFIG.admin_name == "DYNAMIC_TOPIC_CONFIG"


def test_topic_with_override_on_default_broker() -> None:
    entries = by_name(describe_topic_config({"retention.ms": "1000", "min.insync.replicas": "2"},
                                            BrokerConfig.from_props(ZK)))
    assert kafka_configs_line(entries["retention.ms"]) == (
        "retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}")
    assert kafka_configs_line(entries["min.insync.replicas"]) == (
        "min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, "
        "DEFAULT_CONFIG:min.insync.replicas=1}")
    # kafka-topics' "Configs:" field is the non-default entries.
    assert sorted(e.name for e in entries.values() if not e.is_default) == ["min.insync.replicas", "retention.ms"]
    assert entries["segment.bytes"].source is ConfigSource.DEFAULT_CONFIG and entries["segment.bytes"].is_default


def test_static_broker_synonym_makes_topic_entry_non_default() -> None:
    # 2.8's shipped server.properties sets log.segment.bytes, so kafka-topics shows segment.bytes=1073741824.
    broker = BrokerConfig.from_props({**ZK, "log.segment.bytes": "1073741824", "log.retention.hours": "168"})
    entries = by_name(describe_topic_config({}, broker))
    assert entries["segment.bytes"].source is ConfigSource.STATIC_BROKER_CONFIG
    assert not entries["segment.bytes"].is_default
    assert kafka_configs_line(entries["segment.bytes"]) == (
        "segment.bytes=1073741824 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.segment.bytes=1073741824, "
        "DEFAULT_CONFIG:log.segment.bytes=1073741824}")
    # Kafka drops synonyms listed before the primary name (log.retention.ms), so a static
    # log.retention.hours leaves retention.ms a DEFAULT_CONFIG entry with no synonyms.
    assert kafka_configs_line(entries["retention.ms"]) == "retention.ms=604800000 sensitive=false synonyms={}"
    assert entries["retention.ms"].is_default
    assert kafka_configs_line(entries["flush.ms"]) == "flush.ms=9223372036854775807 sensitive=false synonyms={}"


def test_topic_entry_with_dynamic_default_matches_real_kafka_output() -> None:
    # Captured from Kafka: kafka-configs --describe --all --topic after
    # --entity-default --add-config log.retention.ms=259200000 on a broker with log.retention.hours=168.
    broker = BrokerConfig.from_props({**ZK, "log.retention.hours": "168"}).with_dynamic(
        dynamic_default={"log.retention.ms": "259200000"})
    entries = by_name(describe_topic_config({}, broker))
    assert kafka_configs_line(entries["retention.ms"]) == (
        "retention.ms=259200000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=259200000, "
        "STATIC_BROKER_CONFIG:log.retention.hours=168, DEFAULT_CONFIG:log.retention.hours=168}")
    assert entries["retention.ms"].source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert kafka_configs_line(entries["message.format.version"]) == (
        "message.format.version=3.0-IV1 sensitive=false synonyms={DEFAULT_CONFIG:log.message.format.version=3.0-IV1}")
    assert kafka_configs_line(entries["follower.replication.throttled.replicas"]) == (
        "follower.replication.throttled.replicas= sensitive=false synonyms={}")


def test_topic_entries_cover_every_key_and_unknown_overrides() -> None:
    entries = describe_topic_config({"stale.key": "x"}, None)
    assert len(entries) == 27
    assert entries[-1].name == "stale.key" and entries[-1].source is ConfigSource.TOPIC_CONFIG
    assert all(not e.read_only and not e.is_sensitive for e in entries)


def test_broker_entries_match_real_kafka_output() -> None:
    # Lines captured from `kafka-configs --describe --all --entity-type brokers --entity-name 1`.
    static = {**ZK, "log.retention.hours": "100", "num.partitions": "3"}
    entries = by_name(describe_broker_config(static, {"log.retention.ms": "259200000"}, {}))
    assert kafka_configs_line(entries["log.retention.hours"]) == (
        "log.retention.hours=100 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.retention.hours=100, "
        "DEFAULT_CONFIG:log.retention.hours=168}")
    assert kafka_configs_line(entries["log.retention.ms"]) == (
        "log.retention.ms=259200000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=259200000, "
        "STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168}")
    assert kafka_configs_line(entries["log.roll.ms"]) == "log.roll.ms=null sensitive=false synonyms={}"
    assert kafka_configs_line(entries["num.partitions"]) == (
        "num.partitions=3 sensitive=false synonyms={STATIC_BROKER_CONFIG:num.partitions=3, "
        "DEFAULT_CONFIG:num.partitions=1}")
    assert entries["log.retention.ms"].source is ConfigSource.DYNAMIC_BROKER_CONFIG
    assert entries["log.retention.ms"].read_only is False
    assert entries["log.retention.hours"].read_only is True
    assert entries["broker.id"].is_default and entries["broker.id"].value == "-1"


def test_broker_describe_includes_custom_keys_and_filters_bad_dynamic_keys() -> None:
    entries = by_name(describe_broker_config({**ZK, "custom.x": "1"}, {"broker.id": "7"}, {}))
    assert entries["custom.x"].source is ConfigSource.STATIC_BROKER_CONFIG and entries["custom.x"].read_only
    assert entries["broker.id"].value == "-1"          # broker.id can not come from ZooKeeper


def test_cluster_default_entity_lists_only_its_own_keys() -> None:
    broker = BrokerConfig.from_props({**ZK, "min.insync.replicas": "2"}).with_dynamic(
        dynamic_default={"min.insync.replicas": "2", "log.retention.ms": "1000"})
    entries = broker.describe(per_broker=False)
    assert [kafka_configs_line(e) for e in entries] == [
        "min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=2}",
        "log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000}",
    ]


def test_per_broker_describe_via_broker_config() -> None:
    broker = BrokerConfig.from_props({**ZK, "min.insync.replicas": "2"}).with_dynamic(
        dynamic_default={"min.insync.replicas": "3"})
    entry = by_name(broker.describe())["min.insync.replicas"]
    assert kafka_configs_line(entry) == (
        "min.insync.replicas=3 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=3, "
        "STATIC_BROKER_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1}")
