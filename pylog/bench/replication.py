"""Replicated produce throughput: RF 3 with acks=all against RF 1 with acks=1, same cluster, same run.

Three pylog brokers; two single-partition topics led by the same broker: `bench-rf1` (replica
broker 0 only) and `bench-rf3` (replicas 0, 1, 2, min.insync.replicas=2). The same
confluent-kafka producer settings write 100-byte records to each in alternation (acks=1 to the
first, acks=all to the second), so drift on the shared machine hits both. Prints records/s,
MB/s, the CPU seconds all brokers spent per GB of record values, and the ratio RF 3 / RF 1.
Goal: ratio >= 0.5 (Kafka's published figure: 421,823 / 821,557 records/s = 0.51). All three
brokers share this machine's cores, so RF 3 also pays the followers' CPU, which on Kafka's
benchmark ran on other machines.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from confluent_kafka.admin import AdminClient, NewTopic

from pylog.bench import _harness as h

TOPICS = {"rf1": ("bench-rf1", [0], "1"), "rf3": ("bench-rf3", [0, 1, 2], "all")}
# Bounded logs, as in the produce benchmark (see _harness.prime_page_cache).
TOPIC_CONFIG = {"segment.bytes": str(64 * 1024 * 1024), "retention.bytes": str(256 * 1024 * 1024)}
BROKER_CONFIG = {"log.retention.check.interval.ms": "1000"}


def create(bootstrap: str) -> None:
    """Both topics, each with an explicit assignment so broker 0 leads both."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = []
    for name, replicas, _ in TOPICS.values():
        cfg = dict(TOPIC_CONFIG, **({"min.insync.replicas": "2"} if len(replicas) > 1 else {}))
        new.append(NewTopic(name, num_partitions=1, replica_assignment=[replicas],
                            config=cfg))
    for f in admin.create_topics(new, operation_timeout=60, request_timeout=60).values():
        f.result(60)
    h.wait_leaders(bootstrap, [TOPICS["rf1"][0]], 1)
    h.wait_leaders(bootstrap, [TOPICS["rf3"][0]], 1, isr=3)


def run(records: int, reps: int, scenarios: list[str], value_size: int, prime_mb: int) -> list[list]:
    """Measure every scenario; returns table rows."""
    rows: list[list] = []
    with h.pylog_cluster(3, BROKER_CONFIG, prime_mb=prime_mb) as cluster:
        create(cluster.bootstrap)
        base = h.pylog_target(cluster)
        targets = [h.Target(k, base.bootstrap, base.pids) for k in TOPICS]

        def one(t: h.Target, n: int, conf: dict) -> h.RunResult:
            topic, _, acks = TOPICS[t.name]
            return h.produce(t, topic, n, value_size, {**conf, "acks": acks})

        for name in scenarios:
            conf = h.SCENARIOS[name]
            h.log(f"scenario {name} {conf}: warm-up")
            for t in targets:
                one(t, max(records // 10, 10000), conf)
            res = h.interleaved(reps, targets, lambda t: one(t, records, conf))
            rf1, rf3 = h.summarize(res["rf1"]), h.summarize(res["rf3"])
            rows.append([name, "RF 1, acks=1", rf1.rate, rf1.mb_per_s, f"{rf1.cpu_per_gb:.2f}", "1.00"])
            rows.append([name, "RF 3, acks=all, min.isr 2", rf3.rate, rf3.mb_per_s, f"{rf3.cpu_per_gb:.2f}",
                         f"{rf3.rate / rf1.rate:.2f}"])
    return rows


HEADER = ["batching", "replication", "records/s", "MB/s", "CPU-s/GB (3 brokers)", "ratio vs RF 1"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench replication", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000, help="records per timed run")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per topic (the median is reported)")
    ap.add_argument("--scenarios", default="default,1m", help=f"comma-separated, of {sorted(h.SCENARIOS)}")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--prime-mb", type=int, default=512, help="page cache to recycle first (see _harness)")
    args = ap.parse_args(argv)
    scenarios = h.scenarios_arg(ap, args.scenarios)
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(args.records, args.reps, scenarios, args.value_size, args.prime_mb)
    h.print_report(f"replication: {args.records:,} x {args.value_size} B records per run, 1 partition per topic, "
                   f"3 brokers on this machine, median of {args.reps}", HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
