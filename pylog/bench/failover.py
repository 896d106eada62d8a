"""Controller failover: kill -9 of a partition's leader to the first acks=all write it acknowledges again,
when that leader is not the controller and when it is.

Three pylog brokers, one topic of 3 partitions, RF 3, min.insync.replicas 2, preferred leaders
restored before every round (so each broker leads one partition), and an idle topic of 50 RF 3
partitions (--other-partitions) that every failover handles too. A confluent-kafka producer sends
an acks=all record to every partition every 5 ms. Each round kills -9 a leader, (a) one that is not
the controller or (b) the controller itself, and times the first acknowledgement of a record sent
to its partition after the kill. A dead broker is noticed when ZooKeeper expires its session, so
both are bounded below by zookeeper.session.timeout.ms; what (b) adds on top is the controller's
failover: the election, loading the cluster, electing leaders and telling the brokers. The logs'
timestamps split each round: kill -> ZooKeeper expires the victim's session (its log), -> the
surviving controller acts (the broker-failure line in (a), the new controller's election in (b)),
-> the new leader's broker takes the partition (the controller's share: expiry to this line),
-> the client's first acknowledgement.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import confluent_kafka as ck

from pylog.bench import _harness as h
from pylog.bench import replication_failover
from pylog.localcluster import LocalCluster
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.server import ZooKeeperProcess
from pylog.zk.testing import free_port

TOPIC = "bench-controller-failover"
PARTITIONS = 3
CASES = ("leader", "controller")  # (a) a leader that is not the controller, (b) the controller
OTHER = "bench-controller-failover-others"  # the rest of the cluster's partitions, idle
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Round:
    """One kill -9 and its timings, seconds after the kill."""

    case: str
    victim: int
    acked: float  # first acknowledgement of a record sent to the victim's partition after the kill
    expired: float | None  # ZooKeeper expired the victim's session
    acting: float | None  # the surviving controller acts: broker failure seen, or the new one elected
    ready: float | None  # (b) the new controller finished its failover ("ready" log line)
    leads: float | None  # the new leader's broker takes the partition ("is leader of" log line)


class Pinger(replication_failover.Pinger):
    """One librdkafka producer sending an acks=all record to each partition every `interval` seconds."""

    name = "librdkafka"

    def __init__(self, bootstrap: str, interval: float = 0.005) -> None:
        super().__init__(interval)
        self._p = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "log_level": 2})

    def _send(self, sent: float) -> None:
        for p in range(PARTITIONS):
            self._p.produce(TOPIC, b"x", partition=p, on_delivery=lambda err, _m, p=p, s=sent: self._done(err, s, p))

    def _serve(self) -> None:
        self._p.poll(0.001)

    def _close(self) -> None:
        self._p.flush(130)


_STAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]? ")  # brokers: [stamp], ZooKeeper: stamp


def _first_line_after(path: Path, offset: int, pattern: str) -> float | None:
    """Wall-clock time of the first log line after byte `offset` matching `pattern`."""
    with open(path, "rb") as f:
        f.seek(offset)
        for raw in f:
            line = raw.decode(errors="replace")
            m = _STAMP.match(line)
            if m and re.search(pattern, line):
                return dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
    return None


class Rounds:
    """Drives the rounds against one cluster."""

    def __init__(self, cluster: LocalCluster, zk: ZkClient, pinger: Pinger, zk_log: Path) -> None:
        self.cluster = cluster
        self.zk = zk
        self.zk_log = zk_log
        self.pinger = pinger

    def _states(self) -> dict[int, object]:
        got = self.zk.get_partition_states((TOPIC, p) for p in range(PARTITIONS))
        return {tp.partition: st for tp, st in got.items() if st is not None}

    def _controller(self) -> int:
        cid = self.zk.get_controller_id()
        return -1 if cid is None else cid

    def _balanced(self) -> bool:
        states = self._states()
        assignment = self.zk.get_topic_assignment(TOPIC)[0].partitions
        everyone = set(self.cluster.brokers)
        return (self._controller() >= 0 and len(states) == PARTITIONS and
                all(set(st.isr) == everyone and st.leader == assignment[p][0] for p, st in states.items()))

    def heal(self) -> None:
        """Every ISR full and every partition led by its preferred replica (one partition per broker)."""
        deadline = time.monotonic() + 120
        while not self._balanced():
            if time.monotonic() > deadline:
                raise TimeoutError(f"cluster not balanced after 120 s: {self._states()}")
            states = self._states()
            if len(states) == PARTITIONS and all(set(st.isr) == set(self.cluster.brokers) for st in states.values()):
                subprocess.run([str(ROOT / "bin/pylog-leader-election.sh"), "--bootstrap-server",
                                self.cluster.bootstrap, "--election-type", "preferred", "--all-topic-partitions"],
                               capture_output=True, timeout=60)
            time.sleep(0.2)

    def one(self, case: str) -> Round:
        """Kill a leader (the controller in case "controller"), time it, restart it and heal."""
        self.heal()
        cid = self._controller()
        leaders = {st.leader: p for p, st in self._states().items()}
        victim = cid if case == "controller" else min(b for b in leaders if b != cid)
        partition = leaders[victim]
        logs = {b: (br.log_path, br.log_path.stat().st_size) for b, br in self.cluster.brokers.items()}
        zk_log = (self.zk_log, self.zk_log.stat().st_size)
        owner = self.zk.exists(paths.broker_id(victim)).ephemeralOwner
        wall, t0 = time.time(), time.monotonic()
        self.cluster.brokers[victim].kill()
        acked = self.pinger.first_ack_after(t0, 120, partition) - t0
        new_leader = self._states()[partition].leader
        if case == "controller":
            new_cid = self._controller()
            acting = _first_line_after(*logs[new_cid], r"is the controller at epoch")
            ready = _first_line_after(*logs[new_cid], r"Controller \d+ ready at epoch")
        else:
            acting = _first_line_after(*logs[cid], rf"brokers \[{victim}\] failed")
            ready = None
        leads = _first_line_after(*logs[new_leader], rf"is leader of {TOPIC}-{partition} ")
        expired = _first_line_after(*zk_log, rf"Expiring session 0x{owner:x},")
        since = (lambda t: None if t is None else t - wall)
        r = Round(case, victim, acked, since(expired), since(acting), since(ready), since(leads))
        h.log(f"  kill -9 of leader {victim}{' (controller)' if case == 'controller' else ''} of partition "
              f"{partition}: session expired {_s(r.expired)}, controller acts {_s(r.acting)}, ready {_s(r.ready)}, "
              f"new leader {_s(r.leads)}, first ack {r.acked:.2f}s")
        self._restart(victim, owner)
        return r

    def _restart(self, bid: int, owner: int) -> None:
        b = self.cluster.brokers[bid]
        b.start()
        b.wait_ready(60)
        deadline = time.monotonic() + 120
        while (stat := self.zk.exists(paths.broker_id(bid))) is None or stat.ephemeralOwner == owner:
            if time.monotonic() > deadline:
                raise TimeoutError(f"broker {bid} did not register again")
            time.sleep(0.1)


def _s(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f}s"


@contextlib.contextmanager
def _cluster(overrides: dict[str, str], tick_ms: int, keep: bool) -> Iterator[tuple[LocalCluster, Path]]:
    """Three brokers on their own ZooKeeper with the given tickTime; the cluster and ZooKeeper's log."""
    zk_dir = tempfile.mkdtemp(prefix="pylog-bench-failover-zk-")
    zk = ZooKeeperProcess(zk_dir, free_port(), tick_time_ms=tick_ms, config={"maxSessionTimeout": "60000"}).start()
    try:
        with h.pylog_cluster(3, overrides, keep=keep, zk_connect=zk.connect_string) as cluster:
            yield cluster, Path(zk.log_file)
    finally:
        zk.stop()
        shutil.rmtree(zk_dir, ignore_errors=True)


