"""One chaos run: cluster, workload, faults, verification, report; `scripts/chaos` is its command line.

    scripts/chaos [--faults N] [--expiries N] [--duration S] [--seed N] [--runs N]
                  [--partitions N] [--rate R] [--settle isr|rejoin] [--transactions]
                  [--inter-broker PLAINTEXT|SASL_SSL] [--keep]
    scripts/chaos --workload queue [--faults N] [--expiries N] [--duration S] [--seed N] [--runs N] [--partitions N]
    scripts/chaos --groups [--ctp] [--members N] [--member-kills N] [--faults N] [--duration S] [--seed N]
                  [--runs N] [--partitions N] [--rate R] [--keep]

--transactions swaps the acks=all producer for a transactional one and checks exactly-once
(pylog/chaos/txn.py) instead of acknowledged offsets.
--groups runs a consumer group of member processes through broker (coordinator, controller)
and member kills instead (pylog/chaos/groups.py); --expiries and --settle do not apply to it.
--ctp (implies --groups) makes the members consume-transform-produce workers with transactions and
checks exactly-once end to end (pylog/chaos/ctp.py).
--workload acks|txn|groups|ctp names the same runs (txn = --transactions).

    scripts/chaos --nemesis partition,pause,kill,link,clock,disk,zk [--workload acks|txn|queue|groups|ctp]
                  [--faults N] [--seed N] [--runs N] [--partitions N] [--rate R] [--zookeepers N] [--members N] [--keep]

--nemesis (as root) runs each seed in a private network of namespaces, one per ZooKeeper, broker and the
clients, under the named nemeses (pylog/chaos/nemesis/); zk implies a 3-node ZooKeeper ensemble. A name
may carry one variant, e.g. partition:leader-zk (the leader cut from ZooKeeper only, Jepsen's 2013 case).

The seed decides the fault schedule (kinds, victims, downtimes, gaps); the producer's timing is
not replayable, so a replay repeats the faults, not the exact interleaving. Every process the run
starts is stopped by pid when it ends, pass or fail.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from pylog.chaos import faults as fl
from pylog.chaos import txn as txn_chaos
from pylog.chaos import verify
from pylog.chaos.secure import INTER_BROKER_LISTENERS, SecureSetup
from pylog.chaos.workload import Acked, Reader, Workload
from pylog.client.sync import KafkaClient
from pylog.localcluster import LocalCluster
from pylog.protocol.api import ApiKey
from pylog.zk.client import ZkClient

TOPIC = "chaos"


@dataclass
class ChaosConfig:
    """What a run does; the defaults are the bounded CI run's."""

    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 31))
    faults: int = 5
    expiries: int = 1
    duration: float = 0.0  # seconds of producing at least; faults are spread over it
    brokers: int = 3
    partitions: int = 4
    rate: float = 400.0  # records per second
    session_timeout_ms: int = 4000
    heal_timeout: float = 90.0
    settle: str = "isr"
    transactions: bool = False
    inter_broker: str = "PLAINTEXT"  # or SASL_SSL: replication and the controller over TLS + SCRAM

    def replay(self) -> str:
        """The command that repeats this run's fault schedule."""
        return (f"scripts/chaos --seed {self.seed} --faults {self.faults} --expiries {self.expiries} "
                f"--duration {self.duration:g} --partitions {self.partitions} --rate {self.rate:g} "
                f"--settle {self.settle}" + (" --transactions" if self.transactions else "")
                + (f" --inter-broker {self.inter_broker}" if self.inter_broker != "PLAINTEXT" else ""))


