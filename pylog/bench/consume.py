"""Consume throughput: confluent-kafka against one pylog broker and against librdkafka's mock cluster.

100-byte records (--value-size), one partition (--partitions: several, each holding its own window), RF 1, the same consumer (assign + consume(10000)) for both
targets. The mock keeps at most 5 MB per partition, so the head-to-head ratio comes from a
"window" run: both servers hold the same 40,000 records (fewer for bigger values, see window_for;
written as ~1 MB batches) and the
consumer reads them from offset 0 to the end, seeks back and repeats until it has read
--records records (with fetch.wait.max.ms=1 for both targets: at the end of each pass the
prefetcher's fetch at the high watermark long-polls, the seek waits for it, and the two servers
time that wait differently -- at 5 ms the mock answered ~5 ms sooner per pass, at 1 ms both
passes took the same 31 ms). A second "full log" run reads --records distinct records from pylog alone
(~430 MB of 100-byte records, served from the page cache with sendfile). Prints records/s, MB/s,
the ratio and the server's CPU seconds per GB of record values served. Goal: ratio >= 1.0.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from pylog.bench import _harness as h

WINDOW_TOPIC = "bench-window"
FULL_TOPIC = "bench-full"
WINDOW = 40_000  # 100-byte records that fit in the mock's 5 MB per partition
# The mock drops a partition's oldest batches past 5 MB; 4.4 MB of (value + ~10 B record framing)
# leaves room for batch headers and a ~1 MB batch's rounding, and gives exactly WINDOW at 100 B.
MOCK_WINDOW_BYTES = 4_400_000
RECORD_OVERHEAD = 10
MIN_WINDOW = 100  # fewer records per pass and the seek between passes is what gets measured


class BenchError(Exception):
    """Parameters the benchmark cannot run with (printed as one line, exit 1)."""


def window_for(value_size: int) -> int:
    """Records of value_size bytes the window run uses so that all of them fit in the mock."""
    if value_size < 0:
        raise BenchError(f"--value-size must be >= 0, got {value_size}")
    window = min(WINDOW, MOCK_WINDOW_BYTES // (value_size + RECORD_OVERHEAD))
    if window < MIN_WINDOW:
        largest = MOCK_WINDOW_BYTES // MIN_WINDOW - RECORD_OVERHEAD
        raise BenchError(f"--value-size {value_size}: the mock keeps 5 MB per partition, too few records "
                         f"({window}) for a window run; use --value-size <= {largest} or --no-mock")
    return window


def fill_topic(target: h.Target, topic: str, n: int, value_size: int, partitions: int = 1) -> dict[int, tuple[int, int]]:
    """Write n records per partition (round-robin, ~1 MB batches); {partition: (low, high)}."""
    h.produce(target, topic, n * partitions, value_size, h.SCENARIOS["1m"], partitions=partitions)
    ranges = {}
    for part in range(partitions):
        lo, hi = ranges[part] = h.end_offset(target.bootstrap, topic, part)
        if hi - lo != n:
            raise BenchError(f"{target.name}: {topic} [{part}] holds offsets {lo}..{hi}, expected {n} records")
    return ranges


def _read(c, target: h.Target, topic: str, ranges: dict[int, tuple[int, int]], passes: int,
          value_size: int) -> h.RunResult:
    if len(ranges) == 1:  # one partition: the seek-per-pass reader the earlier figures were measured with
        return h.consume(c, target, topic, *ranges[0], passes=passes, value_size=value_size)
    return h.consume_partitions(c, target, topic, ranges, passes=passes, value_size=value_size)


def run(records: int, reps: int, loops: list[str], value_size: int, with_mock: bool,
        profile_dir: str | None = None, zk_connect: str | None = None, window: int = WINDOW,
        partitions: int = 1) -> list[list]:
    """Window runs (pylog vs mock) and full-log runs (pylog) per event loop; returns table rows.

    With several partitions, each holds `window` records and a full-log run reads `records` in all."""
    rows: list[list] = []
    passes = max(1, records // (window * partitions))
    label = f"window ({window:,} records{f' x {partitions} partitions' if partitions > 1 else ''}, re-read)"
    with h.mock_peer({WINDOW_TOPIC: partitions} if partitions > 1 else None) as mock:
        if with_mock:
            mock_window = fill_topic(mock, WINDOW_TOPIC, window, value_size, partitions)
        for loop in loops:
            h.log(f"starting a pylog broker on the {loop} event loop")
            with h.pylog_cluster(1, event_loop=loop, profile_dir=profile_dir, zk_connect=zk_connect) as cluster:
                target = h.pylog_target(cluster, f"pylog/{loop}")
                h.create_topics(target.bootstrap, [WINDOW_TOPIC, FULL_TOPIC], partitions=partitions)
                windows = {target.name: fill_topic(target, WINDOW_TOPIC, window, value_size, partitions)}
                full = fill_topic(target, FULL_TOPIC, records // partitions, value_size, partitions)
                targets = [target]
                if with_mock:
                    windows[mock.name] = mock_window
                    targets.append(mock)
                consumers = {t.name: h.consumer(t, {"fetch.wait.max.ms": 1}) for t in targets}
                try:
                    h.log(f"window: {window:,} records x {partitions} partitions x {passes} passes; warm-up")
                    for t in targets:
                        _read(consumers[t.name], t, WINDOW_TOPIC, windows[t.name], 2, value_size)
                    res = h.interleaved(reps, targets, lambda t: _read(
                        consumers[t.name], t, WINDOW_TOPIC, windows[t.name], passes, value_size))
                    base = h.summarize(res[target.name])
                    peer = h.summarize(res[mock.name]) if with_mock else None
                    rows.append([label, target.name, *h.summary_cells(base),
                                 f"{base.rate / peer.rate:.2f}" if peer else "-"])
                    if peer and loop == loops[0]:
                        rows.append([label, "mock (C)", *h.summary_cells(peer), "1.00"])
                    n_full = records // partitions * partitions
                    h.log(f"full log: {n_full:,} records")
                    res = h.interleaved(reps, [target], lambda t: _read(
                        consumers[t.name], t, FULL_TOPIC, full, 1, value_size))
                    rows.append([f"full log ({n_full:,} records)", target.name,
                                 *h.summary_cells(h.summarize(res[target.name])), "-"])
                finally:
                    for c in consumers.values():
                        c.close()
    return rows


HEADER = ["read", "server", "records/s", "MB/s", "server CPU-s/GB (sys)", "server busy (of 1 core)", "ratio vs mock"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench consume", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=4_000_000, help="records read per timed run")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per target (the median is reported)")
    ap.add_argument("--loops", default="uvloop",
                    help="broker event loops to measure: asyncio,uvloop (uvloop: the brokers' default)")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=1, help="partitions of both topics, written round-robin")
    ap.add_argument("--no-mock", action="store_true", help="skip the librdkafka mock peer")
    ap.add_argument("--profile", metavar="DIR", help="cProfile the broker's event loop into DIR (slows it down)")
    args = ap.parse_args(argv)
    if args.partitions < 1:
        ap.error(f"--partitions must be >= 1, got {args.partitions}")
    try:
        window = window_for(args.value_size) if not args.no_mock else WINDOW
        print(f"<!-- {h.machine_notes()} -->")
        rows = run(args.records, args.reps, args.loops.split(","), args.value_size, not args.no_mock,
                   args.profile, window=window, partitions=args.partitions)
    except BenchError as e:
        print(f"scripts/bench consume: {e}", file=sys.stderr)
        return 1
    h.print_report(f"consume: {args.value_size} B records, {args.partitions} partition(s), RF 1, consume(10000) batches, "
                   f"median of {args.reps}", HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
