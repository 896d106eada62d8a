"""Idempotent vs plain produce throughput: the same client (confluent-kafka) against the same broker.

Both producers use acks=all and at most 5 requests in flight (what enable.idempotence implies), so
the only difference is the producer id and sequence numbers in the batches and the broker's
per-producer sequence checks. 100-byte records to one partition, RF 1, per batching scenario (see
_harness.SCENARIOS), runs interleaved. Goal (issue 12): idempotent >= 0.95 x plain. After the
runs the partition's log end offset must equal the number of records sent: none lost, none twice.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from pylog.bench import _harness as h
from pylog.bench.produce import BROKER_CONFIG, PRIME_MB, TOPIC_CONFIG, _fmt

TOPIC = "bench-idempotence"
MODES = {
    "plain": {"acks": "all", "max.in.flight": 5, "enable.idempotence": False},
    "idempotent": {"acks": "all", "enable.idempotence": True},
}


def run(records: int, reps: int, scenarios: list[str], value_size: int, prime_mb: int = PRIME_MB,
        zk_connect: str | None = None) -> list[list]:
    """Measure every scenario in both modes; returns table rows."""
    rows: list[list] = []
    sent = 0
    with h.pylog_cluster(1, BROKER_CONFIG, prime_mb=prime_mb, zk_connect=zk_connect) as cluster:
        base = h.pylog_target(cluster)
        targets = [h.Target(mode, base.bootstrap, base.pids) for mode in MODES]
        h.create_topics(base.bootstrap, [TOPIC], config=TOPIC_CONFIG)

        def produce(t: h.Target, n: int, conf: dict) -> h.RunResult:
            nonlocal sent
            result = h.produce(t, TOPIC, n, value_size, {**conf, **MODES[t.name]})
            sent += n
            return result

        for name in scenarios:
            conf = h.SCENARIOS[name]
            h.log(f"scenario {name} {conf}: warm-up")
            for t in targets:
                produce(t, max(records // 10, min(records, 10000)), conf)
            res = h.interleaved(reps, targets, lambda t: produce(t, records, conf))
            plain, idem = h.summarize(res["plain"]), h.summarize(res["idempotent"])
            rows.append([name, "plain", *_fmt(plain), "1.00"])
            rows.append([name, "idempotent", *_fmt(idem), f"{idem.rate / plain.rate:.2f}"])
        end = h.end_offset(base.bootstrap, TOPIC)[1]
        if end != sent:
            raise RuntimeError(f"the log ends at offset {end} after {sent} records were sent")
    return rows


HEADER = ["batching", "producer", "records/s", "MB/s", "server CPU-s/GB (sys)", "server busy (of 1 core)",
          "avg batch KiB", "ratio vs plain"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench idempotence", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=2_000_000, help="records per timed run")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per producer (the median is reported)")
    ap.add_argument("--scenarios", default="default,16k,1m", help=f"comma-separated, of {sorted(h.SCENARIOS)}")
    ap.add_argument("--value-size", type=int, default=100)
    args = ap.parse_args(argv)
    scenarios = h.scenarios_arg(ap, args.scenarios)
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(args.records, args.reps, scenarios, args.value_size)
    h.print_report(f"idempotence: {args.records:,} x {args.value_size} B records per run, 1 partition, RF 1, "
                   f"acks=all, max 5 in flight, median of {args.reps}", HEADER, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
