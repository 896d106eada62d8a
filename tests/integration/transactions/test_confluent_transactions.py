"""confluent-kafka's transactional Producer at its defaults against real brokers: commit and abort
across two topics and partitions, as read_committed (librdkafka's default) and read_uncommitted
consumers see them; and zombie fencing by a second producer of the same transactional.id."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException, Producer

from support.clients import create_topic
from support.txn import TXN, read_all

pytestmark = pytest.mark.integration


def _producer(bootstrap: str, tid: str) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    p.init_transactions(60)
    return p


def test_commit_and_abort_across_topics(cluster_factory):
    cluster = cluster_factory(1, overrides=TXN)
    create_topic(cluster.bootstrap, "a", partitions=2)
    create_topic(cluster.bootstrap, "b", partitions=1)
    p = _producer(cluster.bootstrap, "app-1")
    p.begin_transaction()
    for i, (topic, part) in enumerate([("a", 0), ("a", 1), ("b", 0)]):
        p.produce(topic, value=f"committed-{i}".encode(), partition=part)
    p.commit_transaction(60)
    p.begin_transaction()
    for i, (topic, part) in enumerate([("a", 0), ("b", 0)]):
        p.produce(topic, value=f"aborted-{i}".encode(), partition=part)
    p.flush(30)  # the records are in the logs before the abort, so read_uncommitted sees them
    p.abort_transaction(60)
    p.begin_transaction()
    p.produce("a", value=b"after", partition=1)
    p.commit_transaction(60)

    topics = {"a": 2, "b": 1}
    committed = sorted(read_all(cluster.bootstrap, topics, None, 4))
    assert committed == [b"after", b"committed-0", b"committed-1", b"committed-2"]
    everything = sorted(read_all(cluster.bootstrap, topics, "read_uncommitted", 6))
    assert everything == [b"aborted-0", b"aborted-1", b"after", b"committed-0", b"committed-1", b"committed-2"]


def test_a_second_producer_fences_the_first(cluster_factory):
    cluster = cluster_factory(1, overrides=TXN)
    create_topic(cluster.bootstrap, "t", partitions=1)
    zombie = _producer(cluster.bootstrap, "fenced-app")
    zombie.begin_transaction()
    zombie.produce("t", value=b"zombie", partition=0)
    zombie.flush(30)
    successor = _producer(cluster.bootstrap, "fenced-app")  # aborts the zombie's open transaction
    successor.begin_transaction()
    successor.produce("t", value=b"successor", partition=0)
    successor.commit_transaction(60)
    with pytest.raises(KafkaException) as failed:
        zombie.commit_transaction(30)
    assert failed.value.args[0].fatal(), failed.value.args[0]
    assert read_all(cluster.bootstrap, {"t": 1}, None, 1) == [b"successor"]
    assert sorted(read_all(cluster.bootstrap, {"t": 1}, "read_uncommitted", 2)) == [b"successor", b"zombie"]
