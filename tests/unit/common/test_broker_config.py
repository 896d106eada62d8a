"""BrokerConfig: Kafka's exact error texts, derived values, unknown keys, listeners, dynamic layers."""

from __future__ import annotations

import logging

import pytest

from pylog.common.config import (
    DYNAMIC_CLUSTER_KEYS, DYNAMIC_PER_BROKER_KEYS, BrokerConfig, ConfigError, Listener,
    validate_dynamic_broker_config,
)

ZK = {"zookeeper.connect": "127.0.0.1:2181"}


def cfg(**props: str) -> BrokerConfig:
    """A config from keyword props: num_partitions="3" -> num.partitions=3."""
    return BrokerConfig.from_props({**ZK, **{k.replace("_", "."): v for k, v in props.items()}})


def error_of(props: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as info:
        BrokerConfig.from_props({**ZK, **props})
    return str(info.value)


@pytest.mark.parametrize("props, message", [
    ({"num.partitions": "abc"}, "Invalid value abc for configuration num.partitions: Not a number of type INT"),
    ({"num.partitions": "0"}, "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
    ({"num.partitions": "2147483648"},
     "Invalid value 2147483648 for configuration num.partitions: Not a number of type INT"),
    ({"num.partitions": "1.5"}, "Invalid value 1.5 for configuration num.partitions: Not a number of type INT"),
    ({"log.retention.ms": "9223372036854775808"},
     "Invalid value 9223372036854775808 for configuration log.retention.ms: Not a number of type LONG"),
    ({"offsets.topic.replication.factor": "40000"},
     "Invalid value 40000 for configuration offsets.topic.replication.factor: Not a number of type SHORT"),
    ({"offsets.topic.replication.factor": "0"},
     "Invalid value 0 for configuration offsets.topic.replication.factor: Value must be at least 1"),
    ({"delete.topic.enable": "yes"},
     "Invalid value yes for configuration delete.topic.enable: Expected value to be either true or false"),
    ({"log.message.timestamp.type": "createtime"}, "Invalid value createtime for configuration "
     "log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
    ({"compression.type": "brotli"}, "Invalid value brotli for configuration compression.type: "
     "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ({"log.cleanup.policy": "delete,shred"}, "Invalid value shred for configuration log.cleanup.policy: "
     "String must be one of: compact, delete"),
    ({"log.cleaner.min.cleanable.ratio": "1.5"},
     "Invalid value 1.5 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1"),
    ({"log.segment.bytes": "13"}, "Invalid value 13 for configuration log.segment.bytes: Value must be at least 14"),
    ({"log.message.format.version": "9.9"},
     "Invalid value 9.9 for configuration log.message.format.version: Version 9.9 is not a valid version"),
])
def test_invalid_values_use_kafkas_wording(props: dict[str, str], message: str) -> None:
    assert error_of(props) == message


def test_error_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        BrokerConfig.from_props({**ZK, "num.partitions": "x"})
    assert info.value.key == "num.partitions"
    assert isinstance(info.value, ValueError)


def test_values_are_trimmed_and_booleans_case_insensitive() -> None:
    c = cfg(num_partitions=" 3 ", delete_topic_enable="FALSE", broker_rack="  r1 ")
    assert (c.num_partitions, c.delete_topic_enable, c.broker_rack) == (3, False, "r1")


def test_missing_zookeeper_connect() -> None:
    with pytest.raises(ConfigError, match=r"^Missing required configuration `zookeeper.connect` which has no "
                                          r"default value\.$"):
        BrokerConfig.from_props({})


@pytest.mark.parametrize("props, expected", [
    ({}, 168 * 3600_000),
    ({"log.retention.hours": "1"}, 3600_000),
    ({"log.retention.hours": "1", "log.retention.minutes": "2"}, 120_000),
    ({"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "3"}, 3),
    ({"log.retention.minutes": "2", "log.retention.ms": "3"}, 3),
    ({"log.retention.ms": "-1"}, -1),
    ({"log.retention.hours": "-1"}, -1),        # any negative result means "forever"
    ({"log.retention.minutes": "-5"}, -1),
])
def test_retention_priority_ms_then_minutes_then_hours(props: dict[str, str], expected: int) -> None:
    c = BrokerConfig.from_props({**ZK, **props})
    assert c.log_retention_ms == expected
    assert c.topic_defaults()["retention.ms"] == str(expected)


def test_retention_zero_is_refused() -> None:
    assert error_of({"log.retention.ms": "0"}) == (
        "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1")


def test_roll_and_flush_fallbacks() -> None:
    c = cfg(log_roll_hours="2", log_roll_jitter_hours="1", log_flush_scheduler_interval_ms="500")
    assert (c.log_roll_ms, c.log_roll_jitter_ms, c.log_flush_interval_ms) == (7200_000, 3600_000, 500)
    c = cfg(log_roll_hours="2", log_roll_ms="10", log_flush_interval_ms="7", log_flush_scheduler_interval_ms="500")
    assert (c.log_roll_ms, c.log_flush_interval_ms) == (10, 7)
    assert error_of({"log.roll.ms": "0"}) == "requirement failed: log.roll.ms must be greater than or equal to 1"


def test_zookeeper_connection_timeout_defaults_to_session_timeout() -> None:
    assert cfg(zookeeper_session_timeout_ms="6000").zookeeper_connection_timeout_ms == 6000
    c = cfg(zookeeper_session_timeout_ms="6000", zookeeper_connection_timeout_ms="1000")
    assert c.zookeeper_connection_timeout_ms == 1000


def test_log_dirs_from_log_dirs_or_log_dir() -> None:
    assert cfg(log_dir="/x").log_dirs == ["/x"]
    assert cfg(log_dir="/x", log_dirs=" /a , /b,,/c ").log_dirs == ["/a", "/b", "/c"]
    assert error_of({"log.dirs": " , "}) == (
        "requirement failed: At least one log directory must be defined via log.dirs or log.dir.")


def test_broker_id_ranges() -> None:
    assert cfg(broker_id="1000").broker_id == 1000
    assert error_of({"broker.id": "1001"}) == ("requirement failed: broker.id must be greater than or equal to -1 "
                                               "and not greater than reserved.broker.max.id")
    assert error_of({"broker.id": "-1", "broker.id.generation.enable": "false"}) == (
        "requirement failed: broker.id must be greater than or equal to 0")


def test_replica_fetch_wait_must_fit_timeouts() -> None:
    assert error_of({"replica.fetch.wait.max.ms": "40000"}).startswith(
        "requirement failed: replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms")
    assert error_of({"replica.fetch.wait.max.ms": "40000", "replica.socket.timeout.ms": "50000"}).startswith(
        "requirement failed: replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms")


def test_overrides_win_over_file() -> None:
    c = BrokerConfig.from_props({**ZK, "broker.id": "1", "num.partitions": "2"}, {"broker.id": "5"})
    assert (c.broker_id, c.num_partitions) == (5, 2)


def test_attribute_and_get_access() -> None:
    c = cfg(num_partitions="4")
    assert c.num_partitions == c.get("num.partitions") == 4
    assert c.get("log.retention.ms") is None          # the raw key, unlike c.log_retention_ms
    with pytest.raises(KeyError):
        c.get("no.such.key")
    with pytest.raises(AttributeError):
        _ = c.no_such_key


def test_unknown_key_warns_with_kafkas_text(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="pylog.common.config"):
        c = BrokerConfig.from_props({**ZK, "foo": "1"})
    message = "The configuration 'foo' was supplied but isn't a known config."
    assert c.warnings == [message]
    assert message in caplog.messages


def test_kafka_keys_pylog_ignores_are_silent() -> None:
    c = BrokerConfig.from_props({**ZK, "ssl.keymanager.algorithm": "SunX509", "log.cleaner.threads": "2",
                                 "listener.name.internal.ssl.keymanager.algorithm": "X", "num.network.threads": "3",
                                 "listener.name.internal.ssl.keystore.type": "PEM",
                                 "listener.name.internal.plain.sasl.jaas.config": "x required;"})
    assert c.warnings == []
    # Per-listener forms of keys pylog reads (ssl.keystore.type, a mechanism's JAAS login) are used, not ignored.
    assert c.ignored == ["ssl.keymanager.algorithm", "log.cleaner.threads",
                         "listener.name.internal.ssl.keymanager.algorithm"]


def test_listeners_parsing() -> None:
    c = cfg(listeners="PLAINTEXT://127.0.0.1:9092,internal://[::1]:9093",
            listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT")
    assert c.listeners == [Listener("PLAINTEXT", "127.0.0.1", 9092), Listener("INTERNAL", "::1", 9093)]
    assert [lst.connection_string for lst in c.listeners] == ["PLAINTEXT://127.0.0.1:9092", "INTERNAL://[::1]:9093"]
    assert c.advertised_listeners == c.listeners


def test_advertised_listeners() -> None:
    c = cfg(listeners="PLAINTEXT://:9092", advertised_listeners="PLAINTEXT://broker1.example:19092")
    assert c.advertised_listeners == [Listener("PLAINTEXT", "broker1.example", 19092)]
    assert error_of({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}) == (
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
        "Use a routable IP address.")


@pytest.mark.parametrize("props, message", [
    ({"listeners": "PLAINTEXT:/x"},
     "Error creating broker listeners from 'PLAINTEXT:/x': Unable to parse PLAINTEXT:/x to a broker endpoint"),
    ({"listeners": "FOO://:9092"},
     "Error creating broker listeners from 'FOO://:9092': No security protocol defined for listener FOO"),
    ({"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"},
     "requirement failed: Each listener must have a different name, listeners: PLAINTEXT://:9092,PLAINTEXT://:9093"),
    ({"listeners": "PLAINTEXT://:9092,B://:9092", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,B:PLAINTEXT"},
     "requirement failed: Each listener must have a different port, listeners: PLAINTEXT://:9092,B://:9092"),
    ({"listeners": "SSL://:9093"}, "requirement failed: inter.broker.listener.name must be a listener name defined "
     "in advertised.listeners. The valid options based on currently configured listeners are SSL"),
    ({"listener.security.protocol.map": "PLAINTEXT:BOGUS"},
     "Invalid security protocol `BOGUS` defined in listener.security.protocol.map"),
    ({"listeners": "A://:1", "listener.security.protocol.map": "A:PLAINTEXT"},
     "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. "
     "The valid options based on currently configured listeners are A"),
    ({"advertised.listeners": "B://h:1", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,B:PLAINTEXT",
      "inter.broker.listener.name": "b"},
     "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones defined in "
     "listeners. Found B. The valid options based on the current configuration are PLAINTEXT"),
    ({"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
     "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."),
])
def test_listener_errors(props: dict[str, str], message: str) -> None:
    assert error_of(props) == message


def test_inter_broker_listener_name() -> None:
    c = cfg(listeners="CLIENT://:9092,REPL://:9093", listener_security_protocol_map="CLIENT:PLAINTEXT,REPL:PLAINTEXT",
            inter_broker_listener_name="repl")
    assert c.inter_broker_listener_name == "REPL"


def test_dynamic_scopes_follow_kafka() -> None:
    assert DYNAMIC_PER_BROKER_KEYS == {"listeners", "advertised.listeners", "listener.security.protocol.map"}
    for key in ("log.retention.ms", "log.retention.bytes", "min.insync.replicas", "unclean.leader.election.enable",
                "leader.replication.throttled.rate", "follower.replication.throttled.rate", "message.max.bytes",
                "log.segment.bytes", "num.replica.fetchers"):
        assert key in DYNAMIC_CLUSTER_KEYS
    # Only the first synonym of a topic config is dynamic in Kafka.
    for key in ("log.retention.hours", "log.retention.minutes", "log.roll.hours", "broker.id", "log.dirs",
                "zookeeper.connect", "log.flush.scheduler.interval.ms"):
        assert key not in DYNAMIC_CLUSTER_KEYS | DYNAMIC_PER_BROKER_KEYS


def test_dynamic_layers_override_static_in_order() -> None:
    base = cfg(log_retention_hours="1", min_insync_replicas="1")
    c = base.with_dynamic(dynamic_default={"log.retention.ms": "2000", "min.insync.replicas": "2"},
                          dynamic_broker={"log.retention.ms": "1000"})
    assert (c.log_retention_ms, c.min_insync_replicas) == (1000, 2)
    c = c.with_dynamic(dynamic_broker={})
    assert c.log_retention_ms == 2000
    assert base.log_retention_ms == 3600_000      # the original is untouched


def test_dynamic_layers_drop_what_they_may_not_set() -> None:
    c = cfg().with_dynamic(dynamic_broker={"broker.id": "9", "log.retention.ms": "5"},
                           dynamic_default={"listeners": "PLAINTEXT://:1"})
    assert (c.broker_id, c.log_retention_ms, c.listeners[0].port) == (-1, 5, 9092)
    assert c.dynamic_broker == {"log.retention.ms": "5"} and c.dynamic_default == {}
    assert "Non-dynamic configs configured in ZooKeeper will be ignored: Set(broker.id)" in c.warnings
    assert "Per-broker configs defined at default cluster level will be ignored: Set(listeners)" in c.warnings


def test_invalid_dynamic_value_raises() -> None:
    with pytest.raises(ConfigError, match="^Invalid value x for configuration min.insync.replicas: "):
        cfg().with_dynamic(dynamic_default={"min.insync.replicas": "x"})


@pytest.mark.parametrize("props, per_broker, message", [
    ({"broker.id": "2", "log.dirs": "/x"}, True, "Cannot update these configs dynamically: Set(broker.id, log.dirs)"),
    ({"log.retention.hours": "1"}, True, "Cannot update these configs dynamically: Set(log.retention.hours)"),
    ({"listeners": "PLAINTEXT://:1"}, False,
     "Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"),
    ({"min.insync.replicas": "0"}, False,
     "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
])
def test_validate_dynamic_broker_config_errors(props: dict[str, str], per_broker: bool, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_dynamic_broker_config(props, per_broker=per_broker)
    assert str(info.value) == message


def test_validate_dynamic_broker_config_accepts_dynamic_and_custom_keys() -> None:
    typed = validate_dynamic_broker_config({"leader.replication.throttled.rate": "1000000", "custom.key": "x",
                                            "log.cleaner.threads": "2"}, per_broker=False)
    assert typed == {"leader.replication.throttled.rate": 1000000}


@pytest.mark.parametrize("props, message", [
    ({"group.consumer.session.timeout.ms": "10000"},
     "group.consumer.session.timeout.ms must be between group.consumer.min.session.timeout.ms and "
     "group.consumer.max.session.timeout.ms"),
    ({"group.consumer.heartbeat.interval.ms": "20000"},
     "group.consumer.heartbeat.interval.ms must be between group.consumer.min.heartbeat.interval.ms and "
     "group.consumer.max.heartbeat.interval.ms"),
    ({"group.consumer.min.session.timeout.ms": "5000", "group.consumer.session.timeout.ms": "5000"},
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
    ({"group.coordinator.rebalance.protocols": "consumer"}, "group.coordinator.rebalance.protocols must contain classic"),
])
def test_kip848_bounds(props: dict[str, str], message: str) -> None:
    assert error_of(props) == f"requirement failed: {message}"


def test_kip848_defaults_are_kafkas() -> None:
    c = BrokerConfig.from_props(ZK)
    assert [c.get(k) for k in ("group.coordinator.rebalance.protocols", "group.consumer.session.timeout.ms",
                               "group.consumer.heartbeat.interval.ms", "group.consumer.assignors")] == [
        ["classic", "consumer"], 45000, 5000, ["uniform", "range"]]
    assert "Invalid value sticky" in error_of({"group.consumer.assignors": "sticky"})
