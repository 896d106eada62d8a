"""Shared plumbing for the broker benchmarks: clusters, the librdkafka mock peer, clients, CPU, tables.

The peer is librdkafka's built-in mock cluster (C, in memory) run in a process of its own
(`python -m pylog.bench._harness mock-serve`), so that both targets are separate processes
reached over loopback TCP by the same confluent-kafka client, and the server's CPU can be read
from /proc the same way for both. Known limits of the mock that shape the benchmarks: it keeps
at most 5 MB (or 100,000 batches) per partition and answers each Fetch with one batch per
partition (librdkafka src/rdkafka_mock.c).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic

from pylog.localcluster import LocalCluster

MB = 1024 * 1024  # MB/s figures are MiB of record values per second, as in Kreps' table (anchors.md 1.1)
GB = 1e9  # CPU seconds per GB ingested: 10^9 bytes of record values (conservative: excludes record overhead)
_CLK_TCK = os.sysconf("SC_CLK_TCK")

# Producer settings per scenario (on top of acks and the queue limits). "default" is librdkafka's
# defaults (linger.ms 5, batch.size 1,000,000, batch.num.messages 10,000); "16k" is the Java
# producer's batch.size; "1m" aims at ~1 MB batches for the broker CPU/GB goal.
SCENARIOS: dict[str, dict[str, Any]] = {
    "default": {},
    "16k": {"batch.size": 16384, "linger.ms": 5},
    "1m": {"batch.size": 1048576, "batch.num.messages": 1000000, "linger.ms": 100},
}


def log(msg: str) -> None:
    """Progress on stderr (stdout carries the tables)."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cpu_times(pid: int) -> tuple[float, float]:
    """(utime, stime) of a process so far in seconds, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / _CLK_TCK, int(fields[12]) / _CLK_TCK


def median(xs: Sequence[float]) -> float:
    """Median (the figure the tables report; runs are repeated to damp the shared machine's noise)."""
    return statistics.median(xs)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table; floats get a sensible number of digits."""
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def scenarios_arg(ap: argparse.ArgumentParser, text: str) -> list[str]:
    """The names in --scenarios (comma-separated), each one of SCENARIOS; a usage error otherwise."""
    scenarios = text.split(",")
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenarios {unknown}")
    return scenarios


def print_report(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A benchmark's result on stdout: its one-line title, then its Markdown table."""
    print(title)
    print(markdown_table(headers, rows))


def machine_notes() -> str:
    """One line describing where the figures come from."""
    model = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores ({model}), load avg {load[0]:.2f} at start, Python {platform.python_version()}, "
            f"confluent-kafka {ck.__version__} / librdkafka {ck.libversion()[0]}")


# -- servers ------------------------------------------------------------------------------------


@dataclass
class Target:
    """A server the client talks to: its bootstrap address and the pids whose CPU we charge it."""

    name: str
    bootstrap: str
    pids: list[int]

    def cpu(self) -> tuple[float, float]:
        """(user, system) CPU seconds used so far by the server processes."""
        times = [cpu_times(p) for p in self.pids]
        return sum(t[0] for t in times), sum(t[1] for t in times)


