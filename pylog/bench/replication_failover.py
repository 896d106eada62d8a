"""Leader failover time: kill -9 of a partition's leader to the first acks=all produce it acknowledges again.

Three pylog brokers, one partition, RF 3, min.insync.replicas=2. A confluent-kafka producer and
a kafka-python one each send a record every 5 ms (acks=all, retries on) for the whole run. Each
round kills -9 the current leader, notes when the controller wrote the new leader to ZooKeeper
and when the first record *sent after the kill* was acknowledged by each client, then restarts
the victim and waits until it is back in the ISR. A dead broker is only noticed when ZooKeeper
expires its session, so the figure is bounded below by zookeeper.session.timeout.ms; goal: max
<= session timeout + 1 s. The peer measured in the same run is a controlled shutdown (SIGTERM)
of the leader, where the broker hands leadership over itself and nothing waits for a timeout.
Two clients run side by side because what a client sees after the election depends on how soon
it asks for metadata again.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Iterator, Sequence

import confluent_kafka as ck
import kafka

from pylog.bench import _harness as h
from pylog.chaos.faults import FaultDriver
from pylog.localcluster import LocalCluster
from pylog.zk.client import ZkClient
from pylog.zk.server import ZooKeeperProcess
from pylog.zk.testing import free_port

TOPIC = "bench-failover"


@dataclass
class Round:
    """One failover."""

    how: str
    victim: int
    was_controller: bool
    elected_s: float  # kill -> new leader in the partition state znode
    acked_s: dict[str, float]  # client -> kill -> first acknowledgement of a record it sent after the kill


class Pinger:
    """A producer thread sending one acks=all record every `interval` seconds, noting ack times."""

    name = ""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        # partition -> [(sent, acknowledged)], monotonic seconds; one partition (0) unless a subclass sends to more
        self.acks: dict[int, list[tuple[float, float]]] = {}
        self.errors = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _send(self, sent: float) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        """Give the client's callbacks a moment to run."""

    def _close(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        nxt = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= nxt:
                self._send(now)
                nxt = now + self.interval
            self._serve()
        self._close()

    def _done(self, err: object, sent: float, partition: int = 0) -> None:
        with self._lock:
            if err is None:
                self.acks.setdefault(partition, []).append((sent, time.monotonic()))
            else:
                self.errors += 1

    def first_ack_after(self, t: float, timeout: float, partition: int = 0) -> float:
        """When the first record sent to `partition` after `t` was acknowledged (monotonic seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                got = [a for s, a in self.acks.get(partition, ()) if s > t]
            if got:
                return min(got)
            time.sleep(0.005)
        raise TimeoutError(f"{self.name}: no acknowledgement within {timeout:.0f}s of the kill")

    def start(self) -> "Pinger":
        """Start sending."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop and flush."""
        self._stop.set()
        self._thread.join(140)


class LibrdkafkaPinger(Pinger):
    """confluent-kafka (librdkafka): re-reads metadata for a partition whose leader is down on a 1 s timer."""

    name = "librdkafka"

    def __init__(self, bootstrap: str) -> None:
        super().__init__()
        self._p = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "retries": 1_000_000,
                               "retry.backoff.ms": 50, "message.timeout.ms": 120_000, "request.timeout.ms": 30_000,
                               "log_level": 2})

    def _send(self, sent: float) -> None:
        self._p.produce(TOPIC, b"x", partition=0, on_delivery=lambda err, _m, s=sent: self._done(err, s))

    def _serve(self) -> None:
        self._p.poll(0.001)

    def _close(self) -> None:
        self._p.flush(130)


class KafkaPythonPinger(Pinger):
    """kafka-python: refreshes metadata retry_backoff_ms after a failed request or connection.

    Its reconnect backoff is capped at 1 s, the Java client's default: at kafka-python's own 30 s a
    broker killed in one round is still shunned when it leads again in a later one.
    """

    name = "kafka-python"

    def __init__(self, bootstrap: str) -> None:
        super().__init__()
        self._p = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0, retries=1_000_000,
                                      retry_backoff_ms=50, request_timeout_ms=30_000, delivery_timeout_ms=120_000,
                                      enable_idempotence=False, max_in_flight_requests_per_connection=1,
                                      reconnect_backoff_max_ms=1000)

    def _send(self, sent: float) -> None:
        fut = self._p.send(TOPIC, b"x", partition=0)
        fut.add_callback(lambda _md, s=sent: self._done(None, s))
        fut.add_errback(lambda exc, s=sent: self._done(exc, s))

    def _serve(self) -> None:
        time.sleep(0.001)

    def _close(self) -> None:
        self._p.flush(130)
        self._p.close(10)


def _leader(driver: FaultDriver) -> tuple[int, int]:
    st = driver.states()[0]
    return st.leader, st.leader_epoch


