"""Scale of state: one broker hosting N partitions (RF 1) -- creation, Metadata, memory, restarts.

For each N in --counts, on a fresh one-broker cluster: create N partitions (topics of
--per-topic partitions, CreateTopics in requests of --batch topics), write one 100-byte record
to each, then report
- creation: wall time from the first CreateTopics to every partition having a leader;
- Metadata: wall time of a full Metadata request (every topic) through confluent-kafka's
  AdminClient.list_topics, median of 3;
- resident memory (VmRSS) of the broker, and its growth per partition over the broker's RSS
  before any topic existed; open file descriptors (/proc/pid/fd) and mapped regions
  (/proc/pid/maps) -- what `ulimit -n` and vm.max_map_count must allow;
- controlled shutdown (SIGTERM to exit), then start-up: broker process start to every partition
  led again and readable, after a clean shutdown and after kill -9 (recovery of every partition).
Kafka's advice for a ZK-mode broker is <= 4,000 partitions (anchors.md 1.6).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import Any, Sequence

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic

from pylog.bench import _harness as h

PREFIX = "scale-"


def proc_stats(pid: int) -> dict[str, int]:
    """RSS (bytes), open file descriptors, mapped regions and threads of a process."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    with open(f"/proc/{pid}/maps") as f:
        maps = sum(1 for _ in f)
    return {"rss": rss, "fds": len(os.listdir(f"/proc/{pid}/fd")), "maps": maps, "threads": threads}


def topic_names(n: int, per_topic: int) -> list[tuple[str, int]]:
    """(topic, partition count) covering n partitions in topics of per_topic."""
    out = []
    left, i = n, 0
    while left > 0:
        out.append((f"{PREFIX}{i:05d}", min(per_topic, left)))
        left -= per_topic
        i += 1
    return out


def create_all(bootstrap: str, topics: list[tuple[str, int]], batch: int, timeout: float) -> float:
    """CreateTopics for every topic, `batch` topics per request; seconds until all partitions have leaders."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    t0 = time.monotonic()
    for i in range(0, len(topics), batch):
        chunk = [NewTopic(t, n, 1) for t, n in topics[i:i + batch]]
        for f in admin.create_topics(chunk, operation_timeout=timeout, request_timeout=timeout).values():
            f.result(timeout)
    wait_all_led(bootstrap, topics, timeout)
    return time.monotonic() - t0


def wait_all_led(bootstrap: str, topics: list[tuple[str, int]], timeout: float) -> None:
    """Until Metadata shows every partition of `topics` with a leader (polled every 0.2 s)."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    deadline = time.monotonic() + timeout
    want = dict(topics)
    while True:
        try:
            md = admin.list_topics(timeout=30)
            if all(t in md.topics and md.topics[t].error is None and len(md.topics[t].partitions) == n and
                   all(p.leader >= 0 for p in md.topics[t].partitions.values()) for t, n in want.items()):
                return
        except ck.KafkaException:
            pass  # the broker is not answering yet
        if time.monotonic() > deadline:
            raise TimeoutError(f"not every one of {sum(want.values())} partitions has a leader after {timeout:.0f}s")
        time.sleep(0.2)


def fill(bootstrap: str, topics: list[tuple[str, int]]) -> None:
    """One 100-byte record in every partition (acks=1), so each has a segment with data to recover."""
    p = ck.Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 50, "log_level": 3})
    value = b"v" * 100
    for t, n in topics:
        for i in range(n):
            while True:
                try:
                    p.produce(t, value, partition=i)
                    break
                except BufferError:
                    p.poll(0.05)
    if p.flush(300):
        raise RuntimeError("records left undelivered while filling the partitions")


