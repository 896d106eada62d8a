"""Consumer-group benchmarks: synchronous commits per second, and how long a group takes to (re)balance.

commits    one confluent-kafka consumer commits one offset synchronously in a loop (commit after
           every record, the most demanding common pattern): pylog with __consumer_offsets at RF 1
           and RF 3 (acks=all to three brokers) against librdkafka's mock cluster. Goal: RF 1 >= mock.
rebalance  N confluent-kafka consumers subscribe to one topic of P partitions: time from the first
           subscribe until the members' assignments cover every partition exactly once, then the
           time from one member's close() until the others cover its partitions. pylog runs with
           group.initial.rebalance.delay.ms=0 (LocalCluster's setting); the mock uses its own join
           timing, which confluent-kafka cannot change, on a topic it auto-creates with its default
           partition count (the table says how many). Goal: <= the mock's.
Run: `scripts/bench groups [--seconds S] [--members N] [--partitions P] [--reps R]`.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Sequence

import confluent_kafka as ck

from pylog.bench import _harness as h

TOPIC = "bench-groups"


def commit_rate(target: h.Target, seconds: float) -> float:
    """Synchronous commits per second of one consumer on one partition."""
    c = ck.Consumer({"bootstrap.servers": target.bootstrap, "group.id": "bench-commits", "enable.auto.commit": False,
                     "log_level": 3})
    try:
        tp = ck.TopicPartition(TOPIC, 0)
        c.commit(offsets=[ck.TopicPartition(TOPIC, 0, 0)], asynchronous=False)  # coordinator found, topic created
        n, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < seconds:
            n += 1
            tp.offset = n
            c.commit(offsets=[tp], asynchronous=False)
        return n / (time.monotonic() - t0)
    finally:
        c.close()


def _covered(consumers: Sequence[ck.Consumer], partitions: int) -> bool:
    """Every partition owned exactly once, by as many members as can have one (the group has settled)."""
    assignments = [c.assignment() for c in consumers]
    owned = [(tp.topic, tp.partition) for a in assignments for tp in a]
    busy = sum(1 for a in assignments if a)
    return len(owned) == partitions and len(set(owned)) == partitions and busy == min(len(consumers), partitions)


def _poll_until(consumers: Sequence[ck.Consumer], partitions: int, timeout: float = 120) -> float:
    t0 = time.monotonic()
    while not _covered(consumers, partitions):
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{len(consumers)} members did not cover {partitions} partitions in {timeout:.0f}s")
        for c in consumers:
            c.poll(0.01)
    return time.monotonic() - t0


def rebalance_times(target: h.Target, members: int, topic: str, partitions: int, group: str) -> tuple[float, float]:
    """(seconds until N new members cover every partition, seconds until N-1 do after one leaves)."""
    conf = {"bootstrap.servers": target.bootstrap, "group.id": group, "log_level": 3}
    consumers = [ck.Consumer({**conf, "client.id": f"m{i}"}) for i in range(members)]
    try:
        for c in consumers:
            c.subscribe([topic])
        joined = _poll_until(consumers, partitions)
        leaver = consumers.pop()
        t0 = time.monotonic()
        # close() sends LeaveGroup (no session timeout to wait out); the others keep polling meanwhile,
        # as applications do, so they can answer the rebalance it starts.
        closing = threading.Thread(target=leaver.close)
        closing.start()
        _poll_until(consumers, partitions)
        elapsed = time.monotonic() - t0
        closing.join(30)
        return joined, elapsed
    finally:
        for c in consumers:
            c.close()


def partition_count(target: h.Target, topic: str) -> int:
    """Partitions of a topic, auto-creating it on the mock (one produced record)."""
    p = ck.Producer({"bootstrap.servers": target.bootstrap, "log_level": 3})
    p.produce(topic, b"x")
    p.flush(30)
    return len(p.list_topics(topic, timeout=30).topics[topic].partitions)


def run(targets: Sequence[h.Target], seconds: float, members: int, topics: dict[str, tuple[str, int]],
        reps: int) -> None:
    """Measure every target, `reps` times each, and print the two tables."""
    commits: dict[str, list[float]] = {t.name: [] for t in targets}
    joins: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets if t.name in topics}
    for rep in range(reps):
        for t in targets:
            commits[t.name].append(commit_rate(t, seconds))
            h.log(f"{t.name}: {commits[t.name][-1]:.0f} commits/s")
            if t.name in joins:
                joins[t.name].append(rebalance_times(t, members, *topics[t.name], f"bench-rebalance-{rep}"))
                h.log(f"{t.name}: join {joins[t.name][-1][0]:.2f}s, leave {joins[t.name][-1][1]:.2f}s")
    h.print_report(f"Synchronous commits/s, one consumer ({seconds:.0f} s runs, median of {reps}); {h.machine_notes()}",
                   ["target", "commits/s"], [[n, h.median(v)] for n, v in commits.items()])
    print()
    h.print_report(f"Rebalance: {members} confluent-kafka members join one topic, then one leaves (median of {reps})",
                   ["target", "partitions", "all assigned after subscribe (s)", "reassigned after one leaves (s)"],
                   [[n, topics[n][1], h.median([x[0] for x in v]), h.median([x[1] for x in v])]
                    for n, v in joins.items()])


def main(argv: list[str] | None = None) -> None:
    """scripts/bench groups."""
    ap = argparse.ArgumentParser(prog="scripts/bench groups", description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each commit-rate run")
    ap.add_argument("--members", type=int, default=8)
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    with h.mock_peer() as mock, h.pylog_cluster(1) as one, \
            h.pylog_cluster(3, {"offsets.topic.replication.factor": "3"}) as three:
        targets = [mock, h.pylog_target(one, "pylog RF 1"), h.pylog_target(three, "pylog RF 3")]
        wide = f"{TOPIC}-wide"
        for t in targets[1:]:
            h.create_topics(t.bootstrap, [TOPIC], 1)
        h.create_topics(targets[1].bootstrap, [wide], args.partitions)
        topics = {mock.name: (wide, partition_count(mock, wide)), targets[1].name: (wide, args.partitions)}
        partition_count(mock, TOPIC)
        run(targets, args.seconds, args.members, topics, args.reps)


if __name__ == "__main__":
    main()
