"""Consume throughput of a group member (`subscribe()`) against `assign()`, on pylog and on librdkafka's mock.

One partition, RF 1, 100-byte records; the same confluent-kafka consumer settings for every run. The mock
keeps at most 5 MB per partition, so both servers hold the same window of records (pylog.bench.consume's
window run) and each run reads it from the start to the end `passes` times, seeking back in between.
"assign" is a consumer that only assign()s the partition; "subscribe" first joins a fresh group with
subscribe() (the clients' defaults: range assignment, heartbeats every 3 s, auto-commit every 5 s, all
of which go on during the run), waits for the coordinator's assignment and then reads the same window
from the start. The clock starts once the partition is positioned, so a run compares how the two
servers serve a group member's fetches and its background group traffic, not how fast a group forms
(the rebalance table of `scripts/bench groups` measures that). Goal: subscribe on pylog >= 1.0 x the
mock's subscribe.
"""

from __future__ import annotations

import time
import uuid

import confluent_kafka as ck

from pylog.bench import _harness as h
from pylog.bench.consume import WINDOW, fill_topic

TOPIC = "bench-groups-consume"
# fetch.wait.max.ms as pylog.bench.consume sets it: with librdkafka's 500 the long poll at the end of
# each pass, which the two servers time differently, is what would be measured.
CONF = {"fetch.wait.max.ms": 1}


def _member(target: h.Target, timeout: float = 60) -> ck.Consumer:
    """A consumer in a fresh group that has been assigned TOPIC's partition by the coordinator."""
    c = h.consumer(target, {**CONF, "group.id": f"bench-consume-{uuid.uuid4().hex[:8]}",
                            "enable.auto.commit": True, "auto.offset.reset": "earliest"})
    c.subscribe([TOPIC])
    t0 = time.monotonic()
    while not c.assignment():
        if time.monotonic() - t0 > timeout:
            c.close()
            raise TimeoutError(f"{target.name}: no assignment {timeout:.0f} s after subscribe()")
        c.consume(100, 0.05)  # drives the join; what it reads is read again in the timed passes
    return c


def one_run(target: h.Target, mode: str, window: tuple[int, int], passes: int) -> h.RunResult:
    """Read the window `passes` times as an assign()-only consumer or as a group member."""
    c = _member(target) if mode == "subscribe" else h.consumer(target, CONF)
    try:
        # h.consume positions the partition with assign(): for the member that is the partition the
        # coordinator gave it (the group stays joined, heartbeating and auto-committing meanwhile).
        return h.consume(c, target, TOPIC, *window, passes=passes)
    finally:
        c.close()


def run(records: int, reps: int) -> None:
    """Fill the window on the mock and on one pylog broker, then alternate assign and subscribe runs."""
    passes = max(1, records // WINDOW)
    with h.mock_peer() as mock, h.pylog_cluster(1) as one:
        pylog = h.pylog_target(one, "pylog")
        h.create_topics(pylog.bootstrap, [TOPIC], 1)
        windows = {t.name: fill_topic(t, TOPIC, WINDOW, 100) for t in (mock, pylog)}
        h.log(f"{WINDOW:,} records x {passes} passes per run; warm-up")
        for t in (mock, pylog):
            one_run(t, "assign", windows[t.name], 1)
        runs = {(t.name, m): h.Target(f"{t.name} {m}", t.bootstrap, t.pids) for t in (mock, pylog)
                for m in ("assign", "subscribe")}
        res = h.interleaved(reps, list(runs.values()), lambda t: one_run(
            t, t.name.split()[-1], windows[t.name.split()[0]], passes))
        sums = {key: h.summarize(res[t.name]) for key, t in runs.items()}
    rows = []
    for name in (mock.name, pylog.name):
        a, s = sums[(name, "assign")], sums[(name, "subscribe")]
        rows.append([name, a.rate, s.rate, f"{s.rate / a.rate:.2f}", f"{s.rate / sums[(mock.name, 'subscribe')].rate:.2f}",
                     f"{a.cpu_per_gb:.2f} / {s.cpu_per_gb:.2f}"])
    h.print_report(f"Consume in a group: {WINDOW:,} x 100 B records x {passes} passes, 1 partition, RF 1, median "
                   f"of {reps}; {h.machine_notes()}",
                   ["server", "assign(): records/s", "subscribe(): records/s", "subscribe / assign",
                    "subscribe vs the mock's", "server CPU-s/GB assign / subscribe"], rows)
