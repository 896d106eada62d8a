"""ZooKeeper session expiry of a real broker: it re-registers and runs for /controller again.

The expiry is a real one: the broker is paused (SIGSTOP) until ZooKeeper has expired its session
and deleted its ephemeral znodes, then resumed, as after a long GC pause.
"""

from __future__ import annotations

import signal

import pytest

from pylog.zk import paths
from pylog.zk.client import ZkClient
from support.clients import create_topic, kcat, wait_for
from support.inspect import controller, partitions
from support.metrics import scrape, value

pytestmark = pytest.mark.integration

SESSION_MS = 3000
FAST = {"zookeeper.session.timeout.ms": str(SESSION_MS), "replica.lag.time.max.ms": "3000"}


def _owner(zk: ZkClient, path: str) -> int | None:
    stat = zk.exists(path)
    return None if stat is None else stat.ephemeralOwner


def _pause_until_expired(broker, zk: ZkClient) -> int:
    """SIGSTOP until the broker's registration is gone; returns the expired session id."""
    path = paths.broker_id(broker.broker_id)
    owner = _owner(zk, path)
    assert owner
    broker.signal(signal.SIGSTOP)
    try:
        wait_for(lambda: _owner(zk, path) != owner, 3 * SESSION_MS / 1000 + 15, "ZooKeeper to expire the session")
    finally:
        broker.signal(signal.SIGCONT)
    return owner


def test_sole_broker_reregisters_and_wins_the_controller_election_again(cluster_factory, zk_connect, zk):
    c = cluster_factory(1, overrides=FAST, prometheus=True)
    b = c.brokers[0]
    _, epoch = wait_for(lambda: (x := controller(zk_connect)) and x[0] == 0 and x, 30, "broker 0 to be controller")
    old = _pause_until_expired(b, zk)
    # /metrics counts the expiry (Kafka's SessionExpireListener ZooKeeperExpiresPerSec) and the reconnection.
    fams = wait_for(lambda: (f := scrape(b.metrics_port)) and value(
        f, "kafka_server_sessionexpirelistener_zookeepersyncconnects_total") == 2 and f, 30, "the new session in /metrics")
    assert value(fams, "kafka_server_sessionexpirelistener_zookeeperexpires_total") == 1
    assert value(fams, "pylog_zookeeper_connected") == 1
    # re-registered under a new session, and the election ran again: same broker, next epoch
    wait_for(lambda: _owner(zk, paths.broker_id(0)) not in (None, old), 30, "re-registration")
    wait_for(lambda: controller(zk_connect) == (0, epoch + 1), 30, f"broker 0 controller at epoch {epoch + 1}")
    assert _owner(zk, paths.controller()) == _owner(zk, paths.broker_id(0))
    text = b.log_path.read_text()
    assert "Re-registered broker 0 after ZooKeeper session expiry" in text
    # It gave up the old term before taking the new one.
    assert text.index(f"Broker 0 resigns as controller (epoch {epoch})") < \
        text.index(f"Broker 0 is the controller at epoch {epoch + 1}")
    # ...and it works as a controller again: a new topic gets a leader and takes records.
    create_topic(b.address, "after-expiry", partitions=2)
    kcat(b.address, "-P", "-t", "after-expiry", "-X", "acks=all", input="a\nb\n")
    assert sorted(kcat(b.address, "-C", "-t", "after-expiry", "-e", "-f", "%s\n").stdout.split()) == ["a", "b"]


def test_expired_controller_of_three_hands_over_and_rejoins_as_follower(cluster_factory, zk_connect, zk):
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "zx", partitions=3, rf=3, configs={"min.insync.replicas": "2"})
    wait_for(lambda: all(len(v.isr) == 3 for v in partitions(c.bootstrap, "zx").values()), 30, "full ISRs")
    old_id, epoch = wait_for(lambda: (x := controller(zk_connect)) and x[0] >= 0 and x, 30, "a controller")
    b = c.brokers[old_id]
    old = _pause_until_expired(b, zk)
    new_id, new_epoch = wait_for(lambda: (x := controller(zk_connect)) and x[0] not in (-1, old_id) and x, 30,
                                 "another controller")
    assert new_epoch == epoch + 1
    wait_for(lambda: _owner(zk, paths.broker_id(old_id)) not in (None, old), 30, "re-registration")
    # The zombie's partitions moved and it comes back into every ISR as a follower of the new leaders.
    wait_for(lambda: all(len(v.isr) == 3 and v.leader >= 0 for v in partitions(c.bootstrap, "zx").values()), 60,
             "full ISRs again")
    assert controller(zk_connect) == (new_id, new_epoch)  # the returning broker did not take the seat back
    text = b.log_path.read_text()
    assert "Re-registered broker" in text and f"Broker {old_id} resigns as controller" in text
    kcat(c.bootstrap, "-P", "-t", "zx", "-X", "acks=all", input="".join(f"{i}\n" for i in range(50)))
    got = kcat(c.bootstrap, "-C", "-t", "zx", "-e", "-f", "%s\n").stdout.split()
    assert sorted(map(int, got)) == list(range(50))
