"""The idempotent producer against real brokers: stock clients at their defaults, retries that the
broker must recognise (lost responses, a duplicate sent by hand), restarts and a leader kill -9."""

from __future__ import annotations

import asyncio
import glob
import os
import time

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.protocol.records import build_batch, iter_batches
from support.clients import create_topic, wait_for
from support.inspect import partitions
from support.proxy import proxied_cluster

pytestmark = pytest.mark.integration

FAST = {"replica.lag.time.max.ms": "4000", "zookeeper.session.timeout.ms": "4000",
        "auto.leader.rebalance.enable": "false"}


def log_batches(broker, topic: str, partition: int = 0):
    """The batch headers of a partition as they lie in the broker's segment files."""
    out = []
    for path in sorted(glob.glob(os.path.join(broker.data_dir, "logs", f"{topic}-{partition}", "*.log"))):
        with open(path, "rb") as f:
            out.extend(iter_batches(f.read()))
    return out


def init_producer_id(bootstrap: str) -> tuple[int, int]:
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.InitProducerId, lambda cls, v: cls(
            transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1))
    assert resp.error_code == 0
    return resp.producer_id, resp.producer_epoch


def produce(k: KafkaClient, topic: str, batch: bytes, node: int | None = None, acks: int = -1) -> tuple[int, int]:
    """(error code, base offset) of a one-partition Produce of `batch`."""
    resp = k.call(ApiKey.Produce, lambda cls, v: cls(
        transactional_id=None, acks=acks, timeout_ms=20000, topic_data=[cls.TopicProduceData(
            name=topic, partition_data=[cls.TopicProduceData.PartitionProduceData(index=0, records=batch)])]),
        node=node)
    p = resp.responses[0].partition_responses[0]
    return p.error_code, p.base_offset


def batch(pid: int, epoch: int, seq: int, n: int = 2, tag: str = "r") -> bytes:
    return build_batch([(None, f"{tag}{seq + i}".encode(), (), None) for i in range(n)],
                       producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def consume_all(bootstrap: str, topic: str, partitions_: int, expected: int) -> dict[int, list[bytes]]:
    import confluent_kafka
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions_)])
    got: dict[int, list[bytes]] = {p: [] for p in range(partitions_)}
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None:
                assert m.error() is None, m.error()
                got[m.partition()].append(m.value())
            elif sum(map(len, got.values())) >= expected:
                break  # a quiet poll after everything expected: anything extra (a duplicate) would have come
    finally:
        c.close()
    return got


def test_init_producer_id_hands_out_distinct_ids_and_refuses_bad_requests(cluster):
    ids = {init_producer_id(cluster.bootstrap) for _ in range(5)}
    assert len(ids) == 5 and all(epoch == 0 and pid >= 0 for pid, epoch in ids)
    with KafkaClient(cluster.bootstrap) as k:
        half = k.call(ApiKey.InitProducerId, lambda cls, v: cls(
            transactional_id=None, transaction_timeout_ms=60000, producer_id=7, producer_epoch=-1))
        assert half.error_code == ErrorCode.INVALID_REQUEST and half.producer_id == -1
        empty = k.call(ApiKey.InitProducerId, lambda cls, v: cls(
            transactional_id="", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1))
        assert empty.error_code == ErrorCode.INVALID_REQUEST


def test_kafka_python_default_producer_is_idempotent_and_writes_once(cluster):
    kafka = pytest.importorskip("kafka")
    create_topic(cluster.bootstrap, "kp-idem")
    prod = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap)  # defaults: idempotent, acks=all
    futures = [prod.send("kp-idem", value=f"v{i}".encode(), partition=0) for i in range(300)]
    prod.flush(30)
    assert [f.get(timeout=30).offset for f in futures] == list(range(300))
    prod.close()
    batches = log_batches(cluster.brokers[0], "kp-idem")
    assert batches and all(b.producer_id >= 0 and b.producer_epoch == 0 for b in batches)
    assert [b.base_sequence for b in batches] == [b.base_offset for b in batches]  # one producer, from seq 0
    assert consume_all(cluster.bootstrap, "kp-idem", 1, 300)[0] == [f"v{i}".encode() for i in range(300)]


def test_confluent_kafka_idempotent_producer_writes_each_record_once(cluster):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    create_topic(cluster.bootstrap, "ck-idem", partitions=3)
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True,
                                  "linger.ms": 5})
    errors = []
    for i in range(600):
        p.produce("ck-idem", value=f"v{i}".encode(), partition=i % 3,
                  on_delivery=lambda err, msg: err and errors.append(err))
    assert p.flush(30) == 0 and not errors
    got = consume_all(cluster.bootstrap, "ck-idem", 3, 600)
    assert got == {part: [f"v{i}".encode() for i in range(part, 600, 3)] for part in range(3)}
    assert all(b.producer_id >= 0 for part in range(3) for b in log_batches(cluster.brokers[0], "ck-idem", part))


