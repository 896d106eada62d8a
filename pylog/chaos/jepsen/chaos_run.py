"""`scripts/chaos --workload queue`: Jepsen's queue workload on a local loopback cluster under today's faults
(kill -9 of leaders, the controller or any broker, pauses, controlled shutdowns, ZooKeeper session expiry; see
faults.py), checked by the queue checker, written to a run folder.

Three brokers, RF 3 with min.insync.replicas 2, `__consumer_offsets` and `__transaction_state` at RF 3. The
faults come one at a time from the seed's schedule while the workload runs; after the last one heals, the
workload drains (Jepsen's final phase) and the harness adds pylog's own inputs to the checker: the in-sync
replicas compared batch by batch up to the high watermark, each partition's final high watermark, and
find-hanging's output.
"""

from __future__ import annotations

import logging
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pylog.chaos import faults as fl
from pylog.chaos import verify
from pylog.chaos.jepsen.checker import CheckResult, Extras, check
from pylog.chaos.jepsen.clients import CLIENT_LOG
from pylog.chaos.jepsen.folder import write_run_folder
from pylog.chaos.jepsen.workload import QueueConfig, QueueWorkload, WorkloadSummary
from pylog.localcluster import LocalCluster
from pylog.zk.client import ZkClient

TOPIC = "chaos"
OVERRIDES = {"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "5",
             "transaction.state.log.replication.factor": "3", "transaction.state.log.num.partitions": "5"}


@dataclass
class QueueChaosConfig:
    """What a queue chaos run does; the defaults are a short run's."""

    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 31))
    faults: int = 4
    expiries: int = 1
    kinds: list[str] | None = None  # a fixed fault list instead of the seed's plan (tests)
    duration: float = 0.0  # seconds of operations at least; faults are spread over it
    partitions: int = 4
    processes: int = 8
    rate: float = 100.0  # operations per second over all processes
    session_timeout_ms: int = 4000
    heal_timeout: float = 90.0
    op_timeout: float = 10.0
    drain_timeout: float = 60.0

    def replay(self) -> str:
        """The command that repeats this run's fault schedule."""
        return (f"scripts/chaos --workload queue --seed {self.seed} --faults {self.faults} --expiries {self.expiries}"
                f" --duration {self.duration:g} --partitions {self.partitions} --rate {self.rate:g}")