@contextlib.contextmanager
def mock_peer(topics: dict[str, int] | None = None) -> Iterator[Target]:
    """librdkafka's mock cluster (1 broker) in a helper process, with `topics` ({name: partitions})
    created in it; stopped by pid on exit."""
    spec = [f"{name}:{n}" for name, n in (topics or {}).items()]
    proc = subprocess.Popen([sys.executable, "-m", "pylog.bench._harness", "mock-serve", *spec], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        if not line.startswith("BOOTSTRAP "):
            raise RuntimeError(f"mock peer did not start (got {line!r})")
        yield Target("mock", line.split()[1], [proc.pid])
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _mock_serve(topics: Sequence[str] = ()) -> None:
    """Run a one-broker mock cluster until stdin closes (the helper process's main)."""
    if topics:
        _mock_serve_with_topics(topics)
        return
    p = ck.Producer({"test.mock.num.brokers": 1, "log_level": 0})
    b = next(iter(p.list_topics(timeout=10).brokers.values()))
    print(f"BOOTSTRAP {b.host}:{b.port}", flush=True)
    sys.stdin.read()


def _mock_serve_with_topics(topics: Sequence[str]) -> None:
    """The same mock cluster, made through librdkafka's C API so topics get their partition count.

    The mock answers CreateTopics only through a controller its Metadata does not name (the
    admin client times out "waiting for controller"), and auto-creates topics with 4 partitions;
    rd_kafka_mock_topic_create is the mock's own way to make one. confluent-kafka ships the
    library it is built on, so this is the same librdkafka as the client's.
    """
    import ctypes
    libs = Path(ck.__file__).parent.parent / "confluent_kafka.libs"
    lib = ctypes.CDLL(str(next(libs.glob("librdkafka*.so*"))))
    for fn in ("rd_kafka_conf_new", "rd_kafka_new", "rd_kafka_mock_cluster_new"):
        getattr(lib, fn).restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    errstr = ctypes.create_string_buffer(512)
    rk = lib.rd_kafka_new(0, lib.rd_kafka_conf_new(), errstr, len(errstr))  # 0: RD_KAFKA_PRODUCER
    if not rk:
        raise RuntimeError(f"rd_kafka_new: {errstr.value.decode()}")
    mcluster = lib.rd_kafka_mock_cluster_new(rk, 1)
    for spec in topics:
        name, n = spec.rsplit(":", 1)
        err = lib.rd_kafka_mock_topic_create(mcluster, name.encode(), int(n), 1)
        if err:
            raise RuntimeError(f"rd_kafka_mock_topic_create({name}, {n}): error {err}")
    print(f"BOOTSTRAP {lib.rd_kafka_mock_cluster_bootstraps(mcluster).decode()}", flush=True)
    sys.stdin.read()


def prime_page_cache(directory: str, mb: int) -> None:
    """Write and delete `mb` MiB in `directory` so later page-cache writes reuse touched memory.

    On this VM the first touch of guest memory that was never used is charged to the process
    that faults it in: appending to page cache measured 1.5-2.5 CPU-s/GB in fresh memory and
    0.15 CPU-s/GB in recycled memory (same file, same 1 MB writes). A long-running broker's
    page cache is always recycled memory, so the benchmarks prime once and bound the logs
    with retention, and report user and system CPU separately.
    """
    if mb <= 0:
        return
    path = os.path.join(directory, "prime.tmp")
    chunk = b"\0" * MB
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(mb):
            os.write(fd, chunk)
    finally:
        os.close(fd)
        os.unlink(path)


@contextlib.contextmanager
def pylog_cluster(n_brokers: int = 1, overrides: dict[str, str] | None = None, event_loop: str | None = None,
                  keep: bool = False, prime_mb: int = 0, profile_dir: str | None = None,
                  zk_connect: str | None = None, extra_listeners: dict[str, str] | None = None
                  ) -> Iterator[LocalCluster]:
    """A fresh ZooKeeper + n pylog brokers in a temporary directory, removed afterwards unless `keep`.

    With `profile_dir`, each broker's event loop runs under cProfile and leaves
    `broker-<loop>-<pid>.prof` there when stopped (read it with `python -m pstats`). With
    `zk_connect` the brokers use that ZooKeeper instead of starting one (the smoke test does).
    """
    base = tempfile.mkdtemp(prefix="pylog-bench-")
    prime_page_cache(base, prime_mb)
    saved = {k: os.environ.get(k) for k in ("PYLOG_EVENT_LOOP", "PYLOG_PROFILE")}
    if event_loop is not None:  # else PYLOG_EVENT_LOOP as set, or the brokers' default (uvloop where installed)
        os.environ["PYLOG_EVENT_LOOP"] = event_loop  # inherited by the broker processes LocalCluster starts
    if profile_dir:
        os.makedirs(profile_dir, exist_ok=True)
        os.environ["PYLOG_PROFILE"] = os.path.join(os.path.abspath(profile_dir),
                                                   f"broker-{event_loop or 'default'}-%p.prof")
    cluster = LocalCluster(base, n_brokers, overrides=overrides, zk_connect=zk_connect, extra_listeners=extra_listeners)
    try:
        cluster.start()
        yield cluster
    finally:
        try:
            cluster.stop()
        except Exception:
            cluster.kill_all()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if keep:
            log(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


def pylog_target(cluster: LocalCluster, name: str = "pylog") -> Target:
    """The cluster as a Target charging the CPU of every running broker."""
    return Target(name, cluster.bootstrap, [b.pid for b in cluster.brokers.values() if b.pid is not None])


# -- admin ----------------------------------------------------------------------------------------


def create_topics(bootstrap: str, names: Sequence[str], partitions: int = 1, rf: int = 1,
                  config: dict[str, str] | None = None, timeout: float = 120) -> None:
    """CreateTopics through the stock admin client, then wait until every partition has a leader."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, partitions, rf, config=dict(config or {})) for n in names],
                                  operation_timeout=timeout, request_timeout=timeout)
    for f in futures.values():
        f.result(timeout)
    wait_leaders(bootstrap, names, partitions, timeout)


def wait_leaders(bootstrap: str, names: Sequence[str], partitions: int, timeout: float = 120,
                 isr: int | None = None) -> None:
    """Wait until metadata shows a leader (and, if given, `isr` in-sync replicas) for every partition."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    want = set(names)
    while True:
        md = admin.list_topics(timeout=30)
        ok = all(n in md.topics and md.topics[n].error is None and len(md.topics[n].partitions) == partitions and
                 all(p.leader >= 0 and (isr is None or len(p.isrs) >= isr) for p in md.topics[n].partitions.values())
                 for n in want)
        if ok:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"partitions of {sorted(want)[:3]}... have no leader after {timeout:.0f}s")
        time.sleep(0.2)


def end_offset(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(low, high) watermarks of a partition."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "pylog-bench", "log_level": 0})
    try:
        return c.get_watermark_offsets(ck.TopicPartition(topic, partition), timeout=30)
    finally:
        c.close()


# -- clients ----------------------------------------------------------------------------------------


@dataclass
class RunResult:
    """One timed run against one target."""

    records: int
    seconds: float
    server_user: float
    server_sys: float
    value_size: int
    avg_batch_bytes: float = 0.0

    @property
    def server_cpu(self) -> float:
        """Server CPU seconds (user + system) during the run."""
        return self.server_user + self.server_sys

    @property
    def busy(self) -> float:
        """Server CPU per wall second: how much of one core the server needed (the event loop has one)."""
        return self.server_cpu / self.seconds

    @property
    def rate(self) -> float:
        """Records per second."""
        return self.records / self.seconds

    @property
    def mb_per_s(self) -> float:
        """MiB of record values per second."""
        return self.records * self.value_size / self.seconds / MB

    @property
    def cpu_per_gb(self) -> float:
        """Server CPU seconds per 10^9 bytes of record values."""
        return self.server_cpu / (self.records * self.value_size / GB)

    @property
    def sys_per_gb(self) -> float:
        """The kernel's share of cpu_per_gb (socket reads, page-cache writes)."""
        return self.server_sys / (self.records * self.value_size / GB)


class _BatchStats:
    """Accumulates librdkafka's per-topic batch size windows from the statistics callback."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.bytes = 0
        self.batches = 0

    def __call__(self, raw: str) -> None:
        t = json.loads(raw).get("topics", {}).get(self.topic)
        if t:
            self.bytes += t["batchsize"]["sum"]
            self.batches += t["batchsize"]["cnt"]

    @property
    def avg(self) -> float:
        return self.bytes / self.batches if self.batches else 0.0


def produce(target: Target, topic: str, n: int, value_size: int = 100, conf: dict[str, Any] | None = None,
            partition: int = 0, partitions: int = 1) -> RunResult:
    """Produce n records of value_size bytes to one partition (or round-robin over partitions
    0..partitions-1); time from the first send to flush()."""
    stats = _BatchStats(topic)
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    p = ck.Producer({"bootstrap.servers": target.bootstrap, "acks": 1, "queue.buffering.max.messages": 2_000_000,
                     "queue.buffering.max.kbytes": 2_000_000, "delivery.report.only.error": True,
                     "on_delivery": on_delivery, "statistics.interval.ms": 500, "stats_cb": stats, "log_level": 3,
                     **(conf or {})})
    p.list_topics(topic, timeout=30)  # connect and learn the leader before the clock starts
    value = b"x" * value_size
    send = p.produce
    c0 = target.cpu()
    t0 = time.perf_counter()
    for i in range(n):
        part = partition if partitions == 1 else i % partitions
        try:
            send(topic, value, partition=part)
        except BufferError:
            p.poll(0.005)
            send(topic, value, partition=part)
    left = p.flush(300)
    elapsed = time.perf_counter() - t0
    c1 = target.cpu()
    p.poll(0.6)  # one more statistics window
    if left or errors:
        raise RuntimeError(f"{target.name}: {left} records undelivered, {len(errors)} errors (first: {errors[:1]})")
    return RunResult(n, elapsed, c1[0] - c0[0], c1[1] - c0[1], value_size, stats.avg)


def consumer(target: Target, conf: dict[str, Any] | None = None) -> ck.Consumer:
    """A consumer for assign()-style reads (no group coordination is needed).

    fetch.queue.backoff.ms is lowered from librdkafka's 1000: with the default, the fetcher
    pauses for a second whenever 100,000 records are queued, and a fast consume() loop drains
    them in a tenth of that, so both servers would be measured mostly idle.
    """
    return ck.Consumer({"bootstrap.servers": target.bootstrap, "group.id": "pylog-bench", "enable.auto.commit": False,
                        "enable.partition.eof": False, "fetch.queue.backoff.ms": 10, "log_level": 3,
                        **(conf or {})})


def consume(c: ck.Consumer, target: Target, topic: str, start: int, end: int, passes: int = 1,
            value_size: int = 100, partition: int = 0) -> RunResult:
    """Read offsets [start, end) `passes` times with consume(); time from the first seek to the last record."""
    tp = ck.TopicPartition(topic, partition, start)
    c.assign([tp])
    c0 = target.cpu()
    t0 = time.perf_counter()
    for i in range(passes):
        if i:
            c.seek(ck.TopicPartition(topic, partition, start))
        pos = start
        while pos < end:
            msgs = c.consume(min(10000, end - pos), 10.0)  # never ask for more than is left: it would wait
            if not msgs:
                raise RuntimeError(f"{target.name}: no records for 10 s at offset {pos} (want {end})")
            last = msgs[-1]
            if last.error() is not None:
                raise RuntimeError(f"{target.name}: {last.error()}")
            pos = last.offset() + 1
    elapsed = time.perf_counter() - t0
    c1 = target.cpu()
    return RunResult((end - start) * passes, elapsed, c1[0] - c0[0], c1[1] - c0[1], value_size)


def consume_partitions(c: ck.Consumer, target: Target, topic: str, ranges: dict[int, tuple[int, int]],
                       passes: int = 1, value_size: int = 100) -> RunResult:
    """Read offsets [start, end) of every partition in `ranges` `passes` times; time from the first
    assign to the last record. Records are counted (a pass ends when every range's count was read)."""
    want = sum(end - start for start, end in ranges.values())
    c0 = target.cpu()
    t0 = time.perf_counter()
    for _ in range(passes):
        c.assign([ck.TopicPartition(topic, part, start) for part, (start, _) in ranges.items()])
        got = 0
        while got < want:
            msgs = c.consume(min(10000, want - got), 10.0)
            if not msgs:
                raise RuntimeError(f"{target.name}: no records for 10 s after {got} of {want}")
            if msgs[-1].error() is not None:
                raise RuntimeError(f"{target.name}: {msgs[-1].error()}")
            got += len(msgs)
        c.unassign()
    elapsed = time.perf_counter() - t0
    c1 = target.cpu()
    return RunResult(want * passes, elapsed, c1[0] - c0[0], c1[1] - c0[1], value_size)


def interleaved(reps: int, targets: Sequence[Target], run: Callable[[Target], RunResult]) -> dict[str, list[RunResult]]:
    """Run `run` reps times per target, alternating the order so drift on the shared machine hits both."""
    out: dict[str, list[RunResult]] = {t.name: [] for t in targets}
    for i in range(reps):
        order = list(targets) if i % 2 == 0 else list(reversed(targets))
        for t in order:
            r = run(t)
            out[t.name].append(r)
            log(f"  {t.name} rep {i + 1}: {r.rate:,.0f} rec/s, {r.mb_per_s:.1f} MB/s, server CPU {r.server_user:.2f}s user"
                f" + {r.server_sys:.2f}s sys ({r.busy:.0%} of a core)"
                + (f", batch {r.avg_batch_bytes / 1024:.0f} KiB" if r.avg_batch_bytes else ""))
    return out


@dataclass
class Summary:
    """Medians of repeated runs against one target."""

    rate: float
    mb_per_s: float
    cpu_per_gb: float
    sys_per_gb: float
    avg_batch_bytes: float
    busy: float


def summary_cells(s: Summary) -> list:
    """A summary's table cells: records/s, MB/s, server CPU-s/GB (sys), server busy."""
    return [s.rate, s.mb_per_s, f"{s.cpu_per_gb:.2f} ({s.sys_per_gb:.2f})", f"{s.busy:.0%}"]


def summarize(results: list[RunResult]) -> Summary:
    """Medians of rec/s, MB/s, server CPU-s/GB (and its kernel share) and busy share; mean batch size."""
    return Summary(median([r.rate for r in results]), median([r.mb_per_s for r in results]),
                   median([r.cpu_per_gb for r in results]), median([r.sys_per_gb for r in results]),
                   statistics.fmean([r.avg_batch_bytes for r in results]) if results else 0.0,
                   median([r.busy for r in results]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["mock-serve"]:
        _mock_serve(sys.argv[2:])
    else:
        print("usage: python -m pylog.bench._harness mock-serve [topic:partitions ...]", file=sys.stderr)
        sys.exit(2)