@dataclass
class Report:
    """Everything a run found."""

    config: ChaosConfig
    faults: list[fl.Fault] = field(default_factory=list)
    acked: Acked | None = None
    checks: dict[int, verify.PartitionCheck] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)  # hangs, crashes, failed checks
    broker_errors: dict[int, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    txn: txn_chaos.TxnOutcomes | None = None  # --transactions: how each transaction ended
    served: dict[int, dict[int, int]] = field(default_factory=dict)  # what the reader along was served
    base_dir: str = ""

    @property
    def lost(self) -> int:
        """Acknowledged records not found at their acknowledged offset."""
        return sum(len(c.lost) for c in self.checks.values())

    @property
    def phantoms(self) -> int:
        """Records a consumer was served that are not in the final log at that offset."""
        return sum(len(c.phantoms) for c in self.checks.values())

    @property
    def duplicates(self) -> int:
        """Extra copies of records (not loss)."""
        return sum(c.duplicates for c in self.checks.values())

    @property
    def ok(self) -> bool:
        """No loss, no divergence, no hang or crash (acknowledgement-order inversions are reported, allowed)."""
        return not self.findings and self.lost == 0 and self.phantoms == 0 and \
            (bool(self.checks) or (self.txn is not None and bool(self.txn.committed))) and \
            all(not c.divergence for c in self.checks.values())

    def text(self) -> str:
        """The summary printed at the end of a run."""
        cfg = self.config
        acked = self.acked.count if self.acked else 0
        lines = [f"chaos seed={cfg.seed}: {'PASS' if self.ok else 'FAIL'} in {self.seconds:.0f}s "
                 f"({cfg.brokers} brokers, RF {cfg.brokers}, min.insync.replicas 2, {cfg.partitions} partitions, "
                 f"acks=all, inter-broker {cfg.inter_broker})",
                 f"faults injected: {len(self.faults)} "
                 f"({', '.join(f'{k} x{n}' for k, n in _count(f.kind for f in self.faults).items())})"]
        lines += ["  " + f.line() for f in self.faults]
        if self.txn is not None:
            t = self.txn
            lines.append(f"transactions: {len(t.committed)} committed, {len(t.aborted)} aborted, {len(t.unknown)} "
                         f"of unknown outcome, {t.producers} producers, errors {dict(t.errors)}")
        else:
            sent = self.acked.sent if self.acked else 0
            errors = dict(self.acked.errors) if self.acked else {}
            lines.append(f"records: sent {sent}, acked {acked}, lost {self.lost}, duplicates {self.duplicates}, "
                         f"failed deliveries {sum(errors.values())} {errors if errors else ''}".rstrip())
            lines.append(f"read along: {sum(c.read_along for c in self.checks.values())} records served during "
                         f"the faults, {self.phantoms} of them not in the final log (above the high watermark)")
        for p, c in sorted(self.checks.items()):
            acks = "" if self.txn is not None else (f"acked {c.acked}, lost {len(c.lost)}, duplicates {c.duplicates}, "
                                                    f"inversions {c.inversions}, ")
            lines.append(f"  partition {p}: hw {c.high_watermark}, {acks}replicas {c.replicas} "
                         f"identical over {c.batches} batches" + (f" -- DIVERGED: {c.divergence}" if c.divergence
                                                                  else ""))
            if c.lost:
                lines.append(f"    lost (seq, offset): {c.lost[:10]}{' ...' if len(c.lost) > 10 else ''}")
            if c.inversion_cases:
                lines.append(f"    acknowledged out of offset order (allowed without idempotence; seq, offset, after "
                             f"offset): {c.inversion_cases}")
            if c.phantoms:
                lines.append(f"    served but not kept (offset, seq): {c.phantoms[:10]}")
        for bid, errs in sorted(self.broker_errors.items()):
            lines.append(f"broker {bid} logged {len(errs)} ERROR lines, first: {errs[0][:300]}")
        lines += [f"FINDING: {f}" for f in self.findings]
        lines.append(f"replay: {cfg.replay()}")
        return "\n".join(lines)


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def broker_overrides(session_timeout_ms: int) -> dict[str, str]:
    """Broker settings for chaos: short timeouts so a fault heals in seconds."""
    return {"zookeeper.session.timeout.ms": str(session_timeout_ms),
            # below the session timeout, so a pause that keeps the session still shrinks ISRs
            "replica.lag.time.max.ms": str(session_timeout_ms * 5 // 8),
            "unclean.leader.election.enable": "false",
            "controlled.shutdown.enable": "false"}


def create_topic(bootstrap: str, partitions: int, rf: int, name: str = TOPIC) -> None:
    """A chaos topic with min.insync.replicas=2 (CreateTopics through a broker)."""
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.CreateTopics, lambda cls, v: cls(
            topics=[cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf, assignments=[],
                                       configs=[cls.CreatableTopic.CreatableTopicConfig(name="min.insync.replicas",
                                                                                        value="2")])],
            timeout_ms=30000, validate_only=False))
    if resp.topics[0].error_code != 0:
        raise RuntimeError(f"creating the chaos topic {name} failed: error {resp.topics[0].error_code}")