@dataclass
class QueueReport:
    """A queue run: the faults, the workload's summary, the checker's result, the run folder."""

    config: QueueChaosConfig
    base_dir: str = ""
    folder: str = ""
    faults: list[fl.Fault] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    workload: WorkloadSummary | None = None
    result: CheckResult | None = None
    findings: list[str] = field(default_factory=list)
    broker_errors: dict[int, list[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No bad anomaly, no hang or crash, and the workload got acknowledged writes through."""
        return not self.findings and self.result is not None and self.result.valid and \
            self.result.stats.get("values_acked", 0) > 0

    def text(self) -> str:
        """The summary printed at the end of a run."""
        cfg = self.config
        lines = [f"chaos --workload queue seed={cfg.seed}: {'PASS' if self.ok else 'FAIL'} in {self.seconds:.0f}s "
                 f"(3 brokers, RF 3, min.insync.replicas 2, {cfg.partitions} partitions, {cfg.processes} processes)",
                 f"faults injected: {len(self.faults)}"]
        lines += ["  " + f.line() for f in self.faults]
        if self.workload is not None:
            w = self.workload
            lines.append(f"operations: {w.ops} {w.by_type}, processes replaced {w.replaced}, drained "
                         f"{'yes' if w.drained else 'NO, behind: ' + str(w.drain_behind)} (end took {w.stop_s} s)")
            if w.errors:
                lines.append(f"errors: {dict(sorted(w.errors.items(), key=lambda kv: -kv[1])[:8])}")
        if self.result is not None:
            lines.append(self.result.text())
        for bid, errs in sorted(self.broker_errors.items()):
            lines.append(f"broker {bid} logged {len(errs)} ERROR lines, first: {errs[0][:300]}")
        lines += [f"FINDING: {f}" for f in self.findings]
        if self.folder:
            lines.append(f"run folder (history, faults, result, perf.png): {self.folder}")
        lines.append(f"replay: {cfg.replay()}")
        return "\n".join(lines)


def run_queue_chaos(cfg: QueueChaosConfig, base_dir: str | Path, zk_connect: str | None = None,
                    folder: str | Path | None = None, log: Callable[[str], None] | None = None) -> QueueReport:
    """One queue run under faults; every process it starts is stopped by pid before it returns."""
    from pylog.chaos.run import broker_overrides, create_topic, record_failure, wind_down

    say = log or (lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True))
    say(f"chaos --workload queue seed={cfg.seed}; replay with: {cfg.replay()}")
    base = Path(base_dir)
    out = Path(folder) if folder else Path(tempfile.mkdtemp(prefix=f"pylog-jepsen-queue-{cfg.seed}-"))
    out.mkdir(parents=True, exist_ok=True)
    rng, report, t0 = random.Random(cfg.seed), QueueReport(cfg, base_dir=str(base), folder=str(out)), time.monotonic()
    own_zk = None
    if zk_connect is None:
        from pylog.zk.testing import start_test_zookeeper
        own_zk = start_test_zookeeper(str(base / "zookeeper"))
        zk_connect = own_zk.connect_string
    cluster = LocalCluster(base / "cluster", 3, zk_connect=zk_connect,
                           overrides={**broker_overrides(cfg.session_timeout_ms), **OVERRIDES})
    zk = driver = workload = None
    client_log = logging.FileHandler(out / "clients.log")
    client_log.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    CLIENT_LOG.addHandler(client_log)
    try:
        cluster.start()
        zk = ZkClient(zk_connect, session_timeout_ms=30000).start()
        create_topic(cluster.bootstrap, cfg.partitions, 3, TOPIC)
        driver = fl.FaultDriver(cluster, zk, TOPIC, cfg.partitions, rng, cfg.session_timeout_ms,
                                heal_timeout=cfg.heal_timeout, log=say, t0=t0)
        driver.wait_healthy("topic creation")
        bootstrap = ",".join(b.address for b in cluster.brokers.values())
        workload = QueueWorkload(QueueConfig(bootstrap, [TOPIC], cfg.partitions, out / "history.jsonl",
                                             seed=cfg.seed, duration=None, processes=cfg.processes, rate=cfg.rate,
                                             op_timeout=cfg.op_timeout, drain_timeout=cfg.drain_timeout)).start()
        _inject(cfg, rng, driver, workload, report, say)
        driver.wait_healthy("the last fault")
        say("faults done and healed; stopping the workload and draining every partition")
        report.workload, w = workload.stop(), workload
        workload = None
        say("comparing the in-sync replicas up to the high watermark; find-hanging")
        checks = verify.replica_checks(bootstrap, cluster, zk, TOPIC, cfg.partitions)
        extras = Extras(divergences=verify.divergences(TOPIC, checks),
                        high_watermarks={(TOPIC, p): c.high_watermark for p, c in checks.items()},
                        hanging=verify.find_hanging(bootstrap, TOPIC))
        report.result = check(w.history.path, extras)
    except Exception as exc:
        record_failure(report, exc)
    finally:
        wind_down(report, driver, cluster, zk, own_zk, lambda: _stop_quietly(workload, report))
        CLIENT_LOG.removeHandler(client_log)
        client_log.close()
        report.seconds = time.monotonic() - t0
    if report.result is not None:
        write_run_folder(out, out / "history.jsonl", report.timeline, report.result,
                         title=f"pylog queue workload, seed {cfg.seed}", summary=report.text())
    return report


def _inject(cfg: QueueChaosConfig, rng: random.Random, driver: fl.FaultDriver, workload: QueueWorkload,
            report: QueueReport, say: Callable[[str], None]) -> None:
    """The faults, spread over the duration; each one's window goes into the timeline on the history's clock."""
    start = time.monotonic()
    time.sleep(2.0)  # some operations before the first fault
    kinds = cfg.kinds if cfg.kinds is not None else fl.plan(cfg.faults, rng, cfg.expiries)
    shift = driver.t0 - workload.history.t0  # driver time -> history time
    for i, kind in enumerate(kinds):
        target = start + cfg.duration * (i + 1) / (len(kinds) + 1)
        time.sleep(max(rng.uniform(0.5, 2.0), target - time.monotonic()))
        f = driver.inject(kind)
        report.timeline.append({"start": round(f.at + shift, 3), "end": round(f.at + shift + f.down_s, 3),
                                "healed": round(f.at + shift + f.down_s + f.heal_s, 3), "kind": kind,
                                "targets": [f.broker], "note": f.note})
    time.sleep(max(2.0, start + cfg.duration - time.monotonic()))


def main_queue(ap: Any, args: Any) -> int:
    """`scripts/chaos --workload queue`: validate the shared flags and run (or repeat, --runs) the queue runs."""
    from pylog.chaos.run import run_many

    if args.faults < args.expiries or args.faults < 0 or args.expiries < 0:
        ap.error("--faults must be >= --expiries >= 0")
    if args.partitions < 1 or args.rate <= 0 or args.runs < 1 or args.duration < 0:
        ap.error("--partitions and --runs must be >= 1, --rate > 0 and --duration >= 0")
    first = args.seed if args.seed is not None else QueueChaosConfig().seed
    return run_many(args, lambda seed: run_queue_chaos(QueueChaosConfig(
        seed=seed, faults=args.faults, expiries=args.expiries, duration=args.duration, partitions=args.partitions,
        rate=args.rate, session_timeout_ms=args.session_timeout_ms),
        tempfile.mkdtemp(prefix=f"pylog-chaos-queue-{seed}-")), first, "segments")


def _stop_quietly(workload, report) -> None:
    """A workload the run left running (it failed midway) stops without draining; its failure is already noted."""
    if workload is not None:
        try:
            report.workload = workload.stop(drain=False)
        except Exception:
            pass
