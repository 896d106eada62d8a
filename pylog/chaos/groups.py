"""`scripts/chaos --groups`: a consumer group of member processes consumes while brokers and members die.

Three brokers (`__consumer_offsets` at RF 3), an acks=all producer of numbered records (the same
workload as the plain chaos run), and N member processes (group_member.py: real confluent-kafka
consumers committing after each processed batch). Faults, one at a time: kill -9 and restart of
the group's coordinator, of the controller, of a random broker, a pause of a broker, and kill -9
and restart of a member. A sampler reads the group's committed offsets all along. After the last
fault the producer stops, the members drain the topic, and group_verify.py judges the run.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient

from pylog.chaos import ctp
from pylog.chaos import faults as fl
from pylog.chaos.group_verify import GroupVerdict, check_group, parse_member
from pylog.chaos.run import TOPIC, broker_overrides, check_brokers, create_topic, stop_cluster
from pylog.chaos.verify import high_watermarks
from pylog.chaos.workload import Acked, Workload
from pylog.localcluster import LocalCluster
from pylog.zk.client import ZkClient

GROUP = "pylog-chaos-group"
BROKER_KINDS = ("kill-coordinator", "kill-controller", "kill-random", "pause")


@dataclass
class GroupChaosConfig:
    """What a groups run does; the defaults are a short run's."""

    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 31))
    faults: int = 4  # broker faults
    member_kills: int = 2
    members: int = 3
    partitions: int = 6
    rate: float = 200.0
    duration: float = 0.0
    session_timeout_ms: int = 4000  # the brokers' ZooKeeper session
    member_session_ms: int = 6000  # the members' group session (group.min.session.timeout.ms is 6000)
    offsets_partitions: int = 5
    heal_timeout: float = 90.0
    drain_timeout: float = 120.0
    ctp: bool = False  # members are consume-transform-produce workers (ctp.py), checked for exactly-once

    def replay(self) -> str:
        """The command that repeats this run's fault schedule."""
        return (f"scripts/chaos --groups --seed {self.seed} --faults {self.faults} --member-kills {self.member_kills} "
                f"--members {self.members} --duration {self.duration:g} --partitions {self.partitions} "
                f"--rate {self.rate:g}" + (" --ctp" if self.ctp else ""))


def plan(cfg: GroupChaosConfig, rng: random.Random) -> list[str]:
    """The faults of a run: a coordinator kill and a controller kill first in line, the rest random."""
    must = (["kill-txn-coordinator", "kill-coordinator", "kill-leader"] if cfg.ctp
            else ["kill-coordinator", "kill-controller"])[:cfg.faults]
    kinds = must + [rng.choice(ctp.KINDS if cfg.ctp else BROKER_KINDS) for _ in range(cfg.faults - len(must))]
    kinds += ["kill-member"] * cfg.member_kills
    rng.shuffle(kinds)
    return kinds