def _error_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    lines = text.splitlines()
    # The line after an ERROR names the task or the exception: keep it for the report.
    return [" | ".join(lines[i:i + 2]) for i, ln in enumerate(lines) if " ERROR " in ln]


def run(cfg: ChaosConfig, base_dir: str | os.PathLike[str], zk_connect: str | None = None,
        log: Callable[[str], None] | None = None) -> Report:
    """Run the workload under faults and verify; every started process is stopped before returning."""
    say = log or (lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True))
    say(f"chaos seed={cfg.seed}; replay with: {cfg.replay()}")
    rng = random.Random(cfg.seed)
    report = Report(cfg, base_dir=str(base_dir))
    t0 = time.monotonic()
    own_zk = None
    if zk_connect is None:
        from pylog.zk.testing import start_test_zookeeper
        own_zk = start_test_zookeeper(str(Path(base_dir) / "zookeeper"))
        zk_connect = own_zk.connect_string
    cluster, secure = _cluster(cfg, Path(base_dir), zk_connect)
    zk = driver = None
    try:
        zk = ZkClient(zk_connect, session_timeout_ms=30000).start()
        if secure is not None:
            secure.store_credential(zk)
        cluster.start()
        create_topic(cluster.bootstrap, cfg.partitions, cfg.brokers)
        driver = fl.FaultDriver(cluster, zk, TOPIC, cfg.partitions, rng, cfg.session_timeout_ms,
                                heal_timeout=cfg.heal_timeout, settle=cfg.settle, log=say, t0=t0)
        driver.wait_healthy("topic creation")
        bootstrap = ",".join(b.address for b in cluster.brokers.values())
        inject = lambda workload: _inject_all(cfg, driver, rng, workload, say, report)  # noqa: E731
        if cfg.transactions:
            run_transactions(cfg, cluster, driver, bootstrap, inject, report, say)
        else:
            run_acks(bootstrap, cfg.partitions, cfg.rate, inject, report, say)
            verify_acked(cfg.partitions, cluster, driver, bootstrap, report, say)
    except Exception as exc:
        record_failure(report, exc)
    finally:
        wind_down(report, driver, cluster, zk, own_zk)
        report.seconds = time.monotonic() - t0
    return report


def record_failure(report: Report, exc: Exception) -> None:
    """A run that failed is a finding (a hang named as one), never an exception out of the run."""
    report.findings.append(f"hang: {exc}" if isinstance(exc, fl.Hang) else f"run failed: {type(exc).__name__}: {exc}")


def wind_down(report: Report, driver: fl.FaultDriver | None, cluster: LocalCluster, zk: ZkClient | None, own_zk,
              stop_clients: Callable[[], None] | None = None) -> None:
    """The end of every run: note its faults, resume what is paused, stop the clients, check and stop the brokers."""
    report.faults = driver.faults if driver else []
    if driver is not None:
        driver.resume_all()
    if stop_clients is not None:
        stop_clients()
    check_brokers(cluster, report.findings, report.broker_errors)
    stop_cluster(cluster, zk, own_zk)


