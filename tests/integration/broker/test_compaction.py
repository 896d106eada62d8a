"""Compacted topics on a real broker, read and written by real clients (confluent-kafka, kcat)."""

from __future__ import annotations

import json
import time

import pytest
from support.clients import create_topic, kcat, wait_for

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.records import build_batch, iter_batches, read_records

confluent_kafka = pytest.importorskip("confluent_kafka")

FAST_CLEANER = {"log.cleaner.backoff.ms": "200"}
COMPACTED = {"cleanup.policy": "compact", "segment.bytes": "2000", "min.cleanable.dirty.ratio": "0.01",
             "delete.retention.ms": "4000"}


def produce(bootstrap: str, topic: str, pairs: list[tuple[bytes, bytes | None]]) -> None:
    """Produce in rounds of ten, so that no batch outgrows the tiny segment.bytes of these tests."""
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    errors = []
    for i, (key, value) in enumerate(pairs):
        p.produce(topic, value=value, key=key, partition=0,
                  on_delivery=lambda err, msg: errors.append(err) if err else None)
        if i % 10 == 9:
            assert p.flush(30) == 0
    assert p.flush(30) == 0
    assert errors == []


def read_all(bootstrap: str, topic: str) -> list[dict]:
    """Every record of partition 0 from the log start, as kcat prints it (-J)."""
    out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J").stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_compacted_topic_keeps_the_latest_value_per_key_then_drops_tombstones(cluster_factory):
    cluster = cluster_factory(1, overrides=FAST_CLEANER)
    topic = "compacted"
    create_topic(cluster.bootstrap, topic, configs=COMPACTED)
    updates = [(b"k%d" % (i % 10), b"value-%03d" % i) for i in range(300)]
    produce(cluster.bootstrap, topic, updates + [(b"k3", None)])
    produce(cluster.bootstrap, topic, [(b"filler", b"x" * 100) for _ in range(40)])  # tombstone leaves the active segment
    latest = {k.decode(): v.decode() for k, v in updates}
    latest["k3"] = None

    def compacted() -> list[dict] | None:
        records = read_all(cluster.bootstrap, topic)
        keyed = [r for r in records if r["key"] != "filler"]
        return records if len(keyed) == len(latest) else None

    records = wait_for(compacted, timeout=60, what="the cleaner to compact the topic")
    offsets = [r["offset"] for r in records]
    assert offsets == sorted(set(offsets)) and offsets[-1] == 340  # offsets kept: increasing, with gaps
    assert {r["key"]: r["payload"] for r in records if r["key"] != "filler"} == latest
    assert [r["offset"] for r in records if r["key"] == "k3"] == [300]  # the tombstone, still readable

    time.sleep(4.5)  # past delete.retention.ms: the next clean may drop the tombstone
    produce(cluster.bootstrap, topic, [(b"k1", b"after")] + [(b"filler", b"y" * 100) for _ in range(40)])

    def tombstone_gone() -> list[dict] | None:
        records = read_all(cluster.bootstrap, topic)
        return records if all(r["key"] != "k3" for r in records) else None

    records = wait_for(tombstone_gone, timeout=60, what="the tombstone to be removed")
    values = {r["key"]: r["payload"] for r in records if r["key"] != "filler"}
    assert values == {**{k: v for k, v in latest.items() if k != "k3"}, "k1": "after"}
    # A consumer reading from the start still gets every surviving record, offsets increasing.
    c = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "unused",
                                  "enable.auto.commit": False})
    try:
        c.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
        seen = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not seen or seen[-1] < records[-1]["offset"]):
            m = c.poll(1.0)
            if m is not None:
                assert m.error() is None, m.error()
                seen.append(m.offset())
        assert seen == [r["offset"] for r in records]
    finally:
        c.close()


KEY_ERROR = "Compacted topic cannot accept message without key in topic partition {}-0"