def test_aiokafka_idempotent_producer(cluster):
    aiokafka = pytest.importorskip("aiokafka")
    create_topic(cluster.bootstrap, "aio-idem")

    async def run():
        prod = aiokafka.AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, enable_idempotence=True)
        await prod.start()
        try:
            return [(await prod.send_and_wait("aio-idem", value=f"v{i}".encode(), partition=0)).offset
                    for i in range(20)]
        finally:
            await prod.stop()

    assert asyncio.run(run()) == list(range(20))
    assert all(b.producer_id >= 0 for b in log_batches(cluster.brokers[0], "aio-idem"))


def test_duplicate_batch_gets_its_original_offset_and_sequence_errors(cluster):
    create_topic(cluster.bootstrap, "dup")
    pid, epoch = init_producer_id(cluster.bootstrap)
    with KafkaClient(cluster.bootstrap) as k:
        first = batch(pid, epoch, 0)
        assert produce(k, "dup", first) == (0, 0)
        assert produce(k, "dup", batch(pid, epoch, 2)) == (0, 2)
        assert produce(k, "dup", first) == (0, 0)  # a retry: original offset, nothing appended
        assert produce(k, "dup", batch(pid, epoch, 7))[0] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert produce(k, "dup", batch(pid, epoch + 1, 0)) == (0, 4)  # a new epoch starts at 0
        assert produce(k, "dup", batch(pid, epoch, 4))[0] == ErrorCode.INVALID_PRODUCER_EPOCH
    assert [b.base_offset for b in log_batches(cluster.brokers[0], "dup")] == [0, 2, 4]


def test_lost_produce_responses_are_retried_without_duplicates(zk_connect, tmp_path):
    kafka = pytest.importorskip("kafka")
    with proxied_cluster(zk_connect, tmp_path, drop=3) as (c, proxy, _):
        create_topic(c.bootstrap, "lost")
        prod = kafka.KafkaProducer(bootstrap_servers=f"127.0.0.1:{proxy.port}", linger_ms=20)
        futures = [prod.send("lost", value=f"v{i}".encode(), partition=0) for i in range(200)]
        prod.flush(60)
        offsets = [f.get(timeout=60).offset for f in futures]
        prod.close()
        assert proxy.dropped == 3  # the broker appended, the client never heard, and retried
        assert offsets == list(range(200))
        assert consume_all(c.bootstrap, "lost", 1, 200)[0] == [f"v{i}".encode() for i in range(200)]


@pytest.mark.parametrize("how", ["clean", "kill"])
def test_state_survives_a_broker_restart(cluster, how):
    create_topic(cluster.bootstrap, "restart", configs={"segment.bytes": "1000"})
    pid, epoch = init_producer_id(cluster.bootstrap)
    with KafkaClient(cluster.bootstrap) as k:
        for seq in range(0, 40, 2):  # several segments: snapshots on roll, then a tail to replay
            assert produce(k, "restart", batch(pid, epoch, seq, tag="x" * 40))[0] == 0
    b = cluster.brokers[0]
    b.kill() if how == "kill" else b.stop()
    cluster.restart(0)
    assert glob.glob(os.path.join(b.data_dir, "logs", "restart-0", "*.snapshot"))
    with KafkaClient(cluster.bootstrap) as k:
        # Kafka's snapshot keeps each producer's last batch: that retry is always recognised
        wait_for(lambda: produce(k, "restart", batch(pid, epoch, 38, tag="x" * 40)) == (0, 38), 30,
                 "the retried last batch answered with its original offset")
        assert produce(k, "restart", batch(pid, epoch, 41))[0] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert produce(k, "restart", batch(pid, epoch, 40)) == (0, 40)
    assert [h.base_offset for h in log_batches(b, "restart")] == list(range(0, 42, 2))


def test_state_survives_leader_failover(cluster_factory):
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "fo-idem", rf=3, configs={"min.insync.replicas": "2"})
    view = wait_for(lambda: (v := partitions(c.bootstrap, "fo-idem")[0]) and len(v.isr) == 3 and v, 30, "full ISR")
    pid, epoch = init_producer_id(c.bootstrap)
    with KafkaClient(c.bootstrap) as k:
        for seq in range(0, 20, 2):
            assert produce(k, "fo-idem", batch(pid, epoch, seq), node=view.leader) == (0, seq)
    c.brokers[view.leader].kill()
    rest = ",".join(b.address for i, b in c.brokers.items() if i != view.leader)
    new = wait_for(lambda: (v := partitions(rest, "fo-idem")[0]) and v.leader not in (-1, view.leader) and v, 30,
                   "a new leader")
    with KafkaClient(rest) as k:
        k.refresh_metadata()
        # the new leader learned the producer's batches by replication: the retry is recognised
        assert produce(k, "fo-idem", batch(pid, epoch, 18), node=new.leader) == (0, 18)
        assert produce(k, "fo-idem", batch(pid, epoch, 21), node=new.leader)[0] == \
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert produce(k, "fo-idem", batch(pid, epoch, 20), node=new.leader) == (0, 20)
    assert [h.base_offset for h in log_batches(c.brokers[new.leader], "fo-idem")] == list(range(0, 22, 2))


