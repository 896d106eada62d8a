"""Transactional offset commits on a real broker, driven on the wire as a transactional producer and its
transaction coordinator would: TxnOffsetCommit stages the offsets, they stay invisible (UNSTABLE_OFFSET_COMMIT
for require_stable) until WriteTxnMarkers writes the COMMIT marker to the group's `__consumer_offsets`
partition, an ABORT drops them, and a restarted broker rebuilds the same state from the log. A stock
confluent-kafka consumer (read_committed, librdkafka's default, asks with require_stable) waits for the
open transaction and starts from the offset it commits."""

from __future__ import annotations

import time

import pytest

from pylog.client.sync import KafkaClient
from pylog.coordinator.ownership import partition_for
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode as E
from support.clients import create_topic, wait_for
from support.groups import GROUPS, committed, produce
from support.txn_wire import txn_offset_commit, write_marker

pytestmark = pytest.mark.integration

GROUP, TOPIC = "eos-g", "in"


def _init_producer_id(client: KafkaClient) -> tuple[int, int]:
    resp = client.call(ApiKey.InitProducerId, lambda cls, v: cls(transactional_id=None, transaction_timeout_ms=60000),
                       node=0)
    assert resp.error_code == E.NONE
    return resp.producer_id, resp.producer_epoch


def _txn_commit(client: KafkaClient, pid: int, epoch: int, offset: int, generation: int = -1, member: str = "") -> int:
    return txn_offset_commit(client, GROUP, TOPIC, pid, epoch, offset, generation=generation, member=member)


def _marker(client: KafkaClient, pid: int, epoch: int, commit: bool) -> int:
    return write_marker(client, "__consumer_offsets", partition_for(GROUP, 3), pid, epoch, commit)


def _fetch(client: KafkaClient, require_stable: bool, group: str = GROUP, topic: str = TOPIC) -> tuple[int, int]:
    """(error, offset) of `topic`-0 for the group, OffsetFetch v7 (the last single-group version)."""
    def build(cls, v):
        return cls(group_id=group, require_stable=require_stable,
                   topics=[cls.OffsetFetchRequestTopic(name=topic, partition_indexes=[0])])
    resp = client.call(ApiKey.OffsetFetch, build, node=0, max_version=7)
    if resp.error_code != E.NONE:
        return resp.error_code, -1
    p = resp.topics[0].partitions[0]
    return p.error_code, p.committed_offset


def _ready(client: KafkaClient) -> bool:
    return _fetch(client, False)[0] == E.NONE


def test_txn_offsets_pending_commit_abort_and_replay_after_restart(cluster_factory):
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, TOPIC)
    produce(c.bootstrap, TOPIC, [f"v{i}" for i in range(15)])
    with KafkaClient(c.bootstrap) as client:
        client.call(ApiKey.FindCoordinator, lambda cls, v: cls(key=GROUP, key_type=0), max_version=3)
        wait_for(lambda: _ready(client), 60, "the group coordinator")
        pid, epoch = _init_producer_id(client)

        assert _txn_commit(client, pid, epoch, 5) == E.NONE
        assert _fetch(client, True) == (E.UNSTABLE_OFFSET_COMMIT, -1)  # nothing committed before it
        assert _fetch(client, False) == (E.NONE, -1)  # not committed yet
        assert _marker(client, pid, epoch, True) == E.NONE
        assert _fetch(client, True) == (E.NONE, 5)

        assert _txn_commit(client, pid, epoch, 9) == E.NONE
        assert _marker(client, pid, epoch, False) == E.NONE
        assert _fetch(client, True) == (E.NONE, 5)  # the aborted transaction's offset is gone
        assert _txn_commit(client, pid, epoch, 12) == E.NONE  # left open across the restart
        assert _txn_commit(client, pid, epoch, 1, generation=3, member="zombie") == E.UNKNOWN_MEMBER_ID
    assert committed(c.bootstrap, GROUP) == {(TOPIC, 0): 5}  # confluent-kafka's AdminClient sees the same

    c.brokers[0].stop()
    c.restart(0)
    ck = pytest.importorskip("confluent_kafka")
    with KafkaClient(c.bootstrap) as client:
        wait_for(lambda: _ready(client), 60, "the offsets partition loaded")
        # replayed as still pending; the answer carries the committed offset, not -1 (bug 7: librdkafka may start
        # from it, and -1 was auto.offset.reset)
        assert _fetch(client, True) == (E.UNSTABLE_OFFSET_COMMIT, 5)
        assert _fetch(client, False) == (E.NONE, 5)
        consumer = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                                "enable.auto.commit": False})
        try:
            consumer.subscribe([TOPIC])
            early = consumer.poll(4.0)  # joins, then retries OffsetFetch while the transaction is open
            assert early is None, early.value()
            assert _marker(client, pid, epoch, True) == E.NONE
            m = None
            for _ in range(60):
                m = consumer.poll(0.5)
                if m is not None:
                    break
            assert m is not None and m.error() is None and (m.offset(), m.value()) == (12, b"v12")
        finally:
            consumer.close()
        assert _fetch(client, True) == (E.NONE, 12)


