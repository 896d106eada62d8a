"""DeleteRecords (API 21) through the three stock admin clients, and what it leaves behind.

The log start offset moves on the leader, the followers follow it (the answer waits until they
did), ListOffsets earliest and Fetch honour it, and it survives a restart and a leader change.
"""

from __future__ import annotations

import asyncio

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.admin import OffsetSpec as KpOffsetSpec
from kafka.errors import OffsetOutOfRangeError, PolicyViolationError

from support.clients import create_topic, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def _produce(bootstrap: str, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(n):
        p.produce(topic, value=f"v{i}".encode(), partition=0)
        if i % 10 == 9:
            p.flush(30)  # several batches, so several segments
    assert p.flush(30) == 0


def _earliest(bootstrap: str, topic: str) -> int:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        tp = TopicPartition(topic, 0)
        return admin.list_partition_offsets({tp: KpOffsetSpec.EARLIEST})[tp].offset
    finally:
        admin.close()


def _first_consumed(bootstrap: str, topic: str) -> tuple[int, bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    c.assign([CkTopicPartition(topic, 0, -2)])  # OFFSET_BEGINNING
    try:
        m = wait_for(lambda: (m := c.poll(1.0)) is not None and m.error() is None and m, timeout=60,
                     what="a record from the beginning")
        return m.offset(), m.value()
    finally:
        c.close()


def _checkpointed(data_dir) -> str:
    return (data_dir / "logs" / "log-start-offset-checkpoint").read_text()


def test_delete_records_moves_the_start_on_every_replica_and_survives_restart(cluster_factory):
    c = cluster_factory(3)
    topic = "dr"
    create_topic(c.bootstrap, topic, rf=3, configs={"segment.bytes": "400", "min.insync.replicas": "2"})
    wait_for(lambda: len(partitions(c.bootstrap, topic)[0].isr) == 3, what="3 in sync")
    _produce(c.bootstrap, topic, 100)

    a = AdminClient({"bootstrap.servers": c.bootstrap})
    tp = CkTopicPartition(topic, 0, 40)
    deleted = a.delete_records([tp])[tp].result(30)
    # The answer waited for the followers: the low watermark is every replica's start.
    assert deleted.low_watermark == 40
    assert _earliest(c.bootstrap, topic) == 40
    assert _first_consumed(c.bootstrap, topic) == (40, b"v40")

    consumer = KafkaConsumer(bootstrap_servers=c.bootstrap, auto_offset_reset="none", request_timeout_ms=30000)
    try:
        ktp = TopicPartition(topic, 0)
        consumer.assign([ktp])
        consumer.seek(ktp, 10)
        with pytest.raises(OffsetOutOfRangeError):
            for _ in range(30):
                consumer.poll(timeout_ms=1000)
    finally:
        consumer.close()

    # A clean stop writes log-start-offset-checkpoint; the restarted broker starts there.
    leader = partitions(c.bootstrap, topic)[0].leader
    c.stop([leader])
    assert f"{topic} 0 40\n" in _checkpointed(c.brokers[leader].data_dir)
    # The new leader is a former follower: it learnt the start offset from its fetches.
    wait_for(lambda: partitions(c.bootstrap, topic)[0].leader not in (-1, leader), what="new leader")
    assert _earliest(c.bootstrap, topic) == 40
    c.restart(leader)
    wait_for(lambda: len(partitions(c.bootstrap, topic)[0].isr) == 3, what="back in sync")
    for bid in range(3):
        c.stop([bid])
        assert _checkpointed(c.brokers[bid].data_dir).splitlines()[:2] == ["0", "1"]
        assert f"{topic} 0 40" in _checkpointed(c.brokers[bid].data_dir).splitlines()
        c.restart(bid)
    assert _first_consumed(c.bootstrap, topic) == (40, b"v40")


def test_delete_records_with_kafka_python_and_aiokafka(cluster):
    create_topic(cluster.bootstrap, "kp", configs={"segment.bytes": "400"})
    create_topic(cluster.bootstrap, "compacted", configs={"cleanup.policy": "compact"})
    _produce(cluster.bootstrap, "kp", 50)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        tp = TopicPartition("kp", 0)
        result = admin.delete_records({tp: 20})
        assert result[tp]["low_watermark"] == 20, result
        with pytest.raises(PolicyViolationError):
            admin.delete_records({TopicPartition("compacted", 0): 0})
        with pytest.raises(OffsetOutOfRangeError):
            admin.delete_records({tp: 51})  # beyond the high watermark
    finally:
        admin.close()
    assert _earliest(cluster.bootstrap, "kp") == 20

    async def aio() -> dict:
        from aiokafka.admin import AIOKafkaAdminClient, RecordsToDelete
        from aiokafka.structs import TopicPartition as AioTopicPartition
        client = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        await client.start()
        try:
            # -1: up to the high watermark, everything written so far.
            return await client.delete_records({AioTopicPartition("kp", 0): RecordsToDelete(-1)}, timeout_ms=30000)
        finally:
            await client.close()

    (low,) = asyncio.run(aio()).values()
    assert low == 50
    assert _earliest(cluster.bootstrap, "kp") == 50
