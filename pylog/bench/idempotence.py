"""Idempotent vs plain produce throughput: the same client (confluent-kafka) against the same broker.

All producers use acks=all; "plain" allows 5 requests in flight (what enable.idempotence allows),
"plain-1" one. librdkafka's idempotent producer kept a single Produce request in flight per
partition in our runs (against librdkafka's own mock cluster too), so its throughput is one batch
per round trip: the "vs plain-1" ratio isolates what the producer id and sequence checks
cost, the "vs plain" ratio is what a user switching idempotence on sees. 100-byte records to one
partition, RF 1, per batching scenario (see _harness.SCENARIOS), runs interleaved, also against
the mock cluster for comparison. Goal (issue 12): idempotent >= 0.95 x plain. After the runs the
log end offset on pylog must equal the number of records sent there: none lost, none written twice.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from pylog.bench import _harness as h
from pylog.bench.produce import BROKER_CONFIG, PRIME_MB, TOPIC_CONFIG, row_cells

TOPIC = "bench-idempotence"
MODES = {
    "plain": {"acks": "all", "max.in.flight": 5, "enable.idempotence": False},
    "plain-1": {"acks": "all", "max.in.flight": 1, "enable.idempotence": False},
    "idempotent": {"acks": "all", "enable.idempotence": True},
}


def run(records: int, reps: int, scenarios: list[str], value_size: int, prime_mb: int = PRIME_MB,
        zk_connect: str | None = None, with_mock: bool = True) -> list[list]:
    """Measure every scenario in both modes on pylog (and the mock); returns table rows."""
    rows: list[list] = []
    sent = 0
    with h.mock_peer() as mock, h.pylog_cluster(1, BROKER_CONFIG, prime_mb=prime_mb,
                                                zk_connect=zk_connect) as cluster:
        pylog = h.pylog_target(cluster)
        servers = [pylog, mock] if with_mock else [pylog]
        targets = [h.Target(f"{s.name} {mode}", s.bootstrap, s.pids) for s in servers for mode in MODES]
        h.create_topics(pylog.bootstrap, [TOPIC], config=TOPIC_CONFIG)

        def produce(t: h.Target, n: int, conf: dict) -> h.RunResult:
            nonlocal sent
            server, mode = t.name.rsplit(" ", 1)
            result = h.produce(t, TOPIC, n, value_size, {**conf, **MODES[mode]})
            if server == pylog.name:
                sent += n
            return result

        for name in scenarios:
            conf = h.SCENARIOS[name]
            h.log(f"scenario {name} {conf}: warm-up")
            for t in targets:
                produce(t, max(records // 10, min(records, 10000)), conf)
            res = h.interleaved(reps, targets, lambda t: produce(t, records, conf))
            for s in servers:
                got = {mode: h.summarize(res[f"{s.name} {mode}"]) for mode in MODES}
                for mode, r in got.items():
                    rows.append([name, s.name, mode, *row_cells(r), f"{r.rate / got['plain'].rate:.2f}",
                                 f"{r.rate / got['plain-1'].rate:.2f}"])
        end = h.end_offset(pylog.bootstrap, TOPIC)[1]
        if end != sent:
            raise RuntimeError(f"the log ends at offset {end} after {sent} records were sent")
    return rows


HEADER = ["batching", "server", "producer", "records/s", "MB/s", "server CPU-s/GB (sys)", "server busy (of 1 core)",
          "avg batch KiB", "vs plain", "vs plain-1"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench idempotence", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=2_000_000, help="records per timed run")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per producer (the median is reported)")
    ap.add_argument("--scenarios", default="default,16k,1m", help=f"comma-separated, of {sorted(h.SCENARIOS)}")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--no-mock", action="store_true", help="skip the librdkafka mock peer")
    args = ap.parse_args(argv)
    scenarios = h.scenarios_arg(ap, args.scenarios)
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(args.records, args.reps, scenarios, args.value_size, with_mock=not args.no_mock)
    h.print_report(f"idempotence: {args.records:,} x {args.value_size} B records per run, 1 partition, RF 1, "
                   f"acks=all, median of {args.reps}", HEADER, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
