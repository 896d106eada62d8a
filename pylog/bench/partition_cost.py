"""Broker cost per partition in one request: Produce and Fetch requests carrying N partitions.

One pylog broker, one topic with max(--partitions) partitions. For each N, the same client sends
Produce requests (acks=1) that carry one small batch (10 x 100 B records) for each of N
partitions, then Fetch requests (max_wait 0) that read one such batch from each of N partitions
(every partition's records come from its segment file). The broker's CPU (user + system, from
/proc) is divided by the partitions served: if validation, offsets, index appends, lookups or
response building grew faster than the partitions in a request, the per-partition figure would
rise with N. Rounds alternate over N so drift on the shared machine hits all of them; medians
are reported. With --profile the broker's event loop runs under cProfile (see produce --profile).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from pylog.bench import _harness as h
from pylog.client.sync import KafkaClient
from pylog.protocol import records
from pylog.protocol.api import ApiKey

TOPIC = "bench-partitions"
BATCH = records.build_batch([(None, b"v" * 100, (), 1_700_000_000_000) for _ in range(10)])


def _produce(client: KafkaClient, n: int) -> None:
    def build(cls, _v):
        tpd = cls.TopicProduceData
        return cls(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[tpd(name=TOPIC, partition_data=[
            tpd.PartitionProduceData(index=i, records=BATCH) for i in range(n)])])
    resp = client.call(ApiKey.Produce, build, node=0)
    bad = [p.error_code for t in resp.responses for p in t.partition_responses if p.error_code]
    if bad:
        raise RuntimeError(f"produce to {n} partitions: errors {bad[:3]}")


def _fetch(client: KafkaClient, n: int) -> None:
    def build(cls, _v):
        ft = cls.FetchTopic
        return cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=52428800, isolation_level=0, session_id=0,
                   session_epoch=-1, topics=[ft(topic=TOPIC, partitions=[
                       ft.FetchPartition(partition=i, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                                         partition_max_bytes=len(BATCH)) for i in range(n)])],
                   forgotten_topics_data=[], rack_id="")
    resp = client.call(ApiKey.Fetch, build, node=0, max_version=11)
    got = sum(1 for t in resp.responses for p in t.partitions if p.records)
    if got != n:
        raise RuntimeError(f"fetch from {n} partitions: records from {got}")


def run(sizes: list[int], rounds: int, partition_ops: int, profile_dir: str | None = None,
        zk_connect: str | None = None) -> list[list]:
    """Per-partition broker CPU and wall time for Produce and Fetch at each N; returns table rows."""
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with h.pylog_cluster(1, profile_dir=profile_dir, zk_connect=zk_connect) as cluster:
        target = h.pylog_target(cluster)
        h.create_topics(cluster.bootstrap, [TOPIC], partitions=max(sizes))
        with KafkaClient(cluster.bootstrap) as client:
            client.refresh_metadata()
            _produce(client, max(sizes))  # every partition has a batch at offset 0 to fetch
            for r in range(rounds + 1):  # round 0 warms up
                for kind, fn in (("produce", _produce), ("fetch", _fetch)):
                    for n in (sizes if r % 2 else sizes[::-1]):
                        reqs = max(10, partition_ops // n)
                        c0, t0 = target.cpu(), time.perf_counter()
                        for _ in range(reqs):
                            fn(client, n)
                        wall, c1 = time.perf_counter() - t0, target.cpu()
                        if r:
                            cpu = (c1[0] - c0[0]) + (c1[1] - c0[1])
                            results.setdefault((kind, n), []).append((cpu / (reqs * n) * 1e6, wall / reqs * 1e6))
                h.log(f"round {r} done")
    rows = []
    for (kind, n), xs in sorted(results.items()):
        per_part = h.median([x[0] for x in xs])
        rows.append([kind, n, per_part, per_part * n, h.median([x[1] for x in xs])])
    return rows


HEADER = ["request", "partitions per request", "broker CPU µs per partition", "broker CPU µs per request",
          "wall µs per request (round trip)"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench partition-cost", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", default="1,8,64,256", help="comma-separated partitions per request")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds (the median is reported)")
    ap.add_argument("--partition-ops", type=int, default=20000, help="partitions served per (round, N, request type)")
    ap.add_argument("--profile", metavar="DIR", help="cProfile the broker's event loop into DIR (slows it down)")
    args = ap.parse_args(argv)
    try:
        sizes = sorted({int(x) for x in args.partitions.split(",")})
    except ValueError:
        ap.error(f"--partitions: expected comma-separated integers, got {args.partitions!r}")
    if sizes[0] < 1 or args.rounds < 1 or args.partition_ops < 1:
        ap.error("--partitions, --rounds and --partition-ops must be >= 1")
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(sizes, args.rounds, args.partition_ops, args.profile)
    h.print_report(f"partition cost: one {len(BATCH)} B batch per partition, one broker, median of {args.rounds} "
                   f"rounds, {args.partition_ops:,} partitions served per round and size", HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