def _cluster(cfg: ChaosConfig, base: Path, zk_connect: str) -> tuple[LocalCluster, SecureSetup | None]:
    """The cluster of a run (not started), with the SASL_SSL inter-broker setup when asked for."""
    overrides, listeners, secure = broker_overrides(cfg.session_timeout_ms), {}, None
    if cfg.inter_broker == "SASL_SSL":
        secure = SecureSetup(base)
        overrides, listeners = {**overrides, **secure.overrides}, secure.extra_listeners
    return LocalCluster(base / "cluster", cfg.brokers, zk_connect=zk_connect, overrides=overrides,
                        extra_listeners=listeners), secure


def run_transactions(cfg: ChaosConfig, cluster: LocalCluster, driver: fl.FaultDriver, bootstrap: str,
                      inject: Callable[[object], None], report: Report, say: Callable[[str], None]) -> None:
    """The transactional producer under faults, then exactly-once and replica checks."""
    workload = txn_chaos.TxnWorkload(bootstrap, TOPIC, cfg.partitions).start()
    # On failure the workload is a daemon thread that ends with the brokers.
    inject(workload)
    report.txn = workload.stop()
    driver.wait_healthy("the last fault")
    say("reading every partition back as read_committed")
    report.findings += txn_chaos.check(report.txn, txn_chaos.read_committed(bootstrap, TOPIC, cfg.partitions))
    say("comparing the in-sync replicas' segments (control batches too) up to the high watermark")
    report.checks = verify.replica_checks(bootstrap, cluster, driver.zk, TOPIC, cfg.partitions)


def run_acks(bootstrap: str, partitions: int, rate: float, inject: Callable[[Workload], None], report: Report,
             say: Callable[[str], None]) -> dict[int, dict[int, int]]:
    """The acks=all producer and a reader along while `inject` runs the faults; what the reader was served."""
    workload = Workload(bootstrap, TOPIC, partitions, rate).start()
    reader = Reader(bootstrap, TOPIC, partitions).start()
    try:
        inject(workload)
        say(f"faults done; stopping the producer (acked so far {workload.snapshot()})")
        report.acked = workload.stop()
        workload = None
        served = reader.stop()
        if reader.conflicts:
            report.findings.append(f"a consumer was served two different records at the same offset: "
                                   f"{reader.conflicts[:3]}")
        reader = None
    finally:
        if workload is not None:  # the run failed early: report what was acknowledged so far
            report.acked = workload.acked
            _quietly(lambda: workload.stop(timeout=5))
        if reader is not None:
            _quietly(lambda: reader.stop(timeout=5))
    report.served = served
    return served


