"""Proposal time through the balancer's REST API on synthetic clusters (`scripts/bench balancer`).

The service is given a cluster model (the planner benchmark's seeded synthetic clusters, RF 3, 4 racks,
log-normal sizes) instead of reading a cluster, and answers `POST rebalance?dryrun=true` as it would for
cccli: a user task, 202 progress polled by User-Task-ID, then the optimization result. The figure is the
wall clock from the first request to the final answer (planning, Cruise Control's JSON for every broker,
the HTTP round trips), next to the planner's own moves and lower bound.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from collections.abc import Sequence

from pylog.balancer.cluster import ClusterFacts
from pylog.balancer.config import parse
from pylog.balancer.server import serve
from pylog.balancer.service import Balancer
from pylog.cli.admin_client import ClusterMetadata, PartitionMetadata, TopicMetadata
from pylog.planner.synthetic import synthetic_snapshot


def model(n_partitions: int, n_brokers: int, scenario: str) -> ClusterFacts:
    """A synthetic cluster as the service reads one; add-10%: new empty brokers, remove-rack: rack r3 dead."""
    snap = synthetic_snapshot(n_partitions, n_brokers)
    brokers = {b.id: b.rack for b in snap.brokers}
    if scenario == "add-10%":
        brokers.update({b: f"r{b % 4}" for b in range(n_brokers, n_brokers + max(1, n_brokers // 10))})
    elif scenario == "dead-rack":  # every broker of r3 failed: self-healing's proposal
        brokers = {b: r for b, r in brokers.items() if r != "r3"}
    topics: dict[str, dict[int, PartitionMetadata]] = {}
    sizes = {}
    for p in snap.partitions:
        reps = tuple(p.replicas)
        leader = next((r for r in reps if r in brokers), None)
        topics.setdefault(p.topic, {})[p.partition] = PartitionMetadata(p.partition, leader, reps, reps)
        for r in reps:
            sizes[((p.topic, p.partition), r)] = p.size_bytes or 0
    md = ClusterMetadata(brokers, 0, {t: TopicMetadata(t, None, False, ps) for t, ps in topics.items()})
    return ClusterFacts(md, sizes, {b: "127.0.0.1" for b in brokers})


def timed_rebalance(port: int, timeout_s: float = 3600) -> tuple[float, dict]:
    """POST rebalance?dryrun=true, polling the task by User-Task-ID as Cruise Control's clients do."""
    url = f"http://127.0.0.1:{port}/kafkacruisecontrol/rebalance?dryrun=true&json=true"
    start = time.perf_counter()
    headers: dict[str, str] = {}
    while True:
        with urllib.request.urlopen(urllib.request.Request(url, method="POST", headers=headers), timeout=600) as r:
            headers = {"User-Task-ID": r.headers["User-Task-ID"]}
            body = json.load(r)
            if r.status == 200:
                return time.perf_counter() - start, body
        if time.perf_counter() - start > timeout_s:
            raise TimeoutError("the rebalance task did not finish")
        time.sleep(0.2)


def run(sizes: Sequence[int], brokers: int, scenarios: Sequence[str]) -> list[str]:
    """One row per (size, scenario)."""
    cfg = parse({"bootstrap.servers": "unused:9092", "webserver.http.port": "0",
                 "webserver.request.maxBlockTimeMs": "1000", "webserver.session.maxExpiryTimeMs": "3600000"})
    balancer = Balancer(cfg)
    httpd, _ = serve(balancer)
    port = httpd.server_address[1]
    rows = []
    try:
        for n in sizes:
            for sc in scenarios:
                balancer.model = model(n, brokers, sc)
                cpu = time.process_time()
                elapsed, body = timed_rebalance(port)
                cpu = time.process_time() - cpu
                s, bound = body["summary"], body["pylogLowerBounds"]
                statuses = "/".join(g["status"] for g in body["goalSummary"])
                rows.append(f"| {n} | {brokers} | {sc} | {elapsed:.1f} | {cpu:.1f} | {s['numReplicaMovements']} | "
                            f"{bound['numReplicaMovements']} | {s['numLeaderMovements']} | {statuses} |")
                print(rows[-1], flush=True)
    finally:
        httpd.shutdown()
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print the BENCHMARKS.md rows."""
    ap = argparse.ArgumentParser(prog="scripts/bench balancer", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000", help="partition counts (comma-separated)")
    ap.add_argument("--brokers", type=int, default=100)
    ap.add_argument("--scenarios", default="add-10%,dead-rack")
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| partitions | brokers | scenario | time s | cpu s | moves | lower bound | leader changes | goals |")
    print("|---|---|---|---|---|---|---|---|---|")
    run([int(s) for s in args.sizes.split(",")], args.brokers, args.scenarios.split(","))
    return 0


if __name__ == "__main__":
    sys.exit(main())