def test_confluent_send_offsets_to_transaction_commits_or_aborts_with_the_transaction(cluster_factory):
    """Consume-transform-produce with confluent-kafka at its defaults: the group's offsets move with the
    transaction that wrote the output, and stay put when it aborts."""
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides={"transaction.state.log.num.partitions": "3", **GROUPS})
    create_topic(c.bootstrap, "src")
    create_topic(c.bootstrap, "dst")
    produce(c.bootstrap, "src", [f"r{i}" for i in range(10)])
    consumer = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "ctp", "auto.offset.reset": "earliest",
                            "enable.auto.commit": False})
    producer = ck.Producer({"bootstrap.servers": c.bootstrap, "transactional.id": "ctp-app"})
    producer.init_transactions(60)
    try:
        consumer.subscribe(["src"])
        for commit in (True, False):
            got = []
            for _ in range(120):
                m = consumer.poll(0.5)
                if m is not None and m.error() is None:
                    got.append(m)
                if len(got) == 5:
                    break
            assert [m.offset() for m in got] == ([0, 1, 2, 3, 4] if commit else [5, 6, 7, 8, 9])
            producer.begin_transaction()
            for m in got:
                producer.produce("dst", value=m.value().upper())
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                 consumer.consumer_group_metadata(), 30)
            if commit:
                producer.commit_transaction(60)  # answered once PrepareCommit is logged; the markers follow
                wait_for(lambda: committed(c.bootstrap, "ctp") == {("src", 0): 5}, 30, "the COMMIT marker")
            else:
                producer.abort_transaction(60)
    finally:
        consumer.close()
    resumed = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "ctp", "enable.auto.commit": False})
    try:
        resumed.subscribe(["src"])
        first = None
        for _ in range(120):
            first = resumed.poll(0.5)
            if first is not None and first.error() is None:
                break
        # where the committed transaction left the group (librdkafka waits out an abort still in flight)
        assert first is not None and first.offset() == 5
        assert committed(c.bootstrap, "ctp") == {("src", 0): 5}
    finally:
        resumed.close()


