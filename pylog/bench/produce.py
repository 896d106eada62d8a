"""Produce throughput: confluent-kafka against one pylog broker and against librdkafka's mock cluster.

100-byte records (--value-size) to one partition (--partitions: round-robin over several), RF 1, acks=1, in the same run and with the same client for
both targets, per producer batching scenario (see _harness.SCENARIOS). Prints records/s, MB/s,
the pylog/mock ratio and each server's CPU seconds per GB of record values ingested (utime+stime
from /proc). Goals: ratio >= 1.0 (the broker must not be what limits the client) and <= 1
broker CPU-second per GB at ~1 MB batches.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from pylog.bench import _harness as h

TOPIC = "bench-produce"
# Bounded logs (64 MB segments, 256 MB kept, checked every second) so the page cache recycles
# memory as on a long-running broker; see _harness.prime_page_cache for why that matters here.
TOPIC_CONFIG = {"segment.bytes": str(64 * 1024 * 1024), "retention.bytes": str(256 * 1024 * 1024)}
BROKER_CONFIG = {"log.retention.check.interval.ms": "1000"}
PRIME_MB = 1024


def topic_config(partitions: int) -> dict[str, str]:
    """TOPIC_CONFIG with the same bound on the whole topic when it has several partitions (each its share):
    per-partition bounds would let 8 partitions grow past the primed page cache into fresh memory."""
    if partitions == 1:
        return TOPIC_CONFIG
    return {"segment.bytes": str(max(1024 * 1024, 64 * 1024 * 1024 // partitions)),
            "retention.bytes": str(256 * 1024 * 1024 // partitions)}


def run(records: int, reps: int, scenarios: list[str], loops: list[str], value_size: int,
        with_mock: bool, profile_dir: str | None = None, prime_mb: int = PRIME_MB,
        zk_connect: str | None = None, partitions: int = 1) -> list[list]:
    """Measure every (event loop, scenario); returns table rows."""
    rows: list[list] = []
    topic = TOPIC if partitions == 1 else f"{TOPIC}-p{partitions}"
    # The mock would auto-create the topic with its default partition count (4).
    with h.mock_peer({topic: partitions} if partitions > 1 else None) as mock:
        for loop in loops:
            h.log(f"starting a pylog broker on the {loop} event loop")
            with h.pylog_cluster(1, BROKER_CONFIG, event_loop=loop, prime_mb=prime_mb,
                                 profile_dir=profile_dir, zk_connect=zk_connect) as cluster:
                target = h.pylog_target(cluster, f"pylog/{loop}")
                h.create_topics(target.bootstrap, [topic], partitions=partitions, config=topic_config(partitions))
                targets = [target, mock] if with_mock else [target]
                for name in scenarios:
                    conf = h.SCENARIOS[name]
                    h.log(f"scenario {name} {conf}: warm-up")
                    for t in targets:
                        h.produce(t, topic, max(records // 10, min(records, 10000)), value_size, conf,
                                  partitions=partitions)
                    res = h.interleaved(reps, targets, lambda t: h.produce(t, topic, records, value_size, conf,
                                                                           partitions=partitions))
                    base = h.summarize(res[target.name])
                    peer = h.summarize(res[mock.name]) if with_mock else None
                    rows.append([name, target.name, *row_cells(base), f"{base.rate / peer.rate:.2f}" if peer else "-"])
                    if peer and loop == loops[0]:
                        rows.append([name, "mock (C)", *row_cells(peer), "1.00"])
    return rows


def row_cells(s: h.Summary) -> list:
    """A summary's cells in the produce table: the common ones and the average batch size."""
    return [*h.summary_cells(s), f"{s.avg_batch_bytes / 1024:.0f}"]


HEADER = ["batching", "server", "records/s", "MB/s", "server CPU-s/GB (sys)", "server busy (of 1 core)",
          "avg batch KiB", "ratio vs mock"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench produce", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=3_000_000, help="records per timed run")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per target (the median is reported)")
    ap.add_argument("--scenarios", default="default,16k,1m", help=f"comma-separated, of {sorted(h.SCENARIOS)}")
    ap.add_argument("--loops", default="uvloop",
                    help="broker event loops to measure: asyncio,uvloop (uvloop: the brokers' default)")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=1, help="partitions of the topic, written round-robin")
    ap.add_argument("--no-mock", action="store_true", help="skip the librdkafka mock peer")
    ap.add_argument("--profile", metavar="DIR", help="cProfile the broker's event loop into DIR (slows it down)")
    ap.add_argument("--metrics-overhead", action="store_true",
                    help="instead: a broker with prometheus.listener on (scraped) against one with it off")
    ap.add_argument("--scrape-interval", type=float, default=1.0, help="with --metrics-overhead: seconds between scrapes")
    args = ap.parse_args(argv)
    scenarios = h.scenarios_arg(ap, args.scenarios)
    if args.partitions < 1:
        ap.error(f"--partitions must be >= 1, got {args.partitions}")
    print(f"<!-- {h.machine_notes()} -->")
    if args.metrics_overhead:
        from pylog.bench import metrics_overhead
        rows = metrics_overhead.run(args.records, args.reps, scenarios, args.value_size, args.scrape_interval,
                                    partitions=args.partitions)
        h.print_report(f"produce, /metrics on (scraped every {args.scrape_interval:g} s) vs off: {args.records:,} x "
                       f"{args.value_size} B records per run, {args.partitions} partition(s), RF 1, acks=1, "
                       f"median of {args.reps}",
                       metrics_overhead.HEADER, rows)
        return 0
    rows = run(args.records, args.reps, scenarios, args.loops.split(","), args.value_size, not args.no_mock,
               args.profile, partitions=args.partitions)
    h.print_report(f"produce: {args.records:,} x {args.value_size} B records per run, {args.partitions} "
                   f"partition{'s' if args.partitions > 1 else ''}, RF 1, acks=1, "
                   f"median of {args.reps}", HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
