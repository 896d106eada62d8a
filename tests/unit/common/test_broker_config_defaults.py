"""Every default equals Kafka 3.3's (kafka-formats.md section 3, KafkaConfig/LogConfig), key by key."""

from __future__ import annotations

import pytest

from pylog.common.config import BROKER_CONFIGS, TOPIC_CONFIGS, BrokerConfig, Type

LONG_MAX = 9223372036854775807

# (key, Kafka's default) straight from the section 3 table and KafkaConfig.Defaults.
KAFKA_BROKER_DEFAULTS = [
    ("broker.id", -1),
    ("broker.id.generation.enable", True),
    ("reserved.broker.max.id", 1000),
    ("listeners", "PLAINTEXT://:9092"),
    ("advertised.listeners", None),
    ("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"),
    ("log.dirs", None),
    ("log.dir", "/tmp/kafka-logs"),
    ("zookeeper.connect", None),
    ("zookeeper.session.timeout.ms", 18000),
    ("zookeeper.connection.timeout.ms", None),
    ("num.partitions", 1),
    ("default.replication.factor", 1),
    ("min.insync.replicas", 1),
    ("unclean.leader.election.enable", False),
    ("replica.lag.time.max.ms", 30000),
    ("replica.fetch.wait.max.ms", 500),
    ("replica.fetch.min.bytes", 1),
    ("replica.fetch.max.bytes", 1048576),
    ("replica.fetch.response.max.bytes", 10485760),
    ("replica.fetch.backoff.ms", 1000),
    ("num.replica.fetchers", 1),
    ("replica.socket.timeout.ms", 30000),
    ("replica.high.watermark.checkpoint.interval.ms", 5000),
    ("auto.leader.rebalance.enable", True),
    ("leader.imbalance.check.interval.seconds", 300),
    ("leader.imbalance.per.broker.percentage", 10),
    ("controlled.shutdown.enable", True),
    ("controlled.shutdown.max.retries", 3),
    ("controlled.shutdown.retry.backoff.ms", 5000),
    ("controller.socket.timeout.ms", 30000),
    ("log.segment.bytes", 1073741824),
    ("log.roll.ms", None),
    ("log.roll.hours", 168),
    ("log.roll.jitter.hours", 0),
    ("log.retention.hours", 168),
    ("log.retention.minutes", None),
    ("log.retention.ms", None),
    ("log.retention.bytes", -1),
    ("log.retention.check.interval.ms", 300000),
    ("log.flush.interval.messages", LONG_MAX),
    ("log.flush.interval.ms", None),
    ("log.flush.scheduler.interval.ms", LONG_MAX),
    ("log.flush.offset.checkpoint.interval.ms", 60000),
    ("log.flush.start.offset.checkpoint.interval.ms", 60000),
    ("log.index.size.max.bytes", 10485760),
    ("log.index.interval.bytes", 4096),
    ("log.segment.delete.delay.ms", 60000),
    ("log.message.timestamp.type", "CreateTime"),
    ("log.message.timestamp.difference.max.ms", LONG_MAX),
    ("log.cleanup.policy", ["delete"]),
    ("log.preallocate", False),
    ("message.max.bytes", 1048588),
    ("compression.type", "producer"),
    ("socket.request.max.bytes", 104857600),
    ("socket.send.buffer.bytes", 102400),
    ("socket.receive.buffer.bytes", 102400),
    ("num.network.threads", 3),
    ("num.io.threads", 8),
    ("num.recovery.threads.per.data.dir", 1),
    ("offsets.topic.replication.factor", 3),
    ("offsets.topic.num.partitions", 50),
    ("offsets.topic.segment.bytes", 104857600),
    ("offsets.retention.minutes", 10080),
    ("offsets.retention.check.interval.ms", 600000),
    ("offsets.commit.timeout.ms", 5000),
    ("offset.metadata.max.bytes", 4096),
    ("transaction.state.log.replication.factor", 3),
    ("transaction.state.log.min.isr", 2),
    ("transaction.state.log.num.partitions", 50),
    ("broker.rack", None),
    ("group.initial.rebalance.delay.ms", 3000),
    ("group.min.session.timeout.ms", 6000),
    ("group.max.session.timeout.ms", 1800000),
    ("group.max.size", 2147483647),
    ("delete.topic.enable", True),
    ("auto.create.topics.enable", True),
    ("request.timeout.ms", 30000),
    ("leader.replication.throttled.rate", LONG_MAX),
    ("follower.replication.throttled.rate", LONG_MAX),
    ("replica.alter.log.dirs.io.max.bytes.per.second", LONG_MAX),
    ("log.message.format.version", "3.0-IV1"),
    ("security.inter.broker.protocol", "PLAINTEXT"),
]

