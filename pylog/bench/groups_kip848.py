"""A group through a change, classic protocol against KIP-848 (`scripts/bench groups --protocol classic,consumer`).

One pylog broker, one topic of 64 partitions that a producer keeps writing to at a steady rate (each
value is its production time). Eight confluent-kafka members (each its own process, librdkafka's
defaults plus `group.protocol`) consume it; once every partition flows, a ninth member starts and one
of the eight is killed with SIGKILL at the same moment. Measured from that moment:
- recovered: until every partition has had a record produced after it consumed (the killed member's
  partitions wait for its session to expire: 6 s on both sides here, the classic members'
  session.timeout.ms and the broker's group.consumer.session.timeout.ms);
- throughput before (the 5 s before) and during the change (until recovered), in records/s;
- the longest time no member consumed anything (classic's eager assignors stop the world on a rebalance;
  KIP-848 promises no such pause).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import confluent_kafka as ck

from pylog.bench import _harness as h

TOPIC, GROUP = "bench-kip848", "bench-kip848-g"
SESSION_MS = 6000
BROKER = {"group.consumer.min.session.timeout.ms": str(SESSION_MS),
          "group.consumer.session.timeout.ms": str(SESSION_MS),
          "group.consumer.min.heartbeat.interval.ms": "2000", "group.consumer.heartbeat.interval.ms": "2000"}


def worker(bootstrap: str, protocol: str, out_path: str) -> None:
    """A member: `consumed_ms partition produced_ms` per record to out_path, until SIGTERM."""
    conf = {"bootstrap.servers": bootstrap, "group.id": GROUP, "auto.offset.reset": "latest", "log_level": 3,
            "group.protocol": protocol}
    if protocol == "classic":
        conf.update({"session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 2000})
    c = ck.Consumer(conf)
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    c.subscribe([TOPIC])
    with open(out_path, "w", buffering=1 << 16) as out:
        last_flush = time.monotonic()
        while not stop:
            for m in c.consume(500, 0.1):
                if m.error() is None:
                    out.write(f"{int(time.time() * 1000)} {m.partition()} {m.value().decode()}\n")
            if time.monotonic() - last_flush > 0.1:  # a killed member loses at most 100 ms of lines
                out.flush()
                last_flush = time.monotonic()
    c.close()


def _producer(bootstrap: str, rate: int, partitions: int, stop: threading.Event) -> None:
    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 3})
    i, t0 = 0, time.monotonic()
    while not stop.is_set():
        due = int((time.monotonic() - t0) * rate)
        while i < due:
            p.produce(TOPIC, str(int(time.time() * 1000)).encode(), partition=i % partitions)
            i += 1
        p.poll(0)
        time.sleep(0.005)
    p.flush(30)


def _read(paths: list[Path]) -> list[tuple[int, int, int]]:
    out = []
    for path in paths:
        if path.exists():
            for line in path.read_text().splitlines():
                parts = line.split()
                if len(parts) == 3:
                    out.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return sorted(out)


def one_run(protocol: str, members: int, partitions: int, rate: int, after_s: float) -> dict[str, float]:
    """One change (a member joins, another is killed) under `protocol`; the figures."""
    with h.pylog_cluster(1, BROKER) as cluster:
        bootstrap = cluster.bootstrap
        h.create_topics(bootstrap, [TOPIC], partitions)
        base = Path(cluster.base)
        stop = threading.Event()
        prod = threading.Thread(target=_producer, args=(bootstrap, rate, partitions, stop))
        prod.start()
        procs: list[subprocess.Popen] = []

        def start(i: int) -> None:
            procs.append(subprocess.Popen([sys.executable, "-m", "pylog.bench.groups_kip848", "--worker", bootstrap,
                                           protocol, str(base / f"m{i}.out")], stdout=subprocess.DEVNULL))
        try:
            for i in range(members):
                start(i)
            paths = [base / f"m{i}.out" for i in range(members + 1)]
            deadline = time.monotonic() + 120
            while True:  # every partition flowing: each had a record consumed within the last second
                time.sleep(1)
                now = int(time.time() * 1000)
                recent = {p for c, p, _ in _read(paths) if c > now - 1000}
                if len(recent) == partitions:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{protocol}: only {len(recent)} of {partitions} partitions flow")
            time.sleep(5)
            t0 = int(time.time() * 1000)
            start(members)
            procs[0].kill()
            time.sleep(after_s)
        finally:
            stop.set()
            prod.join(60)
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)
        return _figures(_read(paths), t0, partitions)


def _figures(records: list[tuple[int, int, int]], t0: int, partitions: int) -> dict[str, float]:
    first_after: dict[int, int] = {}
    for consumed, p, produced in records:
        if produced >= t0 and p not in first_after:
            first_after[p] = consumed
    if len(first_after) < partitions:
        raise RuntimeError(f"only {len(first_after)} of {partitions} partitions consumed again")
    recovered = max(first_after.values())
    before = sum(1 for c, _, _ in records if t0 - 5000 <= c < t0) / 5
    during = sum(1 for c, _, _ in records if t0 <= c < recovered) / max((recovered - t0) / 1000, 0.001)
    times = [c for c, _, _ in records if t0 - 5000 <= c <= recovered + 1000]
    pause = max((b - a for a, b in zip(times, times[1:])), default=0)
    return {"recovered_s": (recovered - t0) / 1000, "before": before, "during": during, "pause_s": pause / 1000}


def run(protocols: list[str], reps: int, members: int = 8, partitions: int = 64, rate: int = 2000,
        after_s: float = 20) -> None:
    """Each protocol `reps` times, interleaved; the medians."""
    notes = h.machine_notes()
    results: dict[str, list[dict[str, float]]] = {p: [] for p in protocols}
    for _ in range(reps):
        for proto in protocols:
            r = one_run(proto, members, partitions, rate, after_s)
            results[proto].append(r)
            h.log(f"{proto}: {r}")
    h.print_report(f"A {members + 1}th member joins while one of {members} is killed -9 ({partitions} partitions, "
                   f"{rate} records/s produced, sessions {SESSION_MS} ms; median of {reps}); {notes}",
                   ["protocol", "every partition consumed again after (s)", "records/s before",
                    "records/s during the change", "longest stop of all consumption (s)"],
                   [[p, h.median([x["recovered_s"] for x in v]), h.median([x["before"] for x in v]),
                     h.median([x["during"] for x in v]), h.median([x["pause_s"] for x in v])]
                    for p, v in results.items()])


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:5])
    else:
        run(sys.argv[1].split(",") if len(sys.argv) > 1 else ["classic", "consumer"], 1)