def metadata_seconds(bootstrap: str, reps: int = 3) -> float:
    """Median wall time of a full Metadata request (all topics)."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.list_topics(timeout=60)  # connect first
    times = []
    for _ in range(reps):
        t0 = time.monotonic()
        admin.list_topics(timeout=120)
        times.append(time.monotonic() - t0)
    return h.median(times)


def restart_seconds(cluster: Any, topics: list[tuple[str, int]], how: str, timeout: float) -> tuple[float, float]:
    """Stop the broker (`how`: "clean" = SIGTERM, "kill" = kill -9), start it; (stop s, start-to-all-led s)."""
    b = cluster.brokers[0]
    t0 = time.monotonic()
    if how == "kill":
        b.signal(signal.SIGKILL)
        b.proc.wait(30)
    else:
        b.stop(timeout=timeout)
    stopped = time.monotonic() - t0
    t1 = time.monotonic()
    b.start()
    b.wait_ready(timeout)
    wait_all_led(cluster.bootstrap, topics, timeout)
    return stopped, time.monotonic() - t1


def run_count(n: int, per_topic: int, batch: int, timeout: float, zk_connect: str | None = None) -> dict[str, Any]:
    """All figures for one partition count on a fresh one-broker cluster."""
    topics = topic_names(n, per_topic)
    with h.pylog_cluster(1, {"num.partitions": "1"}, zk_connect=zk_connect) as cluster:
        pid = cluster.brokers[0].pid
        base = proc_stats(pid)
        h.log(f"{n} partitions: creating {len(topics)} topics")
        create_s = create_all(cluster.bootstrap, topics, batch, timeout)
        h.log(f"  created in {create_s:.1f}s; writing one record to each")
        fill(cluster.bootstrap, topics)
        md_s = metadata_seconds(cluster.bootstrap)
        loaded = proc_stats(pid)
        h.log(f"  metadata {md_s * 1000:.0f} ms, {loaded}")
        shut_s, clean_s = restart_seconds(cluster, topics, "clean", timeout)
        after_clean = proc_stats(cluster.brokers[0].pid)
        h.log(f"  controlled shutdown {shut_s:.1f}s, start after it {clean_s:.1f}s")
        _, kill_s = restart_seconds(cluster, topics, "kill", timeout)
        h.log(f"  start after kill -9 {kill_s:.1f}s")
    return {"n": n, "create_s": create_s, "metadata_s": md_s, "base": base, "loaded": loaded,
            "after_restart": after_clean, "shutdown_s": shut_s, "start_clean_s": clean_s, "start_kill_s": kill_s}


def row(r: dict[str, Any]) -> list:
    """A table row of one count's figures."""
    n, base, ld, rs = r["n"], r["base"], r["loaded"], r["after_restart"]
    per_kib = (ld["rss"] - base["rss"]) / n / 1024
    per_kib_restart = (rs["rss"] - base["rss"]) / n / 1024
    return [n, f"{r['create_s']:.1f}", f"{r['metadata_s'] * 1000:.0f}", f"{ld['rss'] / h.MB:.0f}",
            f"{per_kib:.1f} / {per_kib_restart:.1f}", f"{ld['fds']} / {rs['fds']}", f"{ld['maps']}",
            f"{r['shutdown_s']:.1f}", f"{r['start_clean_s']:.1f}", f"{r['start_kill_s']:.1f}"]


HEADER = ["partitions", "create s", "Metadata (all) ms", "RSS MiB", "RSS KiB/partition (created / restarted)",
          "open fds (created / restarted)", "maps", "controlled shutdown s", "start (clean) s",
          "start (after kill -9) s"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench partitions_scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", default="1000,5000,10000", help="comma-separated partition counts")
    ap.add_argument("--per-topic", type=int, default=100, help="partitions per topic")
    ap.add_argument("--batch", type=int, default=20, help="topics per CreateTopics request")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed for each step")
    args = ap.parse_args(argv)
    try:
        counts = [int(c) for c in args.counts.split(",")]
    except ValueError:
        ap.error(f"--counts expects comma-separated integers, got {args.counts!r}")
    if any(c <= 0 for c in counts) or args.per_topic <= 0 or args.batch <= 0:
        ap.error("counts, --per-topic and --batch must be positive")
    print(f"<!-- {h.machine_notes()} -->")
    rows = [row(run_count(n, args.per_topic, args.batch, args.timeout)) for n in counts]
    h.print_report(f"partitions_scale: one broker, RF 1, topics of {args.per_topic} partitions, one record each",
                   HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