KAFKA_TOPIC_DEFAULTS = {
    "cleanup.policy": "delete", "compression.type": "producer", "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000", "flush.messages": str(LONG_MAX), "flush.ms": str(LONG_MAX),
    "follower.replication.throttled.replicas": "", "index.interval.bytes": "4096",
    "leader.replication.throttled.replicas": "", "max.compaction.lag.ms": str(LONG_MAX),
    "max.message.bytes": "1048588", "message.downconversion.enable": "true", "message.format.version": "3.0-IV1",
    "message.timestamp.difference.max.ms": str(LONG_MAX), "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "0", "min.insync.replicas": "1",
    "preallocate": "false", "retention.bytes": "-1", "retention.ms": "604800000", "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760", "segment.jitter.ms": "0", "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}


@pytest.fixture
def defaults() -> BrokerConfig:
    return BrokerConfig.from_props({"zookeeper.connect": "127.0.0.1:2181"})


@pytest.mark.parametrize("key, expected", KAFKA_BROKER_DEFAULTS, ids=[k for k, _ in KAFKA_BROKER_DEFAULTS])
def test_broker_default_matches_kafka(defaults: BrokerConfig, key: str, expected: object) -> None:
    assert BROKER_CONFIGS[key].default == expected
    if key != "zookeeper.connect":  # required, so the fixture sets it
        assert defaults.get(key) == expected


def test_types_that_kafka_declares_specially() -> None:
    # SHORT in Kafka: the replication factors of internal topics.
    assert BROKER_CONFIGS["offsets.topic.replication.factor"].type is Type.SHORT
    assert BROKER_CONFIGS["log.retention.ms"].type is Type.LONG
    assert BROKER_CONFIGS["log.retention.minutes"].type is Type.INT
    assert BROKER_CONFIGS["leader.imbalance.check.interval.seconds"].type is Type.LONG
    assert BROKER_CONFIGS["log.cleanup.policy"].type is Type.LIST


def test_derived_defaults(defaults: BrokerConfig) -> None:
    assert defaults.log_retention_ms == 168 * 3600 * 1000
    assert defaults.log_roll_ms == 168 * 3600 * 1000
    assert defaults.log_roll_jitter_ms == 0
    assert defaults.log_flush_interval_ms == LONG_MAX
    assert defaults.log_dirs == ["/tmp/kafka-logs"]
    assert defaults.zookeeper_connection_timeout_ms == 18000
    assert [tuple(lst) for lst in defaults.listeners] == [("PLAINTEXT", None, 9092, "PLAINTEXT")]
    assert defaults.advertised_listeners == defaults.listeners
    assert defaults.inter_broker_listener_name == "PLAINTEXT"


def test_topic_defaults_match_kafka_log_config(defaults: BrokerConfig) -> None:
    assert set(TOPIC_CONFIGS) == set(KAFKA_TOPIC_DEFAULTS)
    assert defaults.topic_defaults() == KAFKA_TOPIC_DEFAULTS


def test_pylog_metrics_keys() -> None:
    assert BROKER_CONFIGS["metrics.sample.interval.ms"].default == 60000
    assert BROKER_CONFIGS["metrics.topic.replication.factor"].default == 1
    assert "__pylog_metrics" in BROKER_CONFIGS["metrics.sample.interval.ms"].doc