def run(reps: int, session_ms: int, tick_ms: int, others: int, keep: bool = False) -> list[Round]:
    """`reps` rounds of each case, alternating, against one cluster."""
    overrides = {"zookeeper.session.timeout.ms": str(session_ms), "auto.leader.rebalance.enable": "false"}
    with _cluster(overrides, tick_ms, keep) as (cluster, zk_log):
        h.create_topics(cluster.bootstrap, [TOPIC], partitions=PARTITIONS, rf=3, config={"min.insync.replicas": "2"})
        if others:
            h.create_topics(cluster.bootstrap, [OTHER], partitions=others, rf=3)
        zk = ZkClient(cluster.zk_connect, session_timeout_ms=30000).start()
        pinger = Pinger(cluster.bootstrap).start()
        try:
            rounds = Rounds(cluster, zk, pinger, zk_log)
            rounds.heal()
            pinger.first_ack_after(time.monotonic(), 60, 0)
            return [rounds.one(case) for _ in range(reps) for case in CASES]
        finally:
            pinger.stop()
            zk.close()


def _median(xs: Sequence[float | None]) -> str:
    got = [x for x in xs if x is not None]
    return f"{statistics.median(got):.2f}" if got else "?"


def _span(rs: list[Round], a: str, b: str) -> str:
    """Median of b - a over the rounds where the logs gave both."""
    return _median([getattr(r, b) - getattr(r, a) for r in rs
                    if getattr(r, a) is not None and getattr(r, b) is not None])


