"""Controlled shutdown under load, and unclean election only when an operator allows it."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from pylog.zk.admin import AdminZkClient
from pylog.zk.client import ZkClient
from support.clients import create_topic, kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration

FAST = {"replica.lag.time.max.ms": "3000", "zookeeper.session.timeout.ms": "4000"}


def test_controlled_shutdown_fails_no_acks_all_produce(cluster_factory):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "cs", partitions=3, rf=3, configs={"min.insync.replicas": "2"})
    wait_for(lambda: all(len(v.isr) == 3 for v in partitions(c.bootstrap, "cs").values()), 30, "full ISRs")
    errors: list[str] = []
    acked: list[int] = []
    stop = threading.Event()

    def produce() -> None:
        p = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 5,
                                      "message.timeout.ms": 60000, "retries": 1000000})
        i = 0
        while not stop.is_set():
            p.produce("cs", value=str(i).encode(), on_delivery=lambda err, msg: (
                errors.append(str(err)) if err else acked.append(int(msg.value()))))
            i += 1
            p.poll(0.002)
        assert p.flush(60) == 0

    t = threading.Thread(target=produce)
    t.start()
    try:
        time.sleep(1.5)
        leaders = {v.leader for v in partitions(c.bootstrap, "cs").values()}
        victim = sorted(leaders)[0]
        c.brokers[victim].stop()  # SIGTERM: controlled shutdown
        log = c.brokers[victim].log_path.read_text()
        assert "Controlled shutdown of broker" in log and "succeeded" in log
        after = partitions(",".join(b.address for i, b in c.brokers.items() if i != victim), "cs")
        assert all(v.leader != victim for v in after.values())
        time.sleep(1.5)
    finally:
        stop.set()
        t.join(90)
    assert errors == []
    assert len(acked) > 100
    got = kcat(",".join(b.address for i, b in c.brokers.items() if i != victim), "-C", "-t", "cs", "-e",
               "-f", "%s\n").stdout.split()
    assert set(map(int, got)) >= set(acked)


def test_unclean_election_happens_only_when_enabled(cluster_factory, zk_connect):
    c = cluster_factory(2, overrides=FAST)
    create_topic(c.bootstrap, "uc", partitions=1, rf=2)
    view = wait_for(lambda: (v := partitions(c.bootstrap, "uc")[0]) and len(v.isr) == 2 and v, 30, "full ISR")
    leader, follower = view.leader, next(r for r in view.replicas if r != view.leader)
    c.brokers[follower].signal(signal.SIGSTOP)
    try:
        wait_for(lambda: partitions(c.brokers[leader].address, "uc")[0].isr == (leader,), 30, "ISR shrink")
        kcat(c.brokers[leader].address, "-P", "-t", "uc", "-X", "acks=all", input="only-on-leader\n")
    finally:
        c.brokers[follower].signal(signal.SIGCONT)
    c.brokers[leader].kill()
    rest = c.brokers[follower].address
    # the only live replica is out of sync: the partition stays offline
    wait_for(lambda: partitions(rest, "uc")[0].leader == -1, 30, "the partition to go offline")
    time.sleep(2)
    assert partitions(rest, "uc")[0].leader == -1
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        AdminZkClient(zk).change_entity_config("topics", "uc", {"unclean.leader.election.enable": "true"})
    finally:
        zk.close()
    view = wait_for(lambda: (v := partitions(rest, "uc")[0]) and v.leader == follower and v, 30, "unclean election")
    assert view.isr == (follower,)
    log = c.brokers[follower].log_path.read_text() + c.brokers[leader].log_path.read_text()
    assert "Unclean leader election" in log
