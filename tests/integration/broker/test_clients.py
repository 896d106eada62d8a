"""Stock Kafka clients against one real pylog broker: what they write comes back identical."""

from __future__ import annotations

import asyncio
import json

import pytest

from support.clients import create_topic, kcat

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.mark.parametrize("codec", CODECS)
def test_kcat_roundtrip_with_keys_headers_and_compression(cluster, codec):
    topic = f"kcat-{codec}"
    create_topic(cluster.bootstrap, topic)
    lines = "".join(f"key-{i}|value-{i}\n" for i in range(50))
    kcat(cluster.bootstrap, "-P", "-t", topic, "-p", "0", "-K", "|", "-z", codec, "-H", "h1=x", "-H", "h2=y",
         input=lines)
    out = kcat(cluster.bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J").stdout
    msgs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [m["key"] for m in msgs] == [f"key-{i}" for i in range(50)]
    assert [m["payload"] for m in msgs] == [f"value-{i}" for i in range(50)]
    assert [m["offset"] for m in msgs] == list(range(50))
    assert all(m["headers"] == ["h1", "x", "h2", "y"] for m in msgs)


def test_confluent_kafka_producer_and_assigned_consumer(cluster):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = "ck"
    create_topic(cluster.bootstrap, topic, partitions=3)
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "linger.ms": 5})
    sent = {}
    for i in range(300):
        key = f"k{i}".encode()
        p.produce(topic, value=f"v{i}".encode(), key=key, partition=i % 3, timestamp=1_700_000_000_000 + i,
                  headers=[("n", str(i).encode())])
        sent[(i % 3, key)] = (f"v{i}".encode(), 1_700_000_000_000 + i, str(i).encode())
    assert p.flush(30) == 0
    c = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "unused",
                                  "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition(topic, part, 0) for part in range(3)])
    got = {}
    offsets: dict[int, list[int]] = {0: [], 1: [], 2: []}
    for _ in range(400):
        m = c.poll(1.0)
        if m is None:
            if len(got) == 300:
                break
            continue
        assert m.error() is None, m.error()
        got[(m.partition(), m.key())] = (m.value(), m.timestamp()[1], dict(m.headers())["n"])
        offsets[m.partition()].append(m.offset())
        if len(got) == 300:
            break
    c.close()
    assert got == sent
    assert all(offsets[part] == list(range(100)) for part in range(3))


def test_kafka_python_producer_and_consumer(cluster):
    kafka = pytest.importorskip("kafka")
    topic = "kp"
    create_topic(cluster.bootstrap, topic)
    prod = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap, request_timeout_ms=20000)
    futures = [prod.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=0,
                         headers=[("h", b"1")], timestamp_ms=1_600_000_000_000 + i) for i in range(100)]
    prod.flush(30)
    offsets = [f.get(timeout=30).offset for f in futures]
    prod.close()
    assert offsets == list(range(100))
    cons = kafka.KafkaConsumer(bootstrap_servers=cluster.bootstrap, enable_auto_commit=False,
                               consumer_timeout_ms=10000)
    tp = kafka.TopicPartition(topic, 0)
    cons.assign([tp])
    cons.seek_to_beginning(tp)
    got = []
    for m in cons:
        got.append((m.offset, m.key, m.value, m.timestamp, list(m.headers)))
        if len(got) == 100:
            break
    cons.close()
    assert got == [(i, f"k{i}".encode(), f"v{i}".encode(), 1_600_000_000_000 + i, [("h", b"1")]) for i in range(100)]


def test_aiokafka_producer_and_consumer(cluster):
    aiokafka = pytest.importorskip("aiokafka")
    topic = "aio"
    create_topic(cluster.bootstrap, topic)

    async def run():
        prod = aiokafka.AIOKafkaProducer(bootstrap_servers=cluster.bootstrap)
        await prod.start()
        try:
            metas = [await prod.send_and_wait(topic, value=f"v{i}".encode(), key=f"k{i}".encode(), partition=0,
                                              timestamp_ms=1_650_000_000_000 + i) for i in range(20)]
        finally:
            await prod.stop()
        cons = aiokafka.AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap, enable_auto_commit=False)
        await cons.start()
        try:
            tp = aiokafka.TopicPartition(topic, 0)
            cons.assign([tp])
            await cons.seek_to_beginning(tp)
            got = []
            while len(got) < 20:
                batch = await asyncio.wait_for(cons.getmany(tp, timeout_ms=1000), 15)
                for m in batch.get(tp, []):
                    got.append((m.offset, m.key, m.value, m.timestamp))
        finally:
            await cons.stop()
        return [m.offset for m in metas], got

    offsets, got = asyncio.run(run())
    assert offsets == list(range(20))
    assert got == [(i, f"k{i}".encode(), f"v{i}".encode(), 1_650_000_000_000 + i) for i in range(20)]
