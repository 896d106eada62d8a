"""Helpers for transaction integration tests: reading topics back as read_committed and read_uncommitted."""

from __future__ import annotations

import time

import pytest

# A broker setting, not a client default: fewer __transaction_state partitions make the first
# FindCoordinator quicker (the coordinator of an id is still the leader of abs(hash) % count).
TXN = {"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3"}


def read_all(bootstrap: str, topics: dict[str, int], isolation: str | None, n_expected: int,
             timeout: float = 30) -> list[bytes]:
    """Every value of the topics' partitions with confluent-kafka (isolation None: librdkafka's default,
    read_committed); stops once n_expected values came and nothing more arrives, or at timeout."""
    ck = pytest.importorskip("confluent_kafka")
    conf = {"bootstrap.servers": bootstrap, "group.id": "txn-reader", "enable.auto.commit": False}
    if isolation is not None:
        conf["isolation.level"] = isolation
    c = ck.Consumer(conf)
    try:
        c.assign([ck.TopicPartition(t, p, 0) for t, n in topics.items() for p in range(n)])
        out: list[bytes] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                if len(out) >= n_expected:
                    break
                continue
            if m.error() is None:
                out.append(m.value())
        return out
    finally:
        c.close()


def stable_end(bootstrap: str, topic: str, partition: int = 0) -> int:
    """The partition's end offset as a read_committed consumer (librdkafka's default) is told it: the LSO."""
    ck = pytest.importorskip("confluent_kafka")
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "txn-lso"})
    try:
        return c.get_watermark_offsets(ck.TopicPartition(topic, partition), timeout=10, cached=False)[1]
    finally:
        c.close()


def coordinator_of(bootstrap: str, transactional_id: str) -> int:
    """The broker id FindCoordinator names for a transactional id (waits while the topic is being created)."""
    from pylog.client.sync import KafkaClient
    from pylog.protocol.api import ApiKey

    deadline = time.monotonic() + 60
    with KafkaClient(bootstrap) as k:
        while True:
            resp = k.call(ApiKey.FindCoordinator, lambda cls, v: cls(key=transactional_id, key_type=1), max_version=3)
            if resp.error_code == 0:
                return resp.node_id
            assert time.monotonic() < deadline, f"no coordinator for {transactional_id}: error {resp.error_code}"
            time.sleep(0.2)


def kafka_python_commit(bootstrap: str, transactional_id: str, topic: str, value: bytes) -> None:
    """One record in one committed transaction of kafka-python's transactional producer (its defaults)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, value).get(30)
        producer.commit_transaction()
    finally:
        producer.close()
