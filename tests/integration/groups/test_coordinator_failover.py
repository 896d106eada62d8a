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


def test_committed_offsets_follow_a_reassignment_of_the_offsets_partition(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    from pylog.cli.admin_client import BrokerAdmin
    from pylog.coordinator.group.hashing import partition_for

    c = cluster_factory(3, overrides=GROUPS)  # offsets RF 1: the move leaves nothing behind on the old broker
    create_topic(c.bootstrap, "mv", partitions=1, rf=3)
    produce(c.bootstrap, "mv", [f"r{i}" for i in range(20)])
    conf = {"bootstrap.servers": c.bootstrap, "group.id": "mv-g", "auto.offset.reset": "earliest"}
    first = ck.Consumer(conf)
    first.subscribe(["mv"])
    seen = poll_values(first, 12)
    first.close()
    assert committed(c.bootstrap, "mv-g") == {("mv", 0): 12}
    p = partition_for("mv-g", 3)
    old = partitions(c.bootstrap, "__consumer_offsets")[p].leader
    target = next(b for b in c.brokers if b != old)
    admin = BrokerAdmin(c.bootstrap)
    try:
        assert admin.alter_partition_reassignments({("__consumer_offsets", p): [target]}) == {
            ("__consumer_offsets", p): None}
    finally:
        admin.close()
    wait_for(lambda: (v := partitions(c.bootstrap, "__consumer_offsets")[p]) and v.leader == target
             and list(v.replicas) == [target], 60, f"__consumer_offsets-{p} moved to broker {target}")
    wait_for(lambda: describe(c.bootstrap, "mv-g").coordinator.id == target, 30, "the coordinator to follow")
    assert committed(c.bootstrap, "mv-g") == {("mv", 0): 12}
    second = ck.Consumer(conf)
    second.subscribe(["mv"])
    try:
        assert sorted(seen + poll_values(second, 8)) == sorted(f"r{i}" for i in range(20))
    finally:
        second.close()
