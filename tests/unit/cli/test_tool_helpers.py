"""Pure helpers of the Kafka 3.9 tools: Java HashMap order, Java printf numbers, Java client properties."""

import re
import ssl

import pytest

from pylog.cli import java_client_props
from pylog.cli.java_client_props import librdkafka_config
from pylog.cli.java_order import hashmap_order, ordered_object, string_hash, topic_partition_hash
from pylog.cli.perf_common import JavaDateFormat, ThroughputThrottler, jfloat
from pylog.cli.producer_perf import Stats, expand_multi_value
from pylog.common.configdef import ConfigError


def test_java_hashes_and_hashmap_order():
    assert string_hash("version") == 351608024 and string_hash("") == 0
    assert string_hash("polygenelubricants") == -(2**31)  # the classic Integer.MIN_VALUE String hash
    assert topic_partition_hash("t", 0) == 31 * 31 + string_hash("t")
    # The shapes Kafka 3.9's LogDirsCommand prints (Jackson over HashMaps).
    assert list(ordered_object({"version": 1, "brokers": []})) == ["brokers", "version"]
    assert list(ordered_object({"logDir": 1, "error": 2, "partitions": 3})) == ["partitions", "error", "logDir"]
    assert list(ordered_object({"partition": 1, "size": 2, "offsetLag": 3, "isFuture": 4})) == [
        "partition", "size", "offsetLag", "isFuture"]
    assert hashmap_order([17, 1, 16], lambda i: i) == [16, 17, 1]  # buckets of a 16-slot table, then insertion


def test_java_number_and_date_formatting():
    assert [jfloat(0.125, 2), jfloat(2.5, 0), jfloat(1 / 3), jfloat(float("nan"), 1), jfloat(float("inf"), 2)] == [
        "0.13", "3", "0.333333", "NaN", "Infinity"]
    assert JavaDateFormat("yyyy-MM-dd HH:mm:ss:SSS").format(86_400_007)[-4:] == ":007"
    with pytest.raises(ValueError):
        JavaDateFormat("yyyy QQ")


def test_producer_stats_summary_line_shape():
    stats = Stats(4)
    for latency in (5, 1, 9, 3):
        stats.record(latency, 10, stats.start)
        stats.iteration += 1
    stats.start -= 1000
    line = stats.total_line()
    assert re.fullmatch(r"4 records sent, [34]\.\d{6} records/sec \(0\.00 MB/sec\), 4\.50 ms avg latency, 9\.00 ms max "
                        r"latency, 5 ms 50th, 9 ms 95th, 9 ms 99th, 9 ms 99\.9th\.", line), line
    throttler = ThroughputThrottler(-1, 0)
    assert not throttler.should_throttle(10**9, 1)
    assert ThroughputThrottler(10, 0).should_throttle(100, 1000)


def test_argparse_style_multi_values():
    assert expand_multi_value(["--producer-props", "a=1", "b=2", "--topic", "t"], "--producer-props") == [
        "--producer-props", "a=1", "--producer-props", "b=2", "--topic", "t"]


def test_java_client_properties_translate(tmp_path, capsys):
    java_client_props._warned.clear()
    ca = ssl.get_default_verify_paths().cafile  # any PEM bundle: librdkafka gets it by path
    props = {"bootstrap.servers": "h:1", "key.serializer": "org.apache.kafka.common.serialization.StringSerializer",
             "value.deserializer": "com.acme.AvroDeserializer", "delivery.timeout.ms": "30000",
             "buffer.memory": "33554432", "sasl.mechanism": "SCRAM-SHA-512",
             "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" '
                                 'password="p";',
             "partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
             "partitioner.class": "org.apache.kafka.clients.producer.internals.DefaultPartitioner",
             "ssl.endpoint.identification.algorithm": "", "auto.offset.reset": "none"}
    cfg = librdkafka_config(props)
    assert cfg == {"bootstrap.servers": "h:1", "message.timeout.ms": "30000", "queue.buffering.max.kbytes": 32768,
                   "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "u", "sasl.password": "p",
                   "partition.assignment.strategy": "roundrobin", "partitioner": "murmur2_random",
                   "ssl.endpoint.identification.algorithm": "none", "auto.offset.reset": "error"}
    assert "value.deserializer (com.acme.AvroDeserializer)" in capsys.readouterr().err
    pem = librdkafka_config({"ssl.truststore.location": str(ca), "ssl.truststore.type": "PEM"})
    assert pem == {"ssl.ca.location": ca}
    with pytest.raises(ConfigError, match="keytool"):
        librdkafka_config({"ssl.truststore.location": "/x/trust.jks"})


def test_every_dynamic_key_kafka_defines_has_a_type():
    from pylog.common.broker_keys import BROKER_CONFIGS
    from pylog.common.dynamic import validate_dynamic_broker_config
    from pylog.common.kafka_dynamic_types import KAFKA_ONLY_DYNAMIC_TYPES
    from pylog.common.kafka_names import KAFKA_ONLY_DYNAMIC_CLUSTER, KAFKA_ONLY_DYNAMIC_PER_BROKER
    assert (KAFKA_ONLY_DYNAMIC_CLUSTER | KAFKA_ONLY_DYNAMIC_PER_BROKER) - set(BROKER_CONFIGS) == set(
        KAFKA_ONLY_DYNAMIC_TYPES)
    with pytest.raises(ConfigError, match="Not a number of type SHORT"):
        validate_dynamic_broker_config({"sasl.login.refresh.buffer.seconds": "70000"})
    with pytest.raises(ConfigError, match="Value must be at least 1"):
        validate_dynamic_broker_config({"background.threads": "0"}, per_broker=False)
    assert validate_dynamic_broker_config({"max.connections": "100", "my.custom.key": "x"}, per_broker=False) == {}
