"""Three real brokers: leaders fail over in assignment order, replicas rejoin, the controller moves."""

from __future__ import annotations

import pytest

from support.clients import create_topic, kcat, wait_for
from support.inspect import controller, partitions

pytestmark = pytest.mark.integration

# No auto leader rebalance: its first check (5 s after a controller failover) would move leadership
# back to a restarted preferred replica while a test still asserts who leads.
FAST = {"replica.lag.time.max.ms": "4000", "zookeeper.session.timeout.ms": "4000",
        "auto.leader.rebalance.enable": "false"}


def _others(cluster, dead: int) -> str:
    return ",".join(b.address for i, b in cluster.brokers.items() if i != dead)


def test_leader_kill_elects_next_isr_replica_in_assignment_order_and_it_rejoins(cluster_factory):
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "fo", partitions=3, rf=3, configs={"min.insync.replicas": "2"})
    kcat(c.bootstrap, "-P", "-t", "fo", "-X", "acks=all", input="".join(f"{i}\n" for i in range(300)))
    before = wait_for(lambda: (p := partitions(c.bootstrap, "fo")) and all(len(v.isr) == 3 for v in p.values()) and p,
                      30, "full ISRs")
    p0 = before[0]
    victim = p0.leader
    expected = next(r for r in p0.replicas if r != victim)  # next in assignment order, all were in the ISR
    c.brokers[victim].kill()
    rest = _others(c, victim)
    after = wait_for(lambda: (v := partitions(rest, "fo")[0]) and v.leader == expected and victim not in v.isr and v,
                     30, f"broker {expected} to lead partition 0")
    assert after.leader_epoch > p0.leader_epoch
    # acks=all still works with two of three replicas (min.insync.replicas=2)
    kcat(rest, "-P", "-t", "fo", "-p", "0", "-X", "acks=all", input="after\n")
    c.restart(victim)
    back = wait_for(lambda: (v := partitions(c.bootstrap, "fo")[0]) and victim in v.isr and v, 60,
                    f"broker {victim} back in the ISR")
    assert back.leader == expected
    out = kcat(c.bootstrap, "-C", "-t", "fo", "-e", "-f", "%s\n").stdout.split()
    assert sorted(out) == sorted([str(i) for i in range(300)] + ["after"])


def test_controller_failover_bumps_the_epoch_and_keeps_serving(cluster_factory, zk_connect):
    c = cluster_factory(3, overrides=FAST)
    old_id, old_epoch = wait_for(lambda: (x := controller(zk_connect)) and x[0] >= 0 and x, 30, "a controller")
    create_topic(c.bootstrap, "cf", partitions=2, rf=3)
    c.brokers[old_id].kill()
    new_id, new_epoch = wait_for(lambda: (x := controller(zk_connect)) and x[0] not in (-1, old_id) and x, 30,
                                 "a new controller")
    assert new_epoch > old_epoch
    rest = _others(c, old_id)
    # the new controller moved leadership off the dead broker and new topics still get leaders
    wait_for(lambda: all(v.leader not in (-1, old_id) for v in partitions(rest, "cf").values()), 30, "new leaders")
    create_topic(rest, "after-failover", partitions=2, rf=2)
    kcat(rest, "-P", "-t", "after-failover", "-X", "acks=all", input="x\ny\n")
    assert sorted(kcat(rest, "-C", "-t", "after-failover", "-e", "-f", "%s\n").stdout.split()) == ["x", "y"]


def test_isr_shrinks_for_a_stalled_follower_and_expands_when_it_resumes(cluster_factory):
    c = cluster_factory(3, overrides=FAST)
    create_topic(c.bootstrap, "lag", partitions=1, rf=3)
    view = wait_for(lambda: (v := partitions(c.bootstrap, "lag")[0]) and len(v.isr) == 3 and v, 30, "full ISR")
    follower = next(r for r in view.replicas if r != view.leader)
    import signal
    c.brokers[follower].signal(signal.SIGSTOP)  # alive for ZooKeeper only until its session times out
    try:
        kcat(_others(c, follower), "-P", "-t", "lag", "-X", "acks=1", input="a\nb\n")
        wait_for(lambda: follower not in partitions(_others(c, follower), "lag")[0].isr, 30, "ISR shrink")
    finally:
        c.brokers[follower].signal(signal.SIGCONT)
    wait_for(lambda: follower in partitions(c.bootstrap, "lag")[0].isr, 60, "ISR expansion")