def test_kafka_python_and_aiokafka_send_offsets_to_transaction(cluster_factory):
    """kafka-python (v3, with the group's metadata) and aiokafka (v0, a group id only) commit a group's offsets in
    a transaction; the aborted one leaves them where the committed one put them."""
    import asyncio

    kafka = pytest.importorskip("kafka")
    aiokafka = pytest.importorskip("aiokafka")
    c = cluster_factory(1, overrides={"transaction.state.log.num.partitions": "3", **GROUPS})
    create_topic(c.bootstrap, "src")
    p = kafka.KafkaProducer(bootstrap_servers=c.bootstrap, transactional_id="kp-app")
    try:
        p.init_transactions()
        for offset, commit in ((7, True), (9, False)):
            p.begin_transaction()
            p.send_offsets_to_transaction({kafka.TopicPartition("src", 0): kafka.OffsetAndMetadata(offset, "", -1)},
                                          "kp-g")
            p.commit_transaction() if commit else p.abort_transaction()
    finally:
        p.close(timeout=10)

    async def aio() -> None:
        ap = aiokafka.AIOKafkaProducer(bootstrap_servers=c.bootstrap, transactional_id="ak-app")
        await ap.start()
        try:
            for offset, commit in ((8, True), (11, False)):
                await ap.begin_transaction()
                await ap.send_offsets_to_transaction({aiokafka.TopicPartition("src", 0): offset}, "ak-g")
                await (ap.commit_transaction() if commit else ap.abort_transaction())
        finally:
            await ap.stop()

    asyncio.run(asyncio.wait_for(aio(), 90))
    wait_for(lambda: committed(c.bootstrap, "kp-g") == {("src", 0): 7} and
             committed(c.bootstrap, "ak-g") == {("src", 0): 8}, 30, "the committed transactions' offsets")
    with KafkaClient(c.bootstrap) as client:  # and the aborted ones are not pending any more
        wait_for(lambda: all(_fetch(client, True, g, "src") == (E.NONE, o) for g, o in (("kp-g", 7), ("ak-g", 8))), 30,
                 "the ABORT markers")



def test_a_rebalance_while_a_transaction_holds_the_offset_never_restarts_the_partition_from_earliest(cluster_factory):
    """Bug 7 (docs/reliability.md): a killed worker's open transaction kept partition 0's offset pending; the member
    that got partition 0 kept asking (UNSTABLE_OFFSET_COMMIT) until a rebalance changed its assignment, and
    librdkafka then started partition 0 at the offset that answer carried: -1 meant auto.offset.reset=earliest.
    The broker answers the committed offset with the error, so whichever answer librdkafka applies, partition 0
    starts at or after the committed offset 5."""
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides={**GROUPS, "group.initial.rebalance.delay.ms": "0"})
    create_topic(c.bootstrap, TOPIC, partitions=2)
    produce(c.bootstrap, TOPIC, [f"v{i}" for i in range(20)], partitions=2)
    with KafkaClient(c.bootstrap) as client:
        client.call(ApiKey.FindCoordinator, lambda cls, v: cls(key=GROUP, key_type=0), max_version=3)
        wait_for(lambda: _ready(client), 60, "the group coordinator")
        pid, epoch = _init_producer_id(client)
        assert _txn_commit(client, pid, epoch, 5) == E.NONE and _marker(client, pid, epoch, True) == E.NONE
        assert _txn_commit(client, pid, epoch, 8) == E.NONE  # a worker's transaction left open (killed)

        def member(name: str):
            m = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": GROUP, "client.id": name,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
            m.subscribe([TOPIC])
            return m

        first_of_p0: list[int] = []

        def poll(m, seconds: float) -> None:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                msg = m.poll(0.2)
                if msg is not None and msg.error() is None and msg.partition() == 0 and not first_of_p0:
                    first_of_p0.append(msg.offset())

        a = member("a")  # sorts first: the range assignor keeps partition 0 on it when b joins
        b = None
        try:
            poll(a, 4)  # joined alone, asking for partition 0's offset over and over
            b = member("b")
            poll(a, 8)  # the rebalance: a's assignment changes while its OffsetFetch is answered UNSTABLE
            b.poll(0)
            assert _marker(client, pid, epoch, False) == E.NONE  # the coordinator aborts the dead transaction
            wait_for(lambda: poll(a, 0.5) or first_of_p0, 30, "partition 0 consumed after the abort")
        finally:
            a.close()
            if b is not None:
                b.close()
    assert first_of_p0 == [5]
