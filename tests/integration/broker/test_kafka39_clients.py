"""Kafka 3.9's client API versions as real clients negotiate them (a proxy records each request's version).

confluent-kafka (librdkafka 2.16) sends Fetch v16 and ListGroups v5; kafka-python 3.0 sends Fetch v12
(with its last fetched epoch), ApiVersions v4, FindCoordinator v6, ListOffsets v9 (also for the earliest-local
and latest-tiered specs), ListGroups v5 (type filter) and ListTransactions v1 (duration filter). Versions no
client in reach sends (Produce 11, Fetch 13-15 and 17, ListOffsets 8) are in test_kafka39_wire.py.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, OffsetSpec

from support.clients import create_topic, wait_for
from support.proxy import proxied_cluster

pytestmark = pytest.mark.integration

FETCH, LIST_OFFSETS, FIND_COORDINATOR, LIST_GROUPS, API_VERSIONS, LIST_TRANSACTIONS = 1, 2, 10, 16, 18, 66


@pytest.fixture
def proxied(zk_connect, tmp_path):
    """A one-broker cluster that clients reach only through a recording proxy: (cluster, proxy, bootstrap)."""
    with proxied_cluster(zk_connect, tmp_path) as got:
        yield got


def _confluent_group_read(bootstrap: str, topic: str, n: int) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ck39", "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < n and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
    finally:
        c.close()
    return got


def test_confluent_kafka_fetches_at_v16_and_lists_groups_at_v5(proxied):
    c, proxy, bootstrap = proxied
    create_topic(c.bootstrap, "ck39")
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        p.produce("ck39", value=b"v%d" % i, partition=0)
    assert p.flush(30) == 0
    assert _confluent_group_read(bootstrap, "ck39", 10) == [b"v%d" % i for i in range(10)]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    listed = admin.list_consumer_groups().result(30)
    assert [g.group_id for g in listed.valid] == ["ck39"] and not listed.errors
    assert (FETCH, 16) in proxy.requests and (LIST_GROUPS, 5) in proxy.requests


def test_kafka_python_sends_kafka_39s_versions(proxied):
    c, proxy, bootstrap = proxied
    create_topic(c.bootstrap, "kp39")
    prod = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(10):
        prod.send("kp39", b"v%d" % i, partition=0)
    prod.flush(30)
    prod.close()
    cons = KafkaConsumer("kp39", bootstrap_servers=bootstrap, group_id="kp39", auto_offset_reset="earliest",
                         consumer_timeout_ms=10000)
    try:
        got = []
        for m in cons:
            got.append(m.value)
            if len(got) == 10:
                break
        cons.commit()
    finally:
        cons.close()
    assert got == [b"v%d" % i for i in range(10)]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        tp = TopicPartition("kp39", 0)
        admin.delete_records({tp: 3})
        offsets = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST_LOCAL})
        assert offsets[tp].offset == 3  # without remote storage the local log is the whole log
        tiered = admin.list_partition_offsets({tp: OffsetSpec.LATEST_TIERED})[tp]
        assert (tiered.offset, tiered.leader_epoch) == (-1, None)  # nothing is tiered (kafka-python: epoch -1 is None)
        assert [g["group_id"] for g in admin.list_groups(types_filter=["classic"])] == ["kp39"]
        assert admin.list_groups(types_filter=["consumer"]) == []  # no KIP-848 group here
        _duration_filter(admin, bootstrap)
    finally:
        admin.close()
    for api_version in ((FETCH, 12), (API_VERSIONS, 4), (FIND_COORDINATOR, 6), (LIST_OFFSETS, 9), (LIST_GROUPS, 5),
                        (LIST_TRANSACTIONS, 1)):
        assert api_version in proxy.requests, api_version


def _duration_filter(admin: KafkaAdminClient, bootstrap: str) -> None:
    """KIP-994: only transactions running longer than the filter are listed."""
    txn = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="kp39-txn")
    try:
        txn.init_transactions()
        txn.begin_transaction()
        txn.send("kp39", b"open", partition=0).get(30)
        started = time.monotonic()
        ids = lambda ms: sorted(t.transactional_id for listings in admin.list_transactions(  # noqa: E731
            duration_filter_ms=ms).values() for t in listings)
        wait_for(lambda: ids(200) == ["kp39-txn"], 30, "the open transaction listed once older than 200 ms")
        assert time.monotonic() - started > 0.2
        assert ids(600_000) == []  # not running for ten minutes
        assert ids(-1) == ["kp39-txn"]
        txn.commit_transaction()
    finally:
        txn.close()