@dataclass
class GroupReport:
    """Everything a groups run found."""

    config: GroupChaosConfig
    faults: list[str] = field(default_factory=list)
    acked: Acked | None = None
    verdict: GroupVerdict | None = None
    ctp: ctp.CtpVerdict | None = None  # --ctp: the exactly-once checks instead of `verdict`
    findings: list[str] = field(default_factory=list)
    broker_errors: dict[int, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    base_dir: str = ""
    restarts: int = 0  # members started again after exiting on their own (ctp workers do on any error)

    @property
    def ok(self) -> bool:
        """Verified, and nothing found."""
        verified = self.ctp if self.config.ctp else self.verdict
        return verified is not None and verified.ok and not self.findings

    def text(self) -> str:
        """The summary printed at the end of a run."""
        cfg, v = self.config, self.verdict
        mode = "--ctp" if cfg.ctp else "--groups"
        lines = [f"chaos {mode} seed={cfg.seed}: {'PASS' if self.ok else 'FAIL'} in {self.seconds:.0f}s "
                 f"({cfg.members} members, {cfg.partitions} partitions, 3 brokers, __consumer_offsets RF 3)",
                 f"faults injected: {len(self.faults)}"] + [f"  {f}" for f in self.faults]
        if self.acked is not None:
            lines.append(f"records: sent {self.acked.sent}, acked {self.acked.count}")
        if v is not None:
            lines.append(f"processed {v.processed} distinct records ({v.duplicates} more than once), "
                         f"{v.commits} commits acknowledged, refused {dict(v.failed_commits) or 0}, "
                         f"{v.samples} committed-offset samples")
            lines += [f"FINDING: {f}" for f in v.findings]
        if (c := self.ctp) is not None:
            lines.append(f"consume-transform-produce: {c.inputs} input records, {c.outputs} read_committed output "
                         f"records, {c.committed_txns} transactions committed, {c.aborted_txns} aborted, "
                         f"restarts after an exit or kill {self.restarts}, worker errors {dict(c.worker_errors)}")
            if c.replica_batches:
                lines.append("in-sync replicas compared up to the high watermark: " + ", ".join(
                    f"{t} {n} batches" for t, n in c.replica_batches.items()))
            lines += [f"FINDING: {f}" for f in c.findings]
        for bid, errs in sorted(self.broker_errors.items()):
            lines.append(f"broker {bid} logged {len(errs)} ERROR lines, first: {errs[0][:300]}")
        lines += [f"FINDING: {f}" for f in self.findings]
        lines.append(f"replay: {cfg.replay()}")
        return "\n".join(lines)


class CommitSampler:
    """A thread reading the group's committed offsets every half second.

    It asks as an application does, with a confluent-kafka Consumer of the group that never
    subscribes (OffsetFetch, no membership); AdminClient's list_consumer_group_offsets crashed
    the process (SIGSEGV) when the coordinator died under it."""

    def __init__(self, bootstrap: str, partitions: int) -> None:
        self.bootstrap = bootstrap
        self.consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 3})
        self.partitions = partitions
        self.history: dict[int, list[int]] = {p: [] for p in range(partitions)}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-commits", daemon=True)

    def read(self, timeout: float = 5) -> dict[int, int]:
        """The committed offset per partition now (partitions without one are left out)."""
        with self._lock:
            got = self.consumer.committed([ck.TopicPartition(TOPIC, p) for p in range(self.partitions)], timeout)
        return {tp.partition: tp.offset for tp in got if tp.error is None and tp.offset >= 0}

    def start(self) -> "CommitSampler":
        """Start sampling."""
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                for p, o in self.read().items():
                    self.history[p].append(o)
            except Exception:
                pass  # the coordinator is moving: sample again

    def stop(self) -> dict[int, list[int]]:
        """Stop and return the samples per partition."""
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()
        return self.history


class Members:
    """The member processes, by name; each appends to <dir>/<name>.log."""

    def __init__(self, bootstrap: str, directory: Path, session_ms: int, ctp_output: str | None = None) -> None:
        self.bootstrap, self.dir, self.session_ms = bootstrap, directory, session_ms
        self.procs: dict[str, subprocess.Popen] = {}
        self.command = ["pylog.chaos.ctp_worker"] if ctp_output else ["pylog.chaos.group_member"]
        self.extra = [ctp_output] if ctp_output else []
        self.restarts = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None
        directory.mkdir(parents=True, exist_ok=True)

    def start(self, name: str) -> None:
        """Start (or restart) member `name` unless it is running."""
        with self._lock:
            if name in self.procs and self.procs[name].poll() is None:
                return
            with open(self.dir / f"{name}.log", "a") as f:
                f.write("S\n")
            with open(self.dir / f"{name}.err", "a") as err:
                self.procs[name] = subprocess.Popen(
                    [sys.executable, "-m", *self.command, self.bootstrap, GROUP, TOPIC, str(self.dir / f"{name}.log"),
                     name, str(self.session_ms), *self.extra], stdout=subprocess.DEVNULL, stderr=err)

    def keep_alive(self) -> None:
        """Start again, every half second, members that exited on their own (crash-only ctp workers)."""
        def loop() -> None:
            while not self._stop.wait(0.5):
                for name in self.dead():
                    self.restarts += 1
                    self.start(name)
        self._keeper = threading.Thread(target=loop, name="chaos-keep-alive", daemon=True)
        self._keeper.start()

    def kill(self, name: str) -> None:
        """kill -9 one member, by pid."""
        with self._lock:
            p = self.procs[name]
            if p.poll() is None:
                p.kill()
            p.wait(10)

    def stop_all(self) -> None:
        """kill -9 every member still running."""
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(10)
        for name in list(self.procs):
            self.kill(name)

    def dead(self) -> list[str]:
        """Members that exited on their own."""
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def logs(self) -> list:
        """Every member's parsed log."""
        return [parse_member(f.stem, f.read_text().splitlines()) for f in sorted(self.dir.glob("*.log"))]


