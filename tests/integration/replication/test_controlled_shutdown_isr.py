"""A broker in controlled shutdown hands its leaderships over and does not come back into any ISR.

Before the fix the broker was sent the new LeaderAndIsr, followed the new leader for the moments
it had left, was added back to the ISR, and acks=all then waited on a stopped broker until
replica.lag.time.max.ms (scripts/bench replication_failover saw 15 s stalls).
"""

from __future__ import annotations

import threading
import time

import pytest

from pylog.zk.client import ZkClient
from support.clients import create_topic, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration
confluent_kafka = pytest.importorskip("confluent_kafka")

LAG_MS = 5000


def test_stopping_leader_is_not_told_to_follow_and_acks_keep_flowing(cluster_factory, zk_connect):
    c = cluster_factory(3, overrides={"replica.lag.time.max.ms": str(LAG_MS), "zookeeper.session.timeout.ms": "6000"})
    create_topic(c.bootstrap, "cs-isr", partitions=3, rf=3, configs={"min.insync.replicas": "2"})
    wait_for(lambda: all(len(v.isr) == 3 for v in partitions(c.bootstrap, "cs-isr").values()), 30, "full ISRs")
    victim = partitions(c.bootstrap, "cs-isr")[0].leader
    acks: list[float] = []
    stop = threading.Event()

    def produce() -> None:
        p = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 0,
                                      "message.timeout.ms": 60000, "log_level": 2})
        while not stop.is_set():
            for part in range(3):
                p.produce("cs-isr", b"x", partition=part,
                          on_delivery=lambda err, _m: err or acks.append(time.monotonic()))
            p.poll(0.005)
        p.flush(60)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    try:
        wait_for(lambda: len(acks) > 100, 30, "records flowing")
        c.brokers[victim].stop()  # SIGTERM: controlled shutdown
        stopped_at = time.monotonic()
        time.sleep(LAG_MS / 1000 + 2)  # long enough for a stall to show
    finally:
        stop.set()
        t.join(90)
    log = c.brokers[victim].log_path.read_text()
    after = log[log.index("shutting down"):]
    assert f"Broker {victim} follows" not in after and f"Broker {victim} is leader" not in after
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        states = zk.get_partition_states([("cs-isr", p) for p in range(3)])
    finally:
        zk.close()
    assert all(victim not in st.isr and st.leader not in (-1, victim) for st in states.values()), states
    later = [a for a in acks if a > stopped_at]
    gaps = [b - a for a, b in zip([stopped_at] + later, later)]
    assert later and max(gaps) < LAG_MS / 1000 / 2, f"acks=all stalled for {max(gaps):.1f}s"
