"""A broker restarted right after kill -9 (its old ZooKeeper registration not yet expired) takes no
control request meant for its previous run: until it has registered and the controller has sent it
the full metadata, Metadata through it lists no partition of the topic, never a partial list, and
kafka-python's default producer reaches every partition across the restart (issue 30's repro)."""

from __future__ import annotations

import threading
import time

import pytest
from kafka import KafkaProducer

from pylog.client.sync import ClientError, KafkaClient

from support.clients import create_topic, wait_for
from support.inspect import controller, partitions

pytestmark = pytest.mark.integration

# As in the chaos runs, ISRs shrink well before the dead broker's session expires: the controller then
# tells every broker it thinks is live, the dead one's old registration included (that is, the
# restarted process), about the partitions whose ISR changed.
CHAOS = {"zookeeper.session.timeout.ms": "8000", "replica.lag.time.max.ms": "1500",
         "auto.leader.rebalance.enable": "false"}
TOPIC, N = "chaos", 3


def _answer(address: str) -> tuple[tuple[int, ...], int, tuple[int, ...]] | None:
    """(broker ids, topic error, partition ids) of one Metadata answer from one broker; None if unreachable."""
    try:
        with KafkaClient(address, timeout=3) as k:
            md = k.refresh_metadata([TOPIC])
    except (ClientError, OSError):
        return None
    t = md.topics[0]
    return (tuple(sorted(b.node_id for b in md.brokers)), t.error_code,
            tuple(sorted(p.partition_index for p in t.partitions)))


def _send_to_every_partition(bootstrap: str, tag: str, outcomes: list) -> None:
    """One record to each partition with a default kafka-python producer; (partition, result or exception)."""
    producer = None
    try:
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        futures = []
        for p in range(N):
            try:
                futures.append((p, producer.send(TOPIC, f"{tag}-{p}".encode(), partition=p)))
            except Exception as exc:  # ValueError: Unrecognized partition (the reported symptom)
                outcomes.append((p, exc))
        for p, f in futures:
            try:
                outcomes.append((p, f.get(timeout=60)))
            except Exception as exc:
                outcomes.append((p, exc))
    except Exception as exc:
        outcomes.append((None, exc))
    finally:
        if producer is not None:
            producer.close(timeout=10)


def test_a_restarted_broker_serves_no_partial_metadata_and_producers_reach_every_partition(cluster_factory):
    c = cluster_factory(3, overrides=CHAOS)
    create_topic(c.bootstrap, TOPIC, partitions=N, rf=3, configs={"min.insync.replicas": "2"})
    wait_for(lambda: all(len(v.isr) == 3 for v in partitions(c.bootstrap, TOPIC).values()), 30, "full ISRs")
    everyone = c.bootstrap
    # Not the controller: while the controller's own session lingers no controller would send anything.
    (active,) = wait_for(lambda: (x := controller(c.zk_connect)[0]) >= 0 and (x,), 30, "a controller")
    vid = max(b for b in c.brokers if b != active)
    victim = c.brokers[vid]
    victim.kill()
    victim.start()  # at once: its old session still owns /brokers/ids/<vid>
    wait_for(lambda: _answer(victim.address) is not None, 30, f"broker {vid} to answer again")

    outcomes: dict[str, list] = {"victim only": [], "all brokers": []}
    senders = [threading.Thread(target=_send_to_every_partition, args=(bootstrap, tag, outcomes[who]))
               for who, bootstrap, tag in (("victim only", victim.address, "victim"), ("all brokers", everyone, "all"))]
    for t in senders:
        t.start()
    answers = []
    full = (tuple(range(3)), 0, tuple(range(N)))
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        a = _answer(victim.address)
        if a is not None:
            answers.append(a)
            if a == full:
                break
        time.sleep(0.25)
    for t in senders:
        t.join(90)
    assert answers and answers[-1] == full, f"broker {vid} never answered the full metadata: {answers[-5:]}"
    partial = [a for a in answers if a[1] == 0 and a[2] != full[2]]
    assert partial == [], f"broker {vid} answered partial partition lists: {partial}"
    for who, got in outcomes.items():
        failed = [(p, r) for p, r in got if isinstance(r, Exception)]
        assert failed == [], f"producer bootstrapped from {who}: {failed}"
        assert sorted(r.partition for _, r in got) == list(range(N)), who
