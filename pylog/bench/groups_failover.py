"""Coordinator failover (`scripts/bench groups --failover`): kill -9 of a group's coordinator to its next commit.

Three pylog brokers, `__consumer_offsets` at RF 3, one topic of one partition at RF 3. One
confluent-kafka consumer (its defaults plus group.id and committing itself) processes records and
commits each synchronously. While it does, the broker coordinating its group is killed with
SIGKILL. Measured from the kill: the next acknowledged commit (the new coordinator loaded the
group's offsets partition and took the commit) and the next record processed. The killed broker
is restarted and the ISRs refilled before the next repetition. Goal (issue 11): consuming again
within zookeeper.session.timeout.ms + 2 s (the controller learns of a kill -9 when ZooKeeper
expires the broker's session).
"""

from __future__ import annotations

import threading
import time

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient

from pylog.bench import _harness as h

TOPIC = "bench-failover"
GROUP = "bench-failover-g"


def coordinator_of(bootstrap: str, timeout: float = 60) -> int:
    """The group's coordinator (a fresh AdminClient: librdkafka's caches a coordinator that moved)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
            return admin.describe_consumer_groups([GROUP], request_timeout=10)[GROUP].result(15).coordinator.id
        except ck.KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


class Committer:
    """The consumer: process a record, commit it, note the time of every acknowledged commit and record."""

    def __init__(self, bootstrap: str) -> None:
        self.c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                              "enable.auto.commit": False, "log_level": 0})
        self.commits: list[float] = []
        self.records: list[float] = []
        self.failed = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.c.subscribe([TOPIC])
        while not self._stop.is_set():
            m = self.c.poll(0.1)
            if m is None or m.error() is not None:
                continue
            self.records.append(time.monotonic())
            try:
                self.c.commit(message=m, asynchronous=False)
                self.commits.append(time.monotonic())
            except ck.KafkaException:
                self.failed += 1

    def after(self, times: list[float], t: float, timeout: float) -> float:
        """Seconds from `t` to the first entry of `times` after it (waiting up to `timeout`)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            later = [x for x in list(times) if x > t]
            if later:
                return later[0] - t
            time.sleep(0.05)
        raise TimeoutError(f"nothing within {timeout:.0f}s of the kill")

    def stop(self) -> None:
        """Stop and close (leaves the group)."""
        self._stop.set()
        self.thread.join(30)
        self.c.close()


def run(reps: int, session_ms: int) -> None:
    """Kill the coordinator `reps` times and print the table."""
    overrides = {"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "10",
                 "zookeeper.session.timeout.ms": str(session_ms)}
    rows = []
    with h.pylog_cluster(3, overrides) as cluster:
        h.create_topics(cluster.bootstrap, [TOPIC], 1, rf=3)
        p = ck.Producer({"bootstrap.servers": cluster.bootstrap, "linger.ms": 50, "log_level": 3})
        for i in range(200_000):
            p.produce(TOPIC, b"x" * 100)
            if i % 10000 == 0:
                p.poll(0)
        p.flush(120)
        c = Committer(cluster.bootstrap)
        c.thread.start()
        try:
            for rep in range(reps):
                c.after(c.commits, time.monotonic(), 60)  # committing before the kill
                victim = coordinator_of(cluster.bootstrap)
                time.sleep(1.0)
                t = time.monotonic()
                cluster.brokers[victim].kill()
                commit_s = c.after(c.commits, t, 120)
                record_s = c.after(c.records, t, 120)
                rows.append([rep + 1, victim, commit_s, record_s])
                h.log(f"rep {rep + 1}: killed broker {victim}; next commit after {commit_s:.2f}s, "
                      f"next record after {record_s:.2f}s")
                cluster.brokers[victim].start()
                cluster.brokers[victim].wait_ready()
                time.sleep(session_ms / 1000 + 3)  # it rejoins the ISRs before the next kill
        finally:
            c.stop()
    rows.append(["median", "", h.median([r[2] for r in rows]), h.median([r[3] for r in rows])])
    h.print_report(f"Coordinator failover: kill -9 of the group's coordinator, 3 brokers, __consumer_offsets RF 3, "
                   f"zookeeper.session.timeout.ms={session_ms} (goal: <= {session_ms / 1000 + 2:.0f} s); "
                   f"{h.machine_notes()}",
                   ["rep", "killed broker", "to the next acknowledged commit (s)", "to the next record processed (s)"],
                   rows)