def one_round(driver: FaultDriver, pingers: Sequence[Pinger], how: str) -> Round:
    """Fail the current leader (kill -9 or SIGTERM), measure, bring it back and wait until healed."""
    victim, epoch = _leader(driver)
    was_controller = driver.controller() == victim
    b = driver.cluster.brokers[victim]
    owner = driver.owner(victim)
    t0 = time.monotonic()
    if how == "kill -9":
        b.kill()
    else:
        b.signal(signal.SIGTERM)
    elected = None
    while elected is None:
        leader, new_epoch = _leader(driver)
        if new_epoch > epoch and leader not in (-1, victim):
            elected = time.monotonic() - t0
        elif time.monotonic() - t0 > 120:
            raise TimeoutError("no new leader after 120 s")
        else:
            time.sleep(0.005)
    acked = {p.name: p.first_ack_after(t0, 120) - t0 for p in pingers}
    if how != "kill -9":
        b.proc.wait(60)
    driver.restart(victim, owner)
    driver.wait_healthy(f"restart of broker {victim}")
    r = Round(how, victim, was_controller, elected, acked)
    h.log(f"  {how} of leader {victim}{' (controller)' if was_controller else ''}: new leader elected after "
          f"{elected:.2f}s, first ack after " + ", ".join(f"{a:.2f}s ({n})" for n, a in acked.items()))
    return r


@contextlib.contextmanager
def cluster_with_tick(overrides: dict[str, str], tick_ms: int, keep: bool) -> Iterator[LocalCluster]:
    """Three brokers on a ZooKeeper with the given tickTime (the harness's cluster); all stopped by pid."""
    zk_dir = tempfile.mkdtemp(prefix="pylog-bench-failover-zk-")
    zk = ZooKeeperProcess(zk_dir, free_port(), tick_time_ms=tick_ms, config={"maxSessionTimeout": "60000"}).start()
    try:
        with h.pylog_cluster(3, overrides, keep=keep, zk_connect=zk.connect_string) as cluster:
            yield cluster
    finally:
        zk.stop()
        shutil.rmtree(zk_dir, ignore_errors=True)


def run(kills: int, controlled: int, session_ms: int, tick_ms: int, keep: bool = False) -> list[Round]:
    """All rounds against one cluster; controlled shutdowns are interleaved with the kills."""
    overrides = {"zookeeper.session.timeout.ms": str(session_ms), "controlled.shutdown.retry.backoff.ms": "200"}
    with cluster_with_tick(overrides, tick_ms, keep) as cluster:
        h.create_topics(cluster.bootstrap, [TOPIC], partitions=1, rf=3, config={"min.insync.replicas": "2"})
        zk = ZkClient(cluster.zk_connect, session_timeout_ms=30000).start()
        try:
            driver = FaultDriver(cluster, zk, TOPIC, 1, random.Random(0), session_ms, heal_timeout=120,
                                 log=h.log)
            driver.wait_healthy("topic creation")
            pingers: list[Pinger] = []
            try:
                pingers += [LibrdkafkaPinger(cluster.bootstrap).start(), KafkaPythonPinger(cluster.bootstrap).start()]
                for p in pingers:
                    p.first_ack_after(time.monotonic(), 60)
                plan = ["kill -9"] * kills + ["SIGTERM"] * controlled
                random.Random(1).shuffle(plan)
                rounds = [one_round(driver, pingers, how) for how in plan]
            finally:
                for p in pingers:
                    p.stop()
            for p in pingers:
                if p.errors:
                    h.log(f"{p.name}: {p.errors} records failed (timed out)")
        finally:
            zk.close()
    return rounds


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench replication_failover", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=10, help="kill -9 rounds (default 10)")
    ap.add_argument("--controlled", type=int, default=3, help="controlled-shutdown rounds, the peer (default 3)")
    ap.add_argument("--session-timeout-ms", type=int, default=6000, help="zookeeper.session.timeout.ms")
    ap.add_argument("--zk-tick-ms", type=int, default=500,
                    help="ZooKeeper's tickTime: sessions expire up to one tick after their timeout (default 500)")
    ap.add_argument("--keep", action="store_true", help="keep the cluster's directory (broker logs)")
    args = ap.parse_args(argv)
    print(f"<!-- {h.machine_notes()} -->")
    rounds = run(args.kills, args.controlled, args.session_timeout_ms, args.zk_tick_ms, args.keep)
    goal = args.session_timeout_ms / 1000 + 1
    rows = []
    for how in ("kill -9", "SIGTERM"):
        rs = [r for r in rounds if r.how == how]
        if not rs:
            continue
        elected = [r.elected_s for r in rs]
        for client in rs[0].acked_s:
            acked = [r.acked_s[client] for r in rs]
            rows.append([f"{how} of the leader", client, len(rs), sum(r.was_controller for r in rs),
                         f"{statistics.median(elected):.2f}", f"{max(elected):.2f}", f"{statistics.median(acked):.2f}",
                         f"{max(acked):.2f}", f"{max(acked) / goal:.2f}"])
    h.print_report(f"failover: 1 partition, RF 3, min.insync.replicas 2, acks=all every 5 ms, "
                   f"zookeeper.session.timeout.ms={args.session_timeout_ms}, ZooKeeper tickTime {args.zk_tick_ms} ms; "
                   f"goal: max <= {goal:g} s",
                   ["fault", "client", "rounds", "of which the controller", "elected s (median)", "elected s (max)",
                    "first ack s (median)", "first ack s (max)", "first ack max / goal"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