def rows(rounds: list[Round]) -> list[list[object]]:
    """One row per case: medians of each step, the first acknowledgement's median and max, and (b) - (a)."""
    base = [r.acked for r in rounds if r.case == "leader"]
    out: list[list[object]] = []
    for case, what in zip(CASES, ("(a) leader, not the controller", "(b) leader and controller")):
        rs = [r for r in rounds if r.case == case]
        if not rs:
            continue
        acked = [r.acked for r in rs]
        extra = statistics.median(acked) - statistics.median(base) if base and case == "controller" else None
        out.append([what, len(rs), _median([r.expired for r in rs]), _span(rs, "expired", "acting"),
                    _span(rs, "acting", "leads"), _span(rs, "expired", "leads"), _span(rs, "leads", "acked"),
                    f"{statistics.median(acked):.2f}", f"{max(acked):.2f}", "-" if extra is None else f"{extra:+.2f}"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench failover", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="rounds of each case (default 3)")
    ap.add_argument("--session-timeout-ms", type=int, default=6000, help="zookeeper.session.timeout.ms (default 6000)")
    ap.add_argument("--zk-tick-ms", type=int, default=500,
                    help="ZooKeeper's tickTime: sessions expire up to one tick after their timeout (default 500)")
    ap.add_argument("--other-partitions", type=int, default=50,
                    help="idle RF 3 partitions besides the 3 measured ones, which a failover handles too (default "
                         "50: the offsets topic a first consumer group creates)")
    ap.add_argument("--keep", action="store_true", help="keep the cluster's directory (broker logs)")
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    print(f"<!-- {h.machine_notes()} -->")
    rounds = run(args.reps, args.session_timeout_ms, args.zk_tick_ms, args.other_partitions, args.keep)
    h.print_report(f"controller failover: 3 brokers, {PARTITIONS} partitions RF 3 measured (and "
                   f"{args.other_partitions} idle ones), min.insync.replicas 2, acks=all "
                   f"every 5 ms per partition, zookeeper.session.timeout.ms={args.session_timeout_ms}, ZooKeeper "
                   f"tickTime {args.zk_tick_ms} ms; seconds after the kill -9, medians of {args.reps} rounds",
                   ["killed", "rounds", "session expired", "-> controller acts", "-> new leader serves",
                    "controller's share (expiry -> new leader)", "-> first ack", "first ack (median)",
                    "first ack (max)", "first ack (b) - (a)"],
                   rows(rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