def describe(bootstrap: str) -> tuple[str, int, dict[str, list[int]]]:
    """(state, coordinator id, member client id -> partitions) of the group.

    A new AdminClient each time: one kept across a coordinator move goes on asking the old
    coordinator (librdkafka caches it) and gets NOT_COORDINATOR for as long as it lives."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    d = admin.describe_consumer_groups([GROUP], request_timeout=10)[GROUP].result(15)
    return d.state.name, d.coordinator.id, {m.client_id: sorted(tp.partition for tp in m.assignment.topic_partitions)
                                            for m in d.members}


def coordinator(bootstrap: str, timeout: float = 60) -> int:
    """The group's coordinator, asking again while it moves (NOT_COORDINATOR, load in progress)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return describe(bootstrap)[1]
        except ck.KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def wait_settled(bootstrap: str, members: int, partitions: int, timeout: float) -> tuple[str, dict]:
    """Wait until the group is Stable with `members` members covering every partition once; the last view."""
    deadline = time.monotonic() + timeout
    view: tuple = ("unknown", -1, None)
    while time.monotonic() < deadline:
        try:
            view = describe(bootstrap)
            owned = sorted(p for ps in view[2].values() for p in ps)
            if view[0] == "STABLE" and len(view[2]) == members and owned == list(range(partitions)):
                break
        except ck.KafkaException as exc:
            view = (f"not described ({exc.args[0].str()})", -1, None)
        time.sleep(0.5)
    return view[0], view[2]


def run_groups(cfg: GroupChaosConfig, base_dir: str | Path, zk_connect: str | None = None,
               log: Callable[[str], None] | None = None) -> GroupReport:
    """One groups run; every process it starts is stopped by pid before it returns."""
    say = log or (lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True))
    say(f"chaos {'--ctp' if cfg.ctp else '--groups'} seed={cfg.seed}; replay with: {cfg.replay()}")
    rng, report, t0 = random.Random(cfg.seed), GroupReport(cfg, base_dir=str(base_dir)), time.monotonic()
    base = Path(base_dir)
    own_zk = None
    if zk_connect is None:
        from pylog.zk.testing import start_test_zookeeper
        own_zk = start_test_zookeeper(str(base / "zookeeper"))
        zk_connect = own_zk.connect_string
    overrides = {**broker_overrides(cfg.session_timeout_ms), "offsets.topic.replication.factor": "3",
                 "offsets.topic.num.partitions": str(cfg.offsets_partitions), **(ctp.TXN_OVERRIDES if cfg.ctp else {})}
    cluster = LocalCluster(base / "cluster", 3, zk_connect=zk_connect, overrides=overrides)
    zk = driver = None
    try:
        cluster.start()
        zk = ZkClient(zk_connect, session_timeout_ms=30000).start()
        create_topic(cluster.bootstrap, cfg.partitions, 3)
        if cfg.ctp:
            create_topic(cluster.bootstrap, cfg.partitions, 3, ctp.OUT_TOPIC)
        driver = fl.FaultDriver(cluster, zk, TOPIC, cfg.partitions, rng, cfg.session_timeout_ms,
                                heal_timeout=cfg.heal_timeout, log=say, t0=t0)
        driver.wait_healthy("topic creation")
        faults = driver  # bound for the closure (`driver` is None until here)
        drive(cfg, cluster, zk, base, lambda members: _inject(cfg, rng, faults, members, report, say), report, say)
    except fl.Hang as exc:
        report.findings.append(f"hang: {exc}")
    except Exception as exc:
        report.findings.append(f"run failed: {type(exc).__name__}: {exc}")
    finally:
        if driver is not None:
            driver.resume_all()
        check_brokers(cluster, report.findings, report.broker_errors)
        stop_cluster(cluster, zk, own_zk)
        report.seconds = time.monotonic() - t0
    return report


