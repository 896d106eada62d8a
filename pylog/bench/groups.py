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
concurrent N consumers of N groups that share one `__consumer_offsets` partition (as groups do once
           there are more of them than partitions) commit synchronously at the same time: commits
           per second in total. pylog gathers the commits that arrive while a batch is being
           replicated into the next batch (group commit).
Every commit table also gives the server's CPU per commit (user+system of its processes, read
from /proc), which the shared machine's load distorts far less than the rates.
Run: `scripts/bench groups [--seconds S] [--members N] [--partitions P] [--reps R] [--concurrent N]
[--commits-only]`; `scripts/bench groups --failover [--reps R]` runs the coordinator-failover
benchmark (pylog/bench/groups_failover.py) instead, and `scripts/bench groups --consume [--records N]
[--reps R]` the consume throughput of a group member against assign() (pylog/bench/groups_consume.py), and
`scripts/bench groups --protocol classic,consumer [--reps R]` a group through a join and a kill -9, classic
protocol against KIP-848 (pylog/bench/groups_kip848.py).
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Sequence

import confluent_kafka as ck

from pylog.bench import _harness as h

TOPIC = "bench-groups"


def _commit_loop(target: h.Target, group: str, seconds: float, ready: threading.Barrier | None = None) -> int:
    """Commit one offset synchronously in a loop for `seconds`; the number of commits."""
    c = ck.Consumer({"bootstrap.servers": target.bootstrap, "group.id": group, "enable.auto.commit": False,
                     "log_level": 3})
    try:
        tp = ck.TopicPartition(TOPIC, 0)
        c.commit(offsets=[ck.TopicPartition(TOPIC, 0, 0)], asynchronous=False)  # coordinator found, topic created
        if ready is not None:
            ready.wait(60)
        n, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < seconds:
            n += 1
            tp.offset = n
            c.commit(offsets=[tp], asynchronous=False)
        return n
    finally:
        c.close()


def commit_rate(target: h.Target, seconds: float, consumers: int = 1) -> tuple[float, float]:
    """(synchronous commits per second, server CPU microseconds per commit) of `consumers` consumers at once,
    each in its own group; the groups share one `__consumer_offsets` partition (of 50)."""
    groups = same_offsets_partition("bench-commits", consumers)
    counts = [0] * consumers
    ready = threading.Barrier(consumers + 1)

    def one(i: int) -> None:
        counts[i] = _commit_loop(target, groups[i], seconds, ready)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(consumers)]
    for t in threads:
        t.start()
    ready.wait(60)
    cpu0, t0 = sum(target.cpu()), time.monotonic()
    for t in threads:
        t.join(seconds + 120)
    elapsed, cpu = time.monotonic() - t0, sum(target.cpu()) - cpu0
    total = sum(counts)
    return total / elapsed, cpu / max(total, 1) * 1e6


def same_offsets_partition(prefix: str, n: int, partitions: int = 50) -> list[str]:
    """n group ids that Kafka's hashing puts on the same `__consumer_offsets` partition."""
    from pylog.coordinator.ownership import partition_for
    first = partition_for(f"{prefix}-0", partitions)
    out, i = [], 0
    while len(out) < n:
        if partition_for(f"{prefix}-{i}", partitions) == first:
            out.append(f"{prefix}-{i}")
        i += 1
    return out


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
        reps: int, concurrent: int) -> None:
    """Measure every target, `reps` times each, and print the tables."""
    commits: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets}
    together: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets}
    joins: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets if t.name in topics}
    for rep in range(reps):
        for t in targets:
            commits[t.name].append(commit_rate(t, seconds))
            h.log(f"{t.name}: {commits[t.name][-1][0]:.0f} commits/s, {commits[t.name][-1][1]:.0f} us CPU each")
            if concurrent > 1:
                together[t.name].append(commit_rate(t, seconds, concurrent))
                h.log(f"{t.name}, {concurrent} at once: {together[t.name][-1][0]:.0f} commits/s, "
                      f"{together[t.name][-1][1]:.0f} us CPU each")
            if t.name in joins and members > 0:
                joins[t.name].append(rebalance_times(t, members, *topics[t.name], f"bench-rebalance-{rep}"))
                h.log(f"{t.name}: join {joins[t.name][-1][0]:.2f}s, leave {joins[t.name][-1][1]:.2f}s")
    h.print_report(f"Synchronous commits/s ({seconds:.0f} s runs, median of {reps}); {h.machine_notes()}",
                   ["target", "commits/s, one consumer", "server CPU per commit (us)"]
                   + ([f"commits/s, {concurrent} consumers at once", "server CPU per commit (us)"]
                      if concurrent > 1 else []),
                   [[n, h.median([x[0] for x in v]), h.median([x[1] for x in v])]
                    + ([h.median([x[0] for x in together[n]]), h.median([x[1] for x in together[n]])]
                       if concurrent > 1 else []) for n, v in commits.items()])
    print()
    if members <= 0:
        return
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
    ap.add_argument("--concurrent", type=int, default=8, help="consumers committing at once (1: skip that table)")
    ap.add_argument("--commits-only", action="store_true", help="only the commit tables (no rebalance runs)")
    ap.add_argument("--failover", action="store_true", help="the coordinator-failover benchmark instead")
    ap.add_argument("--consume", action="store_true",
                    help="consume throughput: subscribe() in a group vs assign(), pylog vs the mock, instead")
    ap.add_argument("--protocol", default=None, metavar="classic,consumer",
                    help="a member joins while another is killed, under these group protocols, instead")
    ap.add_argument("--records", type=int, default=2_000_000, help="with --consume: records read per run")
    ap.add_argument("--session-timeout-ms", type=int, default=6000,
                    help="with --failover: the brokers' zookeeper.session.timeout.ms (default 6000)")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.reps < 1 or args.concurrent < 1 or args.members < 0 or args.partitions < 1 \
            or args.records < 1:
        ap.error("--seconds must be > 0, --reps, --concurrent, --partitions and --records >= 1, --members >= 0")
    if args.protocol:
        protocols = [p.strip() for p in args.protocol.split(",") if p.strip()]
        if not protocols or set(protocols) - {"classic", "consumer"}:
            ap.error("--protocol takes classic, consumer or both (comma-separated)")
        from pylog.bench import groups_kip848
        groups_kip848.run(protocols, args.reps)
        return
    if args.consume:
        from pylog.bench import groups_consume
        groups_consume.run(args.records, args.reps)
        return
    if args.failover:
        from pylog.bench import groups_failover
        groups_failover.run(args.reps, args.session_timeout_ms)
        return
    with h.mock_peer() as mock, h.pylog_cluster(1) as one, \
            h.pylog_cluster(3, {"offsets.topic.replication.factor": "3"}) as three:
        targets = [mock, h.pylog_target(one, "pylog RF 1"), h.pylog_target(three, "pylog RF 3")]
        wide = f"{TOPIC}-wide"
        for t in targets[1:]:
            h.create_topics(t.bootstrap, [TOPIC], 1)
        h.create_topics(targets[1].bootstrap, [wide], args.partitions)
        topics = {mock.name: (wide, partition_count(mock, wide)), targets[1].name: (wide, args.partitions)}
        partition_count(mock, TOPIC)
        run(targets, args.seconds, 0 if args.commits_only else args.members, topics, args.reps, args.concurrent)


if __name__ == "__main__":
    main()
