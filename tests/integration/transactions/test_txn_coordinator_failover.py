"""kill -9 of the transaction coordinator's broker in a 3-broker cluster mid-transaction: the leader
of its `__transaction_state` partition takes over, loads the open transaction from the log, and the
producer (confluent-kafka at its defaults) commits it there; read_committed consumers see it whole."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from support.clients import create_topic
from support.txn import TXN, coordinator_of, read_all

pytestmark = pytest.mark.integration


def test_commit_survives_the_coordinator_s_death(cluster_factory):
    cluster = cluster_factory(3, overrides=TXN)
    create_topic(cluster.bootstrap, "t", partitions=3, rf=3)
    p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "survivor"})
    p.init_transactions(60)
    p.begin_transaction()
    for i in range(3):
        p.produce("t", value=f"before-{i}".encode(), partition=i)
    assert p.flush(30) == 0
    old = coordinator_of(cluster.bootstrap, "survivor")
    cluster.brokers[old].kill()
    for i in range(3):
        p.produce("t", value=f"after-{i}".encode(), partition=i)
    p.commit_transaction(90)
    assert coordinator_of(cluster.bootstrap, "survivor") != old
    expected = sorted(f"{w}-{i}".encode() for w in ("before", "after") for i in range(3))
    assert sorted(read_all(cluster.bootstrap, {"t": 3}, None, 6, timeout=60)) == expected