def drive(cfg: GroupChaosConfig, cluster: LocalCluster, zk: ZkClient, base: Path,
          inject: Callable[[Members], None], report: GroupReport, say: Callable[[str], None]) -> None:
    """The members, the producer and the commit sampler through `inject`'s faults, then the drain and the checks.

    The cluster is up with its topics; every member process is stopped by pid before this returns, pass or fail.
    Shared by the kill-fault runs above and the nemesis runs (pylog/chaos/nemesis/workloads.py)."""
    bootstrap = ",".join(b.address for b in cluster.brokers.values())
    members = Members(bootstrap, base / "members", cfg.member_session_ms, ctp.OUT_TOPIC if cfg.ctp else None)
    workload = sampler = None
    try:
        for i in range(cfg.members):
            members.start(f"m{i}")
        if wait_settled(bootstrap, cfg.members, cfg.partitions, 90)[0] != "STABLE":
            raise fl.Hang("the group did not form within 90 s")
        if cfg.ctp:
            members.keep_alive()
        workload = Workload(bootstrap, TOPIC, cfg.partitions, cfg.rate).start()
        sampler = CommitSampler(bootstrap, cfg.partitions).start()
        inject(members)
        report.acked = workload.stop()
        workload = None
        say(f"faults done; producer stopped ({report.acked.count} acked); waiting for the members to drain")
        _finish(cfg, members, sampler, report, say)
        sampler = None
        if report.ctp is not None:
            say("comparing the in-sync replicas of the input and output topics up to their high watermarks")
            ctp.check_replicas(report.ctp, bootstrap, cluster, zk, cfg.partitions)
    finally:
        for stoppable in (workload, sampler):
            try:
                if stoppable is not None:
                    stoppable.stop()
            except Exception:
                pass
        members.stop_all()
        report.restarts = members.restarts


def kill_member(members: Members, rng: random.Random, at: float) -> str:
    """kill -9 a random member, start it again after 0-2 s; the report line."""
    name = rng.choice(sorted(members.procs))
    members.kill(name)
    down = rng.uniform(0.0, 2.0)
    time.sleep(down)
    members.start(name)
    return f"{at:7.1f}s  kill-member      {name}  down {down:4.1f}s"


def _inject(cfg: GroupChaosConfig, rng: random.Random, driver: fl.FaultDriver, members: Members,
            report: GroupReport, say: Callable[[str], None]) -> None:
    start = time.monotonic()
    time.sleep(1.0)  # records and commits before the first fault
    kinds = plan(cfg, rng)
    for i, kind in enumerate(kinds):
        target = start + cfg.duration * (i + 1) / (len(kinds) + 1)
        time.sleep(max(rng.uniform(0.5, 2.0), target - time.monotonic()))
        at = time.monotonic() - driver.t0
        if kind == "kill-member":
            say(f"fault {i + 1}: kill -9 of a member")
            report.faults.append(kill_member(members, rng, at))
            continue
        bid = coordinator(members.bootstrap) if kind == "kill-coordinator" else None
        if kind == "kill-txn-coordinator":
            bid = ctp.txn_coordinator(driver.zk, rng.choice(sorted(members.procs)))
            bid = bid if bid >= 0 else None
        fault = driver.inject(kind, bid)
        report.faults.append(fault.line())
    time.sleep(max(1.0, start + cfg.duration - time.monotonic()))


def _finish(cfg: GroupChaosConfig, members: Members, sampler: CommitSampler,
            report: GroupReport, say: Callable[[str], None]) -> None:
    probe = ck.Consumer({"bootstrap.servers": sampler.bootstrap, "group.id": "pylog-chaos-hw",
                         "log_level": 3})
    try:
        hws = high_watermarks(probe, TOPIC, cfg.partitions)
    finally:
        probe.close()
    deadline = time.monotonic() + cfg.drain_timeout
    final: dict[int, int] = {}
    while time.monotonic() < deadline:
        try:
            final = sampler.read()
        except Exception:
            pass
        if final == hws:
            break
        time.sleep(0.5)
    else:
        report.findings.append(f"the group did not commit the end of every partition within {cfg.drain_timeout:.0f}s: "
                               f"committed {final}, high watermarks {hws}")
    say(f"committed offsets reached the high watermarks {hws}")
    if cfg.ctp:
        sampler.stop()
        say("verifying: the input in full against the output read as read_committed")
        report.ctp = ctp.verify(members.bootstrap, cfg.partitions,
                                [f.read_text() for f in sorted(members.dir.glob("*.log"))], final)
        return
    state, assignment = wait_settled(members.bootstrap, cfg.members, cfg.partitions, 60)
    history = sampler.stop()
    if dead := members.dead():
        report.findings.append(f"members exited on their own: {dead}")
    say("verifying")
    report.verdict = check_group(report.acked, members.logs(), history, final, hws, assignment, state,
                                 cfg.members)
