"""kafka-python's and aiokafka's transactional producers at their defaults: a committed transaction is
seen by read_committed consumers, an aborted one only by read_uncommitted ones."""

from __future__ import annotations

import asyncio

import pytest

from support.clients import create_topic
from support.txn import TXN, read_all

pytestmark = pytest.mark.integration


def test_kafka_python_commit_and_abort(cluster_factory):
    kafka = pytest.importorskip("kafka")
    cluster = cluster_factory(1, overrides=TXN)
    create_topic(cluster.bootstrap, "kp", partitions=2)
    p = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap, transactional_id="kp-app")
    try:
        p.init_transactions()
        p.begin_transaction()
        p.send("kp", b"kept-0", partition=0)
        p.send("kp", b"kept-1", partition=1)
        p.commit_transaction()
        p.begin_transaction()
        p.send("kp", b"dropped", partition=0)
        p.flush()
        p.abort_transaction()
    finally:
        p.close(timeout=10)
    assert sorted(read_all(cluster.bootstrap, {"kp": 2}, None, 2)) == [b"kept-0", b"kept-1"]
    assert sorted(read_all(cluster.bootstrap, {"kp": 2}, "read_uncommitted", 3)) == [b"dropped", b"kept-0", b"kept-1"]


def test_aiokafka_commit_and_abort(cluster_factory):
    aiokafka = pytest.importorskip("aiokafka")
    cluster = cluster_factory(1, overrides=TXN)
    create_topic(cluster.bootstrap, "ak", partitions=2)

    async def run() -> None:
        p = aiokafka.AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, transactional_id="ak-app")
        await p.start()
        try:
            async with p.transaction():
                await p.send_and_wait("ak", b"kept-0", partition=0)
                await p.send_and_wait("ak", b"kept-1", partition=1)
            await p.begin_transaction()
            await p.send_and_wait("ak", b"dropped", partition=1)
            await p.abort_transaction()
        finally:
            await p.stop()

    asyncio.run(asyncio.wait_for(run(), 90))
    assert sorted(read_all(cluster.bootstrap, {"ak": 2}, None, 2)) == [b"kept-0", b"kept-1"]
    assert sorted(read_all(cluster.bootstrap, {"ak": 2}, "read_uncommitted", 3)) == [b"dropped", b"kept-0", b"kept-1"]
