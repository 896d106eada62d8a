"""A restarted exactly-once query fences the transactions its killed run left open (txn_sink.fence_orphans), so its
tasks' read_committed reads of the commit topic do not wait out transaction.timeout.ms; transactions its own run
began are left alone. Real broker, real transactional producers (confluent-kafka), no Spark needed."""
from __future__ import annotations

import time

import pytest

from support.clients import create_topic
from support.txn import TXN

pytestmark = [pytest.mark.integration]


def _open_transaction(bootstrap: str, tid: str, topic: str):
    """A confluent-kafka transactional producer with one record in an open transaction (kept open)."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(topic, value=tid.encode(), partition=0)
    assert p.flush(30) == 0
    return p


def _lso(bootstrap: str, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "lso"})  # read_committed: its default
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), 10, cached=False)[1]
    finally:
        c.close()


def test_orphans_of_an_earlier_run_are_aborted_and_this_run_s_are_not(cluster_factory):
    from pylog.spark.options import parse_sink_options
    from pylog.spark.txn_sink import fence_orphans
    c = cluster_factory(1, overrides=TXN)
    create_topic(c.bootstrap, "commits", partitions=1)
    opts = parse_sink_options({"kafka.bootstrap.servers": c.bootstrap, "topic": "out"})
    orphans = [_open_transaction(c.bootstrap, f"pylog-spark-query-q1-{p}", "commits") for p in (1, 2)]
    other_query = _open_transaction(c.bootstrap, "pylog-spark-query-q2-1", "commits")
    time.sleep(0.05)  # this run's writer is made after the killed run's transactions began
    since = int(time.time() * 1000)
    time.sleep(0.05)
    live = _open_transaction(c.bootstrap, "pylog-spark-query-q1-3", "commits")
    assert _lso(c.bootstrap, "commits") == 0  # the orphans hold read_committed readers at offset 0

    fenced = fence_orphans(opts, "query-q1", "pylog-spark-query-q1-0", since)

    assert fenced == ["pylog-spark-query-q1-1", "pylog-spark-query-q1-2"]
    # The other query's and this run's transactions are untouched: they still commit.
    for p in (other_query, live):
        p.commit_transaction(30)
    # Nothing older is open any more: the last stable offset reaches the end of the log at once.
    from confluent_kafka import Consumer, TopicPartition
    hw = Consumer({"bootstrap.servers": c.bootstrap, "group.id": "hw", "isolation.level": "read_uncommitted"})
    try:
        end = hw.get_watermark_offsets(TopicPartition("commits", 0), 10, cached=False)[1]
    finally:
        hw.close()
    assert _lso(c.bootstrap, "commits") == end
    assert fence_orphans(opts, "query-q1", "pylog-spark-query-q1-0", since) == []  # once per worker and run
    for p in orphans:
        p.flush(1)
