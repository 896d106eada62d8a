"""Transactional produce throughput and commit latency: confluent-kafka against pylog and librdkafka's mock.

Throughput (one pylog broker, RF 1, one partition, acks=all, 100-byte records, runs interleaved):
"plain" (enable.idempotence false), "idempotent" (enable.idempotence true: switching that one
setting is what is measured), and transactional producers committing every --every-ms
milliseconds ("txn-<ms>ms") and every --every-records records ("txn-<n>rec"). The same producers
run against librdkafka's mock cluster in the same run: "vs plain" compares producers on one
server, "vs mock" compares servers for one producer. Goals (issue 12): idempotent >= 0.95 x plain,
transactional >= 0.90 x plain, pylog/mock >= 1.0 for the transactional workload.

Commit latency (three pylog brokers, RF 3, min.insync.replicas 2, __transaction_state RF 3):
for --seconds, small transactions whose records are flushed (acknowledged) first, so that the
timed commit_transaction() call is the EndTxn round trip and its markers, as the issue defines it.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from typing import Any, Sequence

import confluent_kafka as ck

from pylog.bench import _harness as h

TOPIC = "bench-transactions"
LATENCY_TOPIC = "bench-txn-latency"
# A single broker cannot host the RF 3 __transaction_state Kafka defaults to; few partitions keep
# the coordinator's startup load out of the first run.
ONE_BROKER = {"transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
              "transaction.state.log.num.partitions": "5"}
THREE_BROKERS = {"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
                 "transaction.state.log.num.partitions": "5", "offsets.topic.replication.factor": "3"}
ACKS_ALL = {"acks": "all"}


class BenchError(Exception):
    """Parameters the benchmark cannot run with (printed as one line, exit 1)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line and exit 1 like the other checks (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BenchError(message)


def modes(every_ms: int, every_records: int) -> dict[str, dict[str, Any]]:
    """Producer name -> (librdkafka settings, commit policy); transactional ones carry a '_commit' key."""
    return {
        "plain": {**ACKS_ALL, "enable.idempotence": False},
        "idempotent": {**ACKS_ALL, "enable.idempotence": True},
        f"txn-{every_ms}ms": {"_commit": ("ms", every_ms)},
        f"txn-{every_records}rec": {"_commit": ("records", every_records)},
    }


def check(records: int, reps: int, seconds: float, value_size: int, every_ms: int, every_records: int) -> None:
    """Raise BenchError naming the first flag the benchmark cannot run with."""
    for flag, value, low in (("--records", records, 1), ("--reps", reps, 1), ("--seconds", seconds, 0),
                             ("--value-size", value_size, 0), ("--every-ms", every_ms, 1),
                             ("--every-records", every_records, 1)):
        if value < low:
            raise BenchError(f"{flag} must be >= {low}, got {value}")


def txn_produce(target: h.Target, topic: str, n: int, value_size: int, policy: tuple[str, int],
                tag: str) -> tuple[h.RunResult, int]:
    """Produce n records in transactions committed per `policy`; time from first send to last commit."""
    p = ck.Producer({"bootstrap.servers": target.bootstrap, "transactional.id": f"bench-{tag}-{time.monotonic_ns()}",
                     "queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 2_000_000,
                     "log_level": 3})
    p.init_transactions(60)
    p.list_topics(topic, timeout=30)
    kind, every = policy
    value = b"x" * value_size
    commits = 0
    c0 = target.cpu()
    t0 = time.perf_counter()
    p.begin_transaction()
    started = t0
    for i in range(1, n + 1):
        try:
            p.produce(topic, value, partition=0)
        except BufferError:
            p.poll(0.005)
            p.produce(topic, value, partition=0)
        due = i % every == 0 if kind == "records" else i % 100 == 0 and (time.perf_counter() - started) * 1000 >= every
        if due and i < n:
            p.commit_transaction(60)
            commits += 1
            p.begin_transaction()
            started = time.perf_counter()
    p.commit_transaction(60)
    elapsed = time.perf_counter() - t0
    c1 = target.cpu()
    return h.RunResult(n, elapsed, c1[0] - c0[0], c1[1] - c0[1], value_size), commits + 1


def throughput(records: int, reps: int, value_size: int, every_ms: int, every_records: int,
               with_mock: bool = True, zk_connect: str | None = None) -> list[list]:
    """Every producer mode against pylog (and the mock), interleaved; returns table rows."""
    producers = modes(every_ms, every_records)
    commits: dict[str, list[int]] = {}
    with h.mock_peer() as mock, h.pylog_cluster(1, ONE_BROKER, zk_connect=zk_connect) as cluster:
        pylog = h.pylog_target(cluster)
        servers = [pylog, mock] if with_mock else [pylog]
        h.create_topics(pylog.bootstrap, [TOPIC])
        targets = [h.Target(f"{s.name} {m}", s.bootstrap, s.pids) for s in servers for m in producers]

        def one(t: h.Target, n: int) -> h.RunResult:
            mode = t.name.rsplit(" ", 1)[1]
            conf = producers[mode]
            if "_commit" not in conf:
                return h.produce(t, TOPIC, n, value_size, conf)
            result, count = txn_produce(t, TOPIC, n, value_size, conf["_commit"], mode)
            commits.setdefault(t.name, []).append(count)
            return result

        h.log("warm-up")
        for t in targets:
            one(t, max(records // 10, min(records, 10000)))
        commits.clear()
        res = h.interleaved(reps, targets, lambda t: one(t, records))
    return rows_for(res, commits, [s.name for s in servers], list(producers), pylog.name)


def rows_for(res: dict[str, list[h.RunResult]], commits: dict[str, list[int]], servers: list[str],
             producers: list[str], pylog: str) -> list[list]:
    """Table rows: per server and producer, the medians, commits per run, vs plain and vs the mock."""
    rows = []
    for s in servers:
        for m in producers:
            r = h.summarize(res[f"{s} {m}"])
            plain = h.summarize(res[f"{s} plain"]).rate
            peer = res.get(f"mock {m}") if s == pylog else None
            n = commits.get(f"{s} {m}")
            rows.append([s, m, r.rate, r.mb_per_s, f"{r.busy:.0%}", f"{statistics.median(n):.0f}" if n else "-",
                         f"{r.rate / plain:.2f}", f"{r.rate / h.summarize(peer).rate:.2f}" if peer else "-"])
    return rows


def percentile(xs: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank; the latency table's p50 and p99."""
    if not xs:
        raise BenchError("no commits were measured; raise --seconds")
    ordered = sorted(xs)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def commit_latency(seconds: float, value_size: int, batch: int = 100, zk_connect: str | None = None) -> list[float]:
    """Milliseconds per commit_transaction() of `batch` already-acknowledged records, RF 3, for `seconds`."""
    with h.pylog_cluster(3, THREE_BROKERS, zk_connect=zk_connect) as cluster:
        h.create_topics(cluster.bootstrap, [LATENCY_TOPIC], rf=3, config={"min.insync.replicas": "2"})
        h.wait_leaders(cluster.bootstrap, [LATENCY_TOPIC], 1, isr=3)
        return _timed_commits(cluster.bootstrap, seconds, value_size, batch)


def _timed_commits(bootstrap: str, seconds: float, value_size: int, batch: int) -> list[float]:
    # The producer is gone when this returns, before the caller stops the brokers under it.
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "bench-latency", "log_level": 3})
    p.init_transactions(60)
    value = b"x" * value_size
    out: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end or not out:
        p.begin_transaction()
        for _ in range(batch):
            p.produce(LATENCY_TOPIC, value, partition=0)
        p.flush(60)
        t0 = time.perf_counter()
        p.commit_transaction(60)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def latency_row(ms: list[float]) -> list:
    """The latency table's one row: commits, p50, p99 and max in milliseconds."""
    return [len(ms), f"{percentile(ms, 50):.1f}", f"{percentile(ms, 99):.1f}", f"{max(ms):.1f}"]


HEADER = ["server", "producer", "records/s", "MB/s", "server busy (of 1 core)", "commits per run", "vs plain",
          "vs mock"]
LATENCY_HEADER = ["commits", "p50 ms", "p99 ms", "max ms"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints two Markdown tables on stdout (progress on stderr)."""
    ap = _Parser(prog="scripts/bench transactions", description=__doc__,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000, help="records per timed throughput run")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per producer (the median is reported)")
    ap.add_argument("--seconds", type=float, default=30, help="how long to measure commit latency (0: skip)")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--every-ms", type=int, default=100, help="commit interval of the time-based producer")
    ap.add_argument("--every-records", type=int, default=1000, help="commit interval of the count-based producer")
    ap.add_argument("--no-mock", action="store_true", help="skip the librdkafka mock peer")
    try:
        a = ap.parse_args(argv)
        check(a.records, a.reps, a.seconds, a.value_size, a.every_ms, a.every_records)
        print(f"<!-- {h.machine_notes()} -->")
        rows = throughput(a.records, a.reps, a.value_size, a.every_ms, a.every_records, not a.no_mock)
        h.print_report(f"transactions: {a.records:,} x {a.value_size} B records per run, 1 partition, RF 1, "
                       f"acks=all, median of {a.reps}", HEADER, rows)
        if a.seconds > 0:
            h.log(f"commit latency, 3 brokers, RF 3, {a.seconds:g} s")
            h.print_report(f"commit latency: commit_transaction() of 100 acknowledged {a.value_size} B records, "
                           f"3 brokers, RF 3, min.insync.replicas 2, {a.seconds:g} s", LATENCY_HEADER,
                           [latency_row(commit_latency(a.seconds, a.value_size))])
    except BenchError as e:
        print(f"scripts/bench transactions: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
