"""KIP-848 (`group.protocol=consumer`) with confluent-kafka's defaults otherwise: the broker assigns the partitions
and members reconcile through ConsumerGroupHeartbeat."""

from __future__ import annotations

import time

import pytest

from support.clients import create_topic, wait_for
from support.groups import GROUPS, produce

pytestmark = pytest.mark.integration

# Broker settings (Kafka's keys): sessions short enough for a test to see a killed member expire.
KIP848 = {**GROUPS, "group.consumer.min.session.timeout.ms": "6000", "group.consumer.session.timeout.ms": "6000",
          "group.consumer.min.heartbeat.interval.ms": "500", "group.consumer.heartbeat.interval.ms": "500"}


def _consumer(bootstrap: str, group: str, **extra):
    ck = pytest.importorskip("confluent_kafka")
    return ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                        "auto.offset.reset": "earliest", **extra})


def _poll_all(consumers: dict, seen: dict, want: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while sum(len(v) for v in seen.values()) < want and time.monotonic() < deadline:
        for name, c in consumers.items():
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                seen[name].append((m.partition(), m.offset()))


def test_three_members_share_a_topic_and_read_each_record_once(cluster_factory):
    c = cluster_factory(1, overrides=KIP848)
    create_topic(c.bootstrap, "shared", partitions=6)
    produce(c.bootstrap, "shared", [f"v{i}" for i in range(300)], 6)
    consumers = {n: _consumer(c.bootstrap, "g3", **{"client.id": n}) for n in ("a", "b", "c")}
    try:
        for cons in consumers.values():
            cons.subscribe(["shared"])
        seen: dict[str, list] = {n: [] for n in consumers}

        def three_way():
            _poll_all(consumers, seen, 10**9, 0.5)
            return all(len(cons.assignment()) == 2 for cons in consumers.values())
        wait_for(three_way, 60, "each of three members to own two of the six partitions")
        _poll_all(consumers, seen, 300, 60)
        got = [r for v in seen.values() for r in v]
        assert len(got) == 300 and len(set(got)) == 300
        owners = {p: n for n, v in seen.items() for p, _ in v}
        assert sorted(owners) == list(range(6))
    finally:
        for cons in consumers.values():
            cons.close()
