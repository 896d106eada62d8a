"""Controller failover with many partitions: how long a new controller takes to load the cluster and be ready.

Three pylog brokers hold topics of 1,000 partitions each (RF 1 by default) until the cluster has
each requested partition count. Each round deletes /controller (what an operator does to move
the controller; no session timeout is involved), so the brokers race for it and the winner runs
a full failover: read brokers, topics, assignments and every partition state from ZooKeeper,
build its context, send UpdateMetadata and LeaderAndIsr to every broker, resume deletions,
elections and reassignments. Reported per partition count:
  * ready: the new controller's own figure for that whole step (its "ready at epoch" log line);
  * its broker's CPU: CPU seconds the winning broker's process used from the deletion until the
    line was seen (an upper bound that the shared machine's load does not inflate);
  * end to end: from the deletion of /controller to a topic created right after it having a
    leader in ZooKeeper (so the new controller also processed a change).
Goal: ready <= 2 s at 10,000 partitions (Kafka's rule of thumb is ~2 ms per partition, 20 s).
The smaller partition count measured in the same run is the peer: per-partition cost is the
difference between the two, divided by the difference in partitions.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

from confluent_kafka.admin import AdminClient, NewTopic

from pylog.bench import _harness as h
from pylog.localcluster import LocalCluster
from pylog.zk import paths
from pylog.zk.client import ZkClient

PER_TOPIC = 1000
READY = re.compile(r"\[([\d\- :,]+)\] INFO Controller (\d+) ready at epoch (\d+): (\d+) partitions in (\d+) ms")


def _ready_lines(cluster: LocalCluster) -> list[tuple[int, int, int, int]]:
    """(broker, epoch, partitions, ms) of every 'ready' line so far."""
    out = []
    for b in cluster.brokers.values():
        text = Path(b.log_path).read_text(errors="replace")
        out += [(int(m[2]), int(m[3]), int(m[4]), int(m[5])) for m in READY.finditer(text)]
    return out


def _wait_led(zk: ZkClient, tps: list[tuple[str, int]], timeout: float) -> float:
    """Wait until every partition's state znode names a leader; returns when (monotonic)."""
    deadline = time.monotonic() + timeout
    while True:
        states = zk.get_partition_states(tps)
        if all(st is not None and st.leader >= 0 for st in states.values()):
            return time.monotonic()
        if time.monotonic() > deadline:
            missing = sum(1 for st in states.values() if st is None or st.leader < 0)
            raise TimeoutError(f"{missing} of {len(tps)} partitions without a leader after {timeout:.0f}s")
        time.sleep(0.01)


def grow(admin: AdminClient, zk: ZkClient, have: int, want: int, rf: int) -> int:
    """Add topics of PER_TOPIC partitions until the cluster has `want` partitions."""
    topics = [f"bench-ctl-{i}" for i in range(have // PER_TOPIC, want // PER_TOPIC)]
    if not topics:
        return have
    t0 = time.monotonic()
    for t in topics:  # one at a time: each request stays well inside the client's timeouts
        admin.create_topics([NewTopic(t, PER_TOPIC, rf)], operation_timeout=300, request_timeout=300)[t].result(300)
        _wait_led(zk, [(t, p) for p in range(PER_TOPIC)], 300)
    h.log(f"created {len(topics) * PER_TOPIC:,} partitions in {time.monotonic() - t0:.1f}s")
    return want


def one_round(cluster: LocalCluster, admin: AdminClient, zk: ZkClient,
              probe: str) -> tuple[int, float, float, float]:
    """Delete /controller; returns (partitions, ready s, CPU s of the new controller's broker, end-to-end s)."""
    old = zk.get_controller_epoch().epoch
    pids = {bid: b.pid for bid, b in cluster.brokers.items()}
    cpu0 = {bid: sum(h.cpu_times(pid)) for bid, pid in pids.items()}
    t0 = time.monotonic()
    zk.delete(paths.controller())
    admin.create_topics([NewTopic(probe, 1, 1)], operation_timeout=120, request_timeout=120)[probe].result(120)
    e2e = _wait_led(zk, [(probe, 0)], 120) - t0
    deadline = time.monotonic() + 120
    while True:
        lines = [ln for ln in _ready_lines(cluster) if ln[1] > old]
        if lines:
            bid, epoch, parts, ms = lines[-1]
            cpu = sum(h.cpu_times(pids[bid])) - cpu0[bid]  # up to now: an upper bound of the failover's CPU
            break
        if time.monotonic() > deadline:
            raise TimeoutError("no controller reported ready within 120 s")
        time.sleep(0.05)
    h.log(f"  broker {bid} took over at epoch {epoch}: ready in {ms} ms ({cpu:.2f} CPU-s) with {parts:,} "
          f"partitions; probe topic led {e2e:.2f}s after the deletion")
    return parts, ms / 1000, cpu, e2e


def run(counts: list[int], rounds: int, rf: int) -> list[list]:
    """Grow the cluster through `counts` partitions, failing the controller over `rounds` times at each."""
    rows = []
    with h.pylog_cluster(3, {"zookeeper.session.timeout.ms": "18000"}) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        zk = ZkClient(cluster.zk_connect, session_timeout_ms=30000).start()
        try:
            have = 0
            for want in counts:
                have = grow(admin, zk, have, want, rf)
                time.sleep(2)  # let the brokers finish applying the new partitions
                res = [one_round(cluster, admin, zk, f"bench-ctl-probe-{want}-{i}") for i in range(rounds)]
                parts = res[-1][0]
                ready = [r[1] for r in res]
                cpu = [r[2] for r in res]
                e2e = [r[3] for r in res]
                rows.append([parts, rounds, f"{statistics.median(ready):.2f}", f"{max(ready):.2f}",
                             f"{statistics.median(cpu):.2f}", f"{statistics.median(ready) / parts * 1000:.3f}",
                             f"{statistics.median(e2e):.2f}", f"{max(e2e):.2f}"])
        finally:
            zk.close()
    return rows


HEADER = ["partitions", "failovers", "ready s (median)", "ready s (max)", "its broker's CPU s (median)",
          "ms per partition", "end to end s (median)", "end to end s (max)"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench replication_controller", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", default="1000,10000",
                    help=f"comma-separated partition counts, multiples of {PER_TOPIC} (default 1000,10000)")
    ap.add_argument("--rounds", type=int, default=5, help="controller failovers per partition count (default 5)")
    ap.add_argument("--rf", type=int, default=1, help="replication factor of the topics (default 1)")
    args = ap.parse_args(argv)
    try:
        counts = sorted(int(x) for x in args.partitions.split(","))
    except ValueError:
        ap.error(f"--partitions must be comma-separated integers, got {args.partitions!r}")
    if any(c <= 0 or c % PER_TOPIC for c in counts):
        ap.error(f"--partitions must be positive multiples of {PER_TOPIC}")
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(counts, args.rounds, args.rf)
    h.print_report(f"controller failover: 3 brokers, topics of {PER_TOPIC:,} partitions, RF {args.rf}, "
                   f"/controller deleted {args.rounds} times per size; goal: ready <= 2 s at 10,000 partitions",
                   HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