def _quietly(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:
        pass


def check_brokers(cluster: LocalCluster, findings: list[str], broker_errors: dict[int, list[str]]) -> None:
    """Note brokers that exited by themselves (not our kill -9) and the ERROR lines of every broker's log."""
    for bid, b in cluster.brokers.items():
        if b.proc is not None and b.proc.poll() is not None and b.proc.returncode not in (-9,):
            findings.append(f"broker {bid} exited on its own with code {b.proc.returncode}")
        errs = _error_lines(b.log_path)
        if errs:
            broker_errors[bid] = errs


def stop_cluster(cluster: LocalCluster, zk: ZkClient | None, own_zk) -> None:
    """Kill every broker by pid (their logs were read already), close the ZooKeeper client, stop our ZooKeeper."""
    for b in cluster.brokers.values():
        b.kill()
    if zk is not None:
        zk.close()
    if own_zk is not None:
        own_zk.stop()


def _inject_all(cfg: ChaosConfig, driver: fl.FaultDriver, rng: random.Random, workload: Workload,
                say: Callable[[str], None], report: Report) -> None:
    start = time.monotonic()
    time.sleep(1.0)  # some records before the first fault
    kinds = fl.plan(cfg.faults, rng, cfg.expiries)
    for i, kind in enumerate(kinds):
        target = start + cfg.duration * (i + 1) / (len(kinds) + 1)
        time.sleep(max(rng.uniform(0.5, 2.0), target - time.monotonic()))
        driver.inject(kind)
        say(f"  acked so far: {workload.snapshot()}")
    time.sleep(max(2.0, start + cfg.duration - time.monotonic()))


def verify_acked(partitions: int, cluster: LocalCluster, driver: fl.FaultDriver, bootstrap: str, report: Report,
                 say: Callable[[str], None]) -> None:
    """After healing: every acknowledged record at its offset, nothing served that was not kept, replicas identical."""
    driver.wait_healthy("the last fault")
    say("reading every partition back")
    logs = verify.read_back(bootstrap, TOPIC, partitions)
    report.checks = verify.check_records(report.acked, logs, report.served)
    say("comparing the in-sync replicas' segments with pylog-dump-log --output json")
    verify.compare_isr(cluster, driver.zk, TOPIC, report.checks)
    for p, chk in sorted(report.checks.items()):
        if chk.acked == 0:
            report.findings.append(f"partition {p}: nothing was acknowledged (the workload never got through)")


def parser() -> argparse.ArgumentParser:
    """scripts/chaos's options."""
    ap = argparse.ArgumentParser(prog="scripts/chaos", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    d = ChaosConfig(seed=0)
    ap.add_argument("--faults", type=int, default=20, help="faults to inject (default 20)")
    ap.add_argument("--expiries", type=int, default=2, help="of which ZooKeeper session expiries (default 2)")
    ap.add_argument("--duration", type=float, default=0.0, help="produce for at least this many seconds")
    ap.add_argument("--seed", type=int, default=None, help="fault schedule seed (random if not given)")
    ap.add_argument("--partitions", type=int, default=6, help="partitions of the chaos topic (default 6)")
    ap.add_argument("--rate", type=float, default=d.rate, help=f"records per second (default {d.rate:g})")
    ap.add_argument("--session-timeout-ms", type=int, default=d.session_timeout_ms)
    ap.add_argument("--settle", choices=["isr", "rejoin"], default="isr",
                    help="before the next fault wait for full ISRs (default) or only for the victim to rejoin")
    ap.add_argument("--inter-broker", choices=INTER_BROKER_LISTENERS, default="PLAINTEXT",
                    help="the inter-broker listener: SASL_SSL runs replication and the controller over TLS + "
                         "SCRAM-SHA-512 (default PLAINTEXT)")
    ap.add_argument("--runs", type=int, default=1, help="repeat with seeds seed, seed+1, ... (default 1)")
    ap.add_argument("--transactions", action="store_true",
                    help="a transactional producer, checked for exactly-once (lost, aborted, duplicated, reordered, "
                         "partial or hanging transactions)")
    ap.add_argument("--keep", action="store_true", help="keep the run's directory (logs, segments)")
    ap.add_argument("--groups", action="store_true",
                    help="consumer-group chaos: members consume and commit through broker and member kills")
    ap.add_argument("--members", type=int, default=3, help="with --groups: member processes (default 3)")
    ap.add_argument("--member-kills", type=int, default=3, help="with --groups: kill -9s of members (default 3)")
    ap.add_argument("--ctp", action="store_true",
                    help="consume-transform-produce workers as the group's members (implies --groups), checked for "
                         "exactly-once (lost, duplicated, aborted-read, reordered, offsets committed without writes)")
    ap.add_argument("--nemesis", default=None,
                    help="run in a private network under these nemeses, comma-separated: partition, pause, kill, "
                         "link, clock, disk, zk (pylog/chaos/nemesis/; needs root)")
    ap.add_argument("--workload", choices=["acks", "queue", "txn", "groups", "ctp"], default=None,
                    help="acks (the default run), txn (= --transactions), groups (= --groups), ctp (= --ctp), or "
                         "queue: Jepsen's queue workload and checker (pylog/chaos/jepsen; --rate is operations/s); "
                         "every one runs under --nemesis")
    ap.add_argument("--zookeepers", type=int, default=1, help="with --nemesis: ZooKeeper servers (3 = an ensemble)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of scripts/chaos: exit 0 when the run passed, 1 when it found something."""
    ap = parser()
    args = ap.parse_args(argv)
    stop_cleanly_on_term()
    args.transactions |= args.workload == "txn"
    args.groups |= args.workload == "groups"
    args.ctp |= args.workload == "ctp"
    if args.nemesis is not None:
        from pylog.chaos.nemesis.cli import main_nemesis
        return main_nemesis(ap, args)
    if args.workload == "queue":
        from pylog.chaos.jepsen.chaos_run import main_queue
        return main_queue(ap, args)
    if args.groups or args.ctp:
        return _main_groups(ap, args)
    if args.faults < args.expiries or args.faults < 0 or args.expiries < 0:
        ap.error("--faults must be >= --expiries >= 0")
    if args.partitions < 1 or args.rate <= 0 or args.runs < 1 or args.duration < 0:
        ap.error("--partitions and --runs must be >= 1, --rate > 0 and --duration >= 0")
    if args.session_timeout_ms < 1000:
        ap.error("--session-timeout-ms must be >= 1000 (the test ZooKeeper's minimum)")
    first = args.seed if args.seed is not None else ChaosConfig().seed
    return run_many(args, lambda seed: run(ChaosConfig(
        seed=seed, faults=args.faults, expiries=args.expiries, duration=args.duration, partitions=args.partitions,
        rate=args.rate, session_timeout_ms=args.session_timeout_ms, settle=args.settle, transactions=args.transactions,
        inter_broker=args.inter_broker),
        tempfile.mkdtemp(prefix=f"pylog-chaos-{seed}-")), first, "segments")


def stop_cleanly_on_term() -> None:
    """Turn SIGTERM/SIGHUP into SystemExit so the runs' finally blocks stop every broker they started."""
    def stop(signum: int, _frame: object) -> None:
        # A second signal during the clean-up must not cut it short and orphan brokers.
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def run_many(args: argparse.Namespace, one: Callable[[int], object], first: int, kept: str) -> int:
    """`--runs` runs with seeds first, first+1, ...; a run's directory is kept when it failed or with --keep."""
    failed = 0
    for i in range(args.runs):
        report = one(first + i)
        print(report.text(), flush=True)
        if report.ok and not report.broker_errors and not args.keep:
            shutil.rmtree(report.base_dir, ignore_errors=True)
        else:
            print(f"run directory (broker logs, {kept}): {report.base_dir}", flush=True)
        failed += not report.ok
    if args.runs > 1:
        print(f"{args.runs - failed}/{args.runs} runs passed")
    return 1 if failed else 0


def _main_groups(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from pylog.chaos.groups import GroupChaosConfig, run_groups

    if args.faults < 0 or args.member_kills < 0 or args.members < 1 or args.partitions < 1 or args.rate <= 0 \
            or args.runs < 1 or args.duration < 0:
        ap.error("--faults and --member-kills must be >= 0, --members, --partitions and --runs >= 1, --rate > 0")
    first = args.seed if args.seed is not None else GroupChaosConfig().seed
    return run_many(args, lambda seed: run_groups(GroupChaosConfig(
        seed=seed, faults=args.faults, member_kills=args.member_kills, members=args.members,
        partitions=args.partitions, rate=args.rate, duration=args.duration,
        session_timeout_ms=args.session_timeout_ms, ctp=args.ctp),
        tempfile.mkdtemp(prefix=f"pylog-chaos-groups-{seed}-")),
        first, "member logs")


if __name__ == "__main__":
    sys.exit(main())
