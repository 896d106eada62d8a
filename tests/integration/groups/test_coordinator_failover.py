"""Committed offsets outlive the group's coordinator: kill -9 of the broker leading the group's
`__consumer_offsets` partition, and a consumer restarted elsewhere resumes where the group committed."""

from __future__ import annotations

import pytest

from support.clients import create_topic, wait_for
from support.inspect import partitions
from support.groups import GROUPS, committed, describe, poll_values, produce

pytestmark = pytest.mark.integration

FAST = {"zookeeper.session.timeout.ms": "4000", "replica.lag.time.max.ms": "4000",
        "auto.leader.rebalance.enable": "false", "offsets.topic.replication.factor": "3"}


def test_committed_offsets_survive_kill_9_of_the_coordinator(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(3, overrides={**GROUPS, **FAST})
    create_topic(c.bootstrap, "dur", partitions=2, rf=3)
    values = [f"d{i}" for i in range(100)]
    produce(c.bootstrap, "dur", values, 2)
    conf = {"bootstrap.servers": c.bootstrap, "group.id": "dur-g", "auto.offset.reset": "earliest"}
    first = ck.Consumer(conf)
    first.subscribe(["dur"])
    seen = poll_values(first, 60)
    first.close()  # commits the 60 consumed records' positions
    offsets = partitions(c.bootstrap, "__consumer_offsets")
    assert len(offsets) == 3 and all(len(p.replicas) == 3 for p in offsets.values())
    wait_for(lambda: all(len(p.isr) == 3 for p in partitions(c.bootstrap, "__consumer_offsets").values()), 30,
             "full ISRs of __consumer_offsets")
    before = committed(c.bootstrap, "dur-g")
    assert sum(before.values()) == 60
    victim = describe(c.bootstrap, "dur-g").coordinator.id
    c.brokers[victim].kill()
    rest = ",".join(b.address for i, b in c.brokers.items() if i != victim)
    wait_for(lambda: describe(rest, "dur-g").coordinator.id != victim, 60, "a new coordinator for dur-g")
    assert committed(rest, "dur-g") == before  # loaded from the log by the new leader
    second = ck.Consumer({**conf, "bootstrap.servers": rest})
    second.subscribe(["dur"])
    try:
        rest_values = poll_values(second, 40)
        assert sorted(seen + rest_values) == sorted(values)  # nothing lost, nothing consumed twice
        assert second.poll(1.0) is None
    finally:
        second.close()
    assert committed(rest, "dur-g") == {("dur", 0): 50, ("dur", 1): 50}
