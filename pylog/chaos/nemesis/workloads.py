"""The workloads a nemesis run drives from the clients' node: `acks` and Jepsen's `queue`.

Each takes the run's context and `inject` (the schedule of nemeses, which returns once the last
fault healed) and returns (ok, report text, figures for result.json).

    acks    the acks=all producer of numbered records and a reader along (pylog/chaos/workload.py),
            checked for acknowledged records lost or moved, records served but not kept, and replicas
            that differ (pylog/chaos/verify.py)
    txn     the transactional producer (pylog/chaos/txn.py), checked for exactly-once as read_committed sees
            it and for identical replicas (control batches too)
    queue   Jepsen's queue workload and checker (pylog/chaos/jepsen/): the history, the checker's anomalies,
            and the run folder with perf.png with the nemeses' windows shaded
    groups  a consumer group of member processes (pylog/chaos/groups.py) consuming and committing, a member
            killed -9 now and then besides the nemeses; checked by group_verify.py (every acknowledged record
            processed, no committed offset backwards or past what was processed, the group Stable at the end)
    ctp     the same with consume-transform-produce workers (pylog/chaos/ctp.py), checked for exactly-once
            end to end and identical replicas of the input and output topics
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any, Callable

from pylog.chaos import run as chaos
from pylog.chaos.nemesis.base import Context

# Jepsen's safe mode: the group and transaction state replicated like the data (RF 3, min ISR 2).
# Also the groups and ctp workloads' (groups.py and ctp.py ask for the same).
QUEUE_OVERRIDES = {"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "5",
                   "transaction.state.log.replication.factor": "3", "transaction.state.log.num.partitions": "5"}


def acks(cfg: Any, ctx: Context, inject: Callable[[], None], say: Callable[[str], None]) -> tuple[bool, str, dict]:
    """acks=all under the nemeses; every acknowledged record must be at its offset afterwards."""
    report = chaos.Report(chaos.ChaosConfig(seed=cfg.seed, faults=cfg.faults, brokers=cfg.brokers,
                                            partitions=cfg.partitions, rate=cfg.rate),
                          base_dir=str(ctx.cluster.base.parent))
    bootstrap = ",".join(b.address for b in ctx.cluster.brokers.values())
    try:
        chaos.run_acks(bootstrap, cfg.partitions, cfg.rate, lambda _workload: inject(), report, say)
        chaos.verify_acked(cfg.partitions, ctx.cluster, ctx.driver, bootstrap, report, say)
    finally:
        figures = {"acked": report.acked.count if report.acked else 0, "sent": report.acked.sent if report.acked else 0,
                   "lost": report.lost, "phantoms": report.phantoms, "duplicates": report.duplicates,
                   "inversions": sum(c.inversions for c in report.checks.values())}
    lines = [ln for ln in report.text().splitlines()
             if ln.startswith(("records:", "read along:", "  partition", "    lost", "    served", "    acknowledged"))]
    return report.ok, "\n".join(lines + [f"FINDING: {f}" for f in report.findings]), figures


def txn(cfg: Any, ctx: Context, inject: Callable[[], None], say: Callable[[str], None]) -> tuple[bool, str, dict]:
    """Transactions under the nemeses: every committed one visible once, no aborted or partial one."""
    ccfg = chaos.ChaosConfig(seed=cfg.seed, faults=cfg.faults, brokers=cfg.brokers, partitions=cfg.partitions,
                             rate=cfg.rate, transactions=True)
    report = chaos.Report(ccfg, base_dir=str(ctx.cluster.base.parent))
    bootstrap = ",".join(b.address for b in ctx.cluster.brokers.values())
    chaos.run_transactions(ccfg, ctx.cluster, ctx.driver, bootstrap, lambda _workload: inject(), report, say)
    lines = [ln for ln in report.text().splitlines() if ln.startswith(("transactions:", "  partition"))]
    t = report.txn
    figures = {"committed": len(t.committed), "aborted": len(t.aborted), "unknown": len(t.unknown)} if t else {}
    return report.ok, "\n".join(lines + [f"FINDING: {f}" for f in report.findings]), figures


def queue(cfg: Any, ctx: Context, inject: Callable[[], None], say: Callable[[str], None]) -> tuple[bool, str, dict]:
    """Jepsen's queue workload under the nemeses, drained after the last heal, then checked."""
    from pylog.chaos import verify
    from pylog.chaos.jepsen import Extras, QueueConfig, QueueWorkload, check, write_run_folder
    from pylog.chaos.verify import find_hanging

    base = ctx.cluster.base.parent
    bootstrap = ",".join(b.address for b in ctx.cluster.brokers.values())
    workload = QueueWorkload(QueueConfig(bootstrap, [chaos.TOPIC], cfg.partitions, base / "history.jsonl",
                                         seed=cfg.seed, duration=None, rate=cfg.rate)).start()
    try:
        inject()
        ctx.driver.wait_healthy("the last fault")
        say("faults done and healed; stopping the queue workload and draining every partition")
        summary = workload.stop()
    except BaseException:
        workload.stop(drain=False)
        raise
    checks = verify.replica_checks(bootstrap, ctx.cluster, ctx.driver.zk, chaos.TOPIC, cfg.partitions)
    extras = Extras(divergences=verify.divergences(chaos.TOPIC, checks),
                    high_watermarks={(chaos.TOPIC, p): c.high_watermark for p, c in checks.items()},
                    hanging=find_hanging(bootstrap, chaos.TOPIC))
    result = check(workload.history.path, extras)
    shift = ctx.t0 - workload.history.t0  # the nemeses' clock -> the history's
    windows = [{"start": round(e.start + shift, 3), "end": round(e.end + shift, 3), "kind": e.kind,
                "targets": e.targets} for e in ctx.timeline.entries]
    lines = [f"operations: {summary.ops} {summary.by_type}, processes replaced {summary.replaced}, drained "
             f"{'yes' if summary.drained else 'NO, behind: ' + str(summary.drain_behind)}", result.text()]
    write_run_folder(Path(base), workload.history.path, windows, result,
                     title=f"pylog queue workload under {','.join(cfg.nemeses)}, seed {cfg.seed}",
                     summary="\n".join(lines))
    ok = result.valid and result.stats.get("values_acked", 0) > 0
    return ok, "\n".join(lines), {"ops": summary.ops, "anomalies": result.counts(),
                                  "bad": result.counts(bad=True), "drained": summary.drained}


