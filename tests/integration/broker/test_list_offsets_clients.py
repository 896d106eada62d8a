"""ListOffsets through stock clients: MAX_TIMESTAMP (-3) names the record with the largest timestamp.

Each codec's batches span several segments; the answer must be a pair (offset, timestamp) that a
consumer actually reads, and the same after the broker restarts (indexes reloaded from disk).
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.admin import OffsetSpec as KpOffsetSpec

from support.clients import create_topic, wait_for

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def _produce(bootstrap: str, topic: str, codec: str, groups: list[list[int]]) -> None:
    """One flush per group, so each group is (at most) one batch; values name their timestamp."""
    p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 50})
    for group in groups:
        for ts in group:
            p.produce(topic, value=f"ts={ts}".encode(), partition=0, timestamp=ts)
        assert p.flush(30) == 0


def _consume_all(bootstrap: str, topic: str, n: int) -> dict[int, int]:
    """offset -> timestamp as a librdkafka consumer reads them."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    c.assign([CkTopicPartition(topic, 0, 0)])
    got: dict[int, int] = {}
    deadline = time.monotonic() + 60
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            got[m.offset()] = m.timestamp()[1]
    c.close()
    assert len(got) == n, got
    return got


def _confluent_max(bootstrap: str, topic: str) -> tuple[int, int]:
    a = AdminClient({"bootstrap.servers": bootstrap})
    tp = CkTopicPartition(topic, 0)
    info = a.list_offsets({tp: OffsetSpec.max_timestamp()})[tp].result(30)
    return info.offset, info.timestamp


def _kafka_python_views(bootstrap: str, topic: str, probe_ts: int):
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        mx = admin.list_partition_offsets({tp: KpOffsetSpec.MAX_TIMESTAMP})[tp]
        at = consumer.offsets_for_times({tp: probe_ts})[tp]
        end = consumer.end_offsets([tp])[tp]
    finally:
        admin.close()
        consumer.close()
    return (mx.offset, mx.timestamp), (at.offset, at.timestamp), end


@pytest.mark.parametrize("codec", CODECS)
def test_max_timestamp_offset_across_segments_codecs_and_restart(cluster, codec):
    topic = f"maxts-{codec}"
    # Small segments: every batch or two rolls, so the answer has to be found across segments.
    create_topic(cluster.bootstrap, topic, configs={"segment.bytes": "300"})
    t0 = int(time.time() * 1000) - 60_000
    groups = [[t0 + 1, t0 + 2], [t0 + 100, t0 + 400, t0 + 200], [t0 + 50, t0 + 60], [t0 + 300, t0 + 399]]
    _produce(cluster.bootstrap, topic, codec, groups)
    seen = _consume_all(cluster.bootstrap, topic, 9)
    assert seen[3] == t0 + 400  # the case: offset 3 carries the max, not its batch's end (4)

    def check() -> None:
        assert _confluent_max(cluster.bootstrap, topic) == (3, t0 + 400)
        mx, at, end = _kafka_python_views(cluster.bootstrap, topic, t0 + 250)
        assert mx == (3, t0 + 400)
        assert at == (3, t0 + 400)  # first record with timestamp >= t0+250, in log order
        assert end == 9

    check()
    cluster.stop([0])
    cluster.restart(0)
    # Metadata names the restarted broker leader (its state in ZooKeeper) a moment before its own
    # LeaderAndIsr has made it one again; confluent-kafka's list_offsets does not retry
    # NOT_LEADER_FOR_PARTITION (Kafka has the same window), so wait until the partition is served.
    wait_for(lambda: _led_again(cluster.bootstrap, topic), 30, "the restarted broker to lead the partition")
    check()


def _led_again(bootstrap: str, topic: str) -> bool:
    try:
        _confluent_max(bootstrap, topic)
    except KafkaException as e:
        if e.args[0].code() == KafkaError.NOT_LEADER_FOR_PARTITION:
            return False
        raise
    return True