def test_kafka_python_producer_through_a_leader_kill_writes_each_record_once(cluster_factory):
    kafka = pytest.importorskip("kafka")
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "fo-client", rf=3, configs={"min.insync.replicas": "2"})
    view = wait_for(lambda: (v := partitions(c.bootstrap, "fo-client")[0]) and len(v.isr) == 3 and v, 30,
                    "full ISR")
    prod = kafka.KafkaProducer(bootstrap_servers=c.bootstrap, linger_ms=5, request_timeout_ms=10000)
    try:
        futures = [prod.send("fo-client", value=f"v{i}".encode(), partition=0) for i in range(300)]
        wait_for(lambda: futures[100].is_done, 30, "the first records acknowledged")
        c.brokers[view.leader].kill()
        futures += [prod.send("fo-client", value=f"v{i}".encode(), partition=0) for i in range(300, 600)]
        prod.flush(90)
        offsets = [f.get(timeout=90).offset for f in futures]
    finally:
        prod.close(10)
    assert offsets == list(range(600))
    rest = ",".join(b.address for i, b in c.brokers.items() if i != view.leader)
    assert consume_all(rest, "fo-client", 1, 600)[0] == [f"v{i}".encode() for i in range(600)]


def test_idle_producer_ids_expire(cluster_factory):
    c = cluster_factory(1, overrides={"producer.id.expiration.ms": "1500",
                                      "producer.id.expiration.check.interval.ms": "200"})
    create_topic(c.bootstrap, "expiry")
    pid, epoch = init_producer_id(c.bootstrap)
    with KafkaClient(c.bootstrap) as k:
        first = batch(pid, epoch, 0)
        assert produce(k, "expiry", first) == (0, 0)
        assert produce(k, "expiry", first) == (0, 0)  # still remembered: a duplicate
        # once expired the producer is unknown: the same batch is a new write (KIP-360: any sequence)
        wait_for(lambda: produce(k, "expiry", batch(pid, epoch, 0))[1] == 2, 20, "the producer id to expire")
    assert [h.base_offset for h in log_batches(c.brokers[0], "expiry")] == [0, 2]


def test_describe_producers_lists_the_partitions_producers(cluster):
    create_topic(cluster.bootstrap, "desc", partitions=2)
    pid, epoch = init_producer_id(cluster.bootstrap)
    with KafkaClient(cluster.bootstrap) as k:
        assert produce(k, "desc", batch(pid, epoch, 0, n=3)) == (0, 0)
        resp = k.call(ApiKey.DescribeProducers, lambda cls, v: cls(topics=[
            cls.TopicRequest(name="desc", partition_indexes=[0, 1]),
            cls.TopicRequest(name="missing", partition_indexes=[0])]))
    desc, missing = resp.topics
    p0, p1 = desc.partitions
    assert p0.error_code == 0 and [(s.producer_id, s.producer_epoch, s.last_sequence, s.current_txn_start_offset)
                                   for s in p0.active_producers] == [(pid, epoch, 2, -1)]
    assert p0.active_producers[0].last_timestamp > 0
    assert p1.error_code == 0 and p1.active_producers == []
    assert missing.partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_confluent_kafka_idempotent_producer_through_a_leader_kill_writes_each_record_once(cluster_factory):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "fo-ck", rf=3, configs={"min.insync.replicas": "2"})
    view = wait_for(lambda: (v := partitions(c.bootstrap, "fo-ck")[0]) and len(v.isr) == 3 and v, 30, "full ISR")
    p = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap, "enable.idempotence": True, "linger.ms": 5,
                                  "message.timeout.ms": 90000})
    delivered: list[int] = []
    errors: list = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            delivered.append(msg.offset())

    for i in range(300):
        p.produce("fo-ck", value=f"v{i}".encode(), partition=0, on_delivery=on_delivery)
    wait_for(lambda: p.poll(0.1) is not None and len(delivered) >= 100, 30, "the first records acknowledged")
    c.brokers[view.leader].kill()
    for i in range(300, 600):
        p.produce("fo-ck", value=f"v{i}".encode(), partition=0, on_delivery=on_delivery)
    assert p.flush(90) == 0
    assert not errors  # no fatal "sequence desynchronization", nothing given up on
    assert sorted(delivered) == list(range(600))
    rest = ",".join(b.address for i, b in c.brokers.items() if i != view.leader)
    assert consume_all(rest, "fo-ck", 1, 600)[0] == [f"v{i}".encode() for i in range(600)]
