"""A follower far behind catches up although one fetch spans several of the leader's segments.

The leader reads across segment boundaries, so a fetch can hold more bytes than segment.bytes;
the follower must append it in segment-sized runs instead of refusing it on every retry.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from support.clients import create_topic, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def test_follower_restarted_behind_many_small_segments_rejoins_the_isr(cluster_factory):
    c = cluster_factory(2)
    topic = "small-segments"
    create_topic(c.bootstrap, topic, rf=2, configs={"segment.bytes": "400", "min.insync.replicas": "1"})
    wait_for(lambda: len(partitions(c.bootstrap, topic)[0].isr) == 2, what="2 in sync")
    state = partitions(c.bootstrap, topic)[0]
    follower = next(b for b in state.replicas if b != state.leader)
    c.stop([follower])
    wait_for(lambda: list(partitions(c.bootstrap, topic)[0].isr) == [state.leader], what="the follower out of the ISR")

    p = Producer({"bootstrap.servers": c.bootstrap, "linger.ms": 0})
    for i in range(100):
        p.produce(topic, value=f"v{i}".encode(), partition=0)
        if i % 10 == 9:
            p.flush(30)  # ten batches: several 400-byte segments on the leader
    assert p.flush(30) == 0

    c.restart(follower)
    wait_for(lambda: sorted(partitions(c.bootstrap, topic)[0].isr) == sorted(state.replicas), timeout=60,
             what="the restarted follower back in the ISR")