@pytest.mark.parametrize("policy", ["compact", "compact,delete"])
def test_a_record_without_a_key_is_refused_by_a_compacted_topic(cluster, policy):
    topic = "keys-" + policy.replace(",", "-")
    create_topic(cluster.bootstrap, topic, configs={"cleanup.policy": policy})
    create_topic(cluster.bootstrap, "plain")
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap})
    reports = []
    for t, key in ((topic, None), (topic, b"k"), ("plain", None)):
        p.produce(t, value=b"v", key=key, partition=0, on_delivery=lambda err, msg: reports.append((msg.topic(), err)))
        assert p.flush(30) == 0
    (t1, keyless), (t2, keyed), (t3, plain) = reports
    assert keyless is not None and keyless.code() == confluent_kafka.KafkaError.INVALID_RECORD  # 87, not retried
    assert not keyless.retriable()
    assert (keyed, plain) == (None, None)
    assert [r["key"] for r in read_all(cluster.bootstrap, topic)] == ["k"]  # nothing of the refused batch stored

    # Kafka's texts, as a client sees them in the Produce response (v8+: record errors and message).
    with KafkaClient(cluster.bootstrap) as k:
        resp = k.call(ApiKey.Produce, lambda cls, v: cls(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[
            cls.TopicProduceData(name=topic, partition_data=[cls.TopicProduceData.PartitionProduceData(
                index=0, records=build_batch([(b"a", b"1", [], None), (None, b"2", [], None)]))])]))
    part = resp.responses[0].partition_responses[0]
    message = KEY_ERROR.format(topic)
    assert (part.error_code, part.base_offset) == (87, -1)
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [(1, message)]
    assert part.error_message == (
        "One or more records have been rejected due to 1 record errors in total, and only showing the first "
        f"three errors at most: [RecordError(batchIndex=1, message='{message}')]")


def _records_on_disk(partition_dir) -> list[tuple[int, str, str | None]]:
    """(offset, key, value) of every record in a partition directory's segments, as stored."""
    out = []
    for seg in sorted(partition_dir.glob("*.log")):
        data = seg.read_bytes()
        for h in iter_batches(data):
            out += [(r.offset, r.key.decode(), None if r.value is None else r.value.decode())
                    for r in read_records(data[h.position: h.position + h.size])]
    return out


def test_a_follower_catches_up_across_a_compacted_range(cluster_factory):
    cluster = cluster_factory(2, overrides=FAST_CLEANER)
    topic = "replicated"
    create_topic(cluster.bootstrap, topic, rf=2, configs=COMPACTED)

    def in_sync() -> tuple[int] | None:
        """(leader,) once both replicas are in the ISR (a tuple: leader 0 must count as found)."""
        with KafkaClient(cluster.bootstrap) as k:
            part = k.refresh_metadata([topic]).topics[0].partitions[0]
            return (part.leader_id,) if part.leader_id >= 0 and len(part.isr_nodes) == 2 else None

    (lead,) = wait_for(in_sync, what="both replicas in sync")
    follower = 1 - lead
    cluster.stop([follower])
    updates = [(b"k%d" % (i % 10), b"value-%03d" % i) for i in range(300)]
    produce(cluster.brokers[lead].address, topic, updates + [(b"filler", b"x" * 100) for _ in range(40)])
    wait_for(lambda: len(read_all(cluster.brokers[lead].address, topic)) < 100, what="the leader to compact")
    cluster.restart(follower)  # it fetches from offset 0, inside the range the leader compacted
    wait_for(in_sync, timeout=60, what="the restarted follower back in the ISR")
    on_disk = _records_on_disk(cluster.brokers[follower].data_dir / "logs" / f"{topic}-0")
    latest = {}
    for offset, key, value in on_disk:
        latest[key] = value
    assert latest == {**{k.decode(): v.decode() for k, v in updates}, "filler": "x" * 100}
    assert on_disk[-1][0] == 339 and [o for o, _, _ in on_disk] == sorted({o for o, _, _ in on_disk})