def groups(cfg: Any, ctx: Context, inject: Callable[[], None], say: Callable[[str], None]) -> tuple[bool, str, dict]:
    """A consumer group (or consume-transform-produce workers) under the nemeses, plus kill -9s of members."""
    from pylog.chaos import ctp
    from pylog.chaos.groups import GroupChaosConfig, GroupReport, drive

    gcfg = GroupChaosConfig(seed=cfg.seed, faults=cfg.faults, member_kills=0, members=cfg.members,
                            partitions=cfg.partitions, rate=cfg.rate, session_timeout_ms=cfg.session_timeout_ms,
                            offsets_partitions=int(QUEUE_OVERRIDES["offsets.topic.num.partitions"]),
                            ctp=cfg.workload == "ctp")
    if gcfg.ctp:
        chaos.create_topic(ctx.cluster.bootstrap, cfg.partitions, cfg.brokers, ctp.OUT_TOPIC)
        ctx.driver.wait_healthy("the output topic's creation")
    report = GroupReport(gcfg, base_dir=str(ctx.cluster.base.parent))
    drive(gcfg, ctx.cluster, ctx.driver.zk, ctx.cluster.base.parent, lambda members: _with_member_kills(
        members, random.Random(cfg.seed ^ 0x6D656D), inject, report, say), report, say)
    text = report.text().splitlines()
    # the checks' FINDING lines (groups.py renders them) and the run's, after the figures
    lines = [ln for ln in text if ln.startswith(("records:", "processed", "consume-transform-produce", "in-sync", "  "))
             and "kill-member" not in ln] + [f"member kills: {len(report.faults)}"] + \
        [ln for ln in text if ln.startswith("FINDING")]
    figures = {"acked": report.acked.count if report.acked else 0, "member_kills": len(report.faults)}
    if report.verdict is not None:
        figures.update(processed=report.verdict.processed, commits=report.verdict.commits)
    if report.ctp is not None:
        figures.update(inputs=report.ctp.inputs, outputs=report.ctp.outputs,
                       committed_txns=report.ctp.committed_txns, aborted_txns=report.ctp.aborted_txns)
    verdict = report.ctp if gcfg.ctp else report.verdict
    figures["checks"] = list(verdict.findings) if verdict is not None else []  # the anomalies, by name first
    return report.ok, "\n".join(lines), figures


def _with_member_kills(members: Any, rng: random.Random, inject: Callable[[], None], report: Any,
                       say: Callable[[str], None]) -> None:
    """Run the nemeses' schedule while a thread kills -9 (and restarts) a random member every 10-30 s."""
    from pylog.chaos.groups import kill_member

    done = threading.Event()
    t0 = time.monotonic()

    def killer() -> None:
        while not done.wait(rng.uniform(10, 30)):
            report.faults.append(kill_member(members, rng, time.monotonic() - t0))
            say(f"member fault: {report.faults[-1].strip()}")

    thread = threading.Thread(target=killer, name="chaos-member-kills", daemon=True)
    thread.start()
    try:
        inject()
    finally:
        done.set()
        thread.join(30)
