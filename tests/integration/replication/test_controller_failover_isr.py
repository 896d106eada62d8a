"""kill -9 of the controller: the new controller drops it from the ISR of every partition it followed
at once (Kafka's ReplicaStateMachine.startup moves replicas of dead brokers to OfflineReplica), so
acks=all writes to those partitions don't wait for their leader's replica.lag.time.max.ms shrink."""

from __future__ import annotations

import subprocess
import time

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from support.clients import wait_for
from support.inspect import controller

pytestmark = pytest.mark.integration

SESSION_MS = 4000
# replica.lag.time.max.ms keeps its default (30 s): the leaders' own shrink must not be what saves us.
OVERRIDES = {"zookeeper.session.timeout.ms": str(SESSION_MS), "auto.leader.rebalance.enable": "false"}
BOUND_S = SESSION_MS / 1000 + 5  # expiry (up to a tickTime late), election, failover, one produce


def _create(bootstrap: str, topic: str, replicas: list[list[int]]) -> None:
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.CreateTopics, lambda cls, v: cls(
            topics=[cls.CreatableTopic(name=topic, num_partitions=-1, replication_factor=-1, configs=[],
                                       assignments=[cls.CreatableTopic.CreatableReplicaAssignment(
                                           partition_index=p, broker_ids=r) for p, r in enumerate(replicas)])],
            timeout_ms=30000, validate_only=False))
    assert resp.topics[0].error_code == 0, resp.topics[0].error_message


def test_killed_controller_leaves_the_isrs_it_followed_within_the_session_timeout(cluster_factory, zk_connect, zk):
    c = cluster_factory(3, overrides=OVERRIDES)
    dead = wait_for(lambda: (x := controller(zk_connect))[0] >= 0 and x, 30, "a controller")[0]  # may be broker 0
    a, b = sorted(set(c.brokers) - {dead})
    # The dead controller follows every partition but one of each topic; the last one it leads.
    layout = {"rf3": [[a, dead, b], [b, a, dead], [dead, a, b]], "rf2": [[a, dead], [b, dead], [dead, a]]}
    for topic, replicas in layout.items():
        _create(c.bootstrap, topic, replicas)
    tps = [(t, p) for t, reps in layout.items() for p in range(len(reps))]
    wait_for(lambda: all(st and len(st.isr) == len(layout[t][p])
                         for (t, p), st in zk.get_partition_states(tps).items()), 30, "full ISRs")
    rest = f"{c.brokers[a].address},{c.brokers[b].address}"

    c.brokers[dead].kill()
    t0 = time.monotonic()
    followed = [(t, p) for t, reps in layout.items() for p, r in enumerate(reps) if r[0] != dead]
    writers = {tp: subprocess.Popen(["kcat", "-b", rest, "-P", "-t", tp[0], "-p", str(tp[1]), "-X", "acks=all"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for tp in followed}
    try:
        for w in writers.values():
            w.stdin.write("after-the-kill\n")
            w.stdin.close()
        left = wait_for(lambda: all(dead not in st.isr for st in zk.get_partition_states(tps).values()) and
                        time.monotonic() - t0, BOUND_S + 30, f"broker {dead} out of every ISR")
        acked: dict = {}
        deadline = t0 + BOUND_S + 60
        while len(acked) < len(writers) and time.monotonic() < deadline:
            for tp, w in writers.items():
                if tp not in acked and w.poll() is not None:
                    assert w.returncode == 0, f"kcat to {tp}: {w.stderr.read()}"
                    acked[tp] = round(time.monotonic() - t0, 1)
            time.sleep(0.05)
    finally:
        for w in writers.values():
            if w.poll() is None:
                w.kill()
                w.wait()
    assert left <= BOUND_S, f"broker {dead} left the ISRs {left:.1f}s after the kill (bound {BOUND_S}s)"
    assert len(acked) == len(writers) and all(s <= BOUND_S for s in acked.values()), \
        f"acks=all writes acknowledged after {acked} s (bound {BOUND_S}s)"
    states = zk.get_partition_states(tps)
    for (t, p), st in states.items():
        assert st.leader != dead and set(st.isr) == set(layout[t][p]) - {dead}, ((t, p), st)
