"""The part of a nemesis run that lives inside its private network (in the clients' node `cl`).

    python -m pylog.chaos.nemesis.runner RUN_DIR     # RUN_DIR/spec.json written by harness.py

Starts ZooKeeper and the brokers in their own nodes (`ip netns exec`), runs the workload here
(so the clients have an address of their own and partitions can cut them), injects the seed's
schedule of nemeses, verifies, and writes RUN_DIR/result.json and RUN_DIR/timeline.jsonl. Every
process it started is stopped by pid before it exits; the harness then deletes the namespaces.
"""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from pylog.chaos import faults as fl
from pylog.chaos import run as chaos
from pylog.chaos.nemesis import link, module, partition, workloads
from pylog.chaos.nemesis.base import Context, Timeline
from pylog.chaos.nemesis.config import NemesisConfig, schedule
from pylog.chaos.nemesis.net import PrivateNet
from pylog.localcluster import LocalCluster
from pylog.zk.client import ZkClient

ZK_PORT = 2181
BROKER_PORT = 9092


def start_zookeepers(cfg: NemesisConfig, net: PrivateNet, base: Path) -> dict:
    """One ZooKeeper per zk node (an ensemble when there are several); node name -> process."""
    from pylog.chaos.nemesis import zk as zk_nemesis
    return zk_nemesis.start_ensemble(net, [f"zk{i + 1}" for i in range(cfg.zookeepers)], base, ZK_PORT)


def make_cluster(cfg: NemesisConfig, net: PrivateNet, base: Path, zk_connect: str) -> LocalCluster:
    """The brokers, each in its own node, listening on its node's address."""
    extra = workloads.QUEUE_OVERRIDES if cfg.workload != "acks" else {}

    def placement(bid: int) -> tuple[str, list[str]]:
        node = net.node(f"b{bid}")
        if cfg.uses("clock"):
            from pylog.chaos.nemesis import clock
            return node.address, node.prefix + clock.launcher(base, bid)
        return node.address, node.prefix

    cluster = LocalCluster(base / "cluster", cfg.brokers, zk_connect=zk_connect,
                           overrides={**chaos.broker_overrides(cfg.session_timeout_ms), **extra}, placement=placement,
                           broker_ports={i: BROKER_PORT for i in range(cfg.brokers)})
    if cfg.uses("disk"):
        from pylog.chaos.nemesis import disk
        disk.configure(cluster, base, cfg.brokers)
    return cluster


def inject_all(cfg: NemesisConfig, ctx: Context) -> None:
    """Every fault of the schedule, each followed by a wait until the cluster is healthy again."""
    start = time.monotonic()
    time.sleep(1.0)  # some records before the first fault
    plan = schedule(cfg)
    for i, (name, kind, seed) in enumerate(plan):
        target = start + cfg.duration * (i + 1) / (len(plan) + 1)
        time.sleep(max(random.Random(seed).uniform(0.5, 2.0), target - time.monotonic()))
        ctx.log(f"fault {i + 1}/{len(plan)}: {name}:{kind} (seed {seed})")
        entry = module(name).inject(ctx, kind, random.Random(seed))
        entry.heal_s = ctx.driver.wait_healthy(f"{entry.kind} on {','.join(entry.targets)}")
        ctx.timeline.add(entry)
        ctx.log(f"  healed: {entry.line()}")
    time.sleep(max(2.0, start + cfg.duration - time.monotonic()))


def run(cfg: NemesisConfig, net: PrivateNet, base: Path, say: Callable[[str], None]) -> dict:
    """Cluster, workload, nemeses, verification; every process stopped by pid before returning the result."""
    t0 = time.monotonic()
    timeline = Timeline(base / "timeline.jsonl")
    ok, text, figures, findings, errors = False, "", {}, [], {}
    zookeepers: dict = {}
    cluster = zk = ctx = None
    try:
        zookeepers = start_zookeepers(cfg, net, base)
        zk_connect = ",".join(f"{net.node(n).address}:{ZK_PORT}" for n in zookeepers)
        cluster = make_cluster(cfg, net, base, zk_connect)
        zk = ZkClient(zk_connect, session_timeout_ms=30000).start()
        cluster.start()
        chaos.create_topic(cluster.bootstrap, cfg.partitions, cfg.brokers)
        driver = fl.FaultDriver(cluster, zk, chaos.TOPIC, cfg.partitions, random.Random(cfg.seed),
                                cfg.session_timeout_ms, heal_timeout=cfg.heal_timeout, log=say, t0=t0)
        ctx = Context(net, cluster, driver, zookeepers, cfg.session_timeout_ms, t0, say, timeline=timeline)
        driver.wait_healthy("topic creation")
        workload = {"acks": workloads.acks, "txn": workloads.txn, "queue": workloads.queue,
                    "groups": workloads.groups, "ctp": workloads.groups}[cfg.workload]
        ok, text, figures = workload(cfg, ctx, lambda: inject_all(cfg, ctx), say)
    except fl.Hang as exc:
        findings.append(f"hang: {exc}")
    except Exception as exc:
        findings.append(f"run failed: {type(exc).__name__}: {exc}")
    finally:
        _stop_everything(ctx, cluster, zk, zookeepers, findings, errors)
    ok = ok and not findings
    seconds = time.monotonic() - t0
    return {"ok": ok, "seed": cfg.seed, "replay": cfg.replay(), "seconds": round(seconds, 1), **figures,
            "findings": findings, "timeline": [asdict(e) for e in timeline.entries],
            "text": _text(cfg, ok, seconds, timeline, text, findings, errors)}


def _stop_everything(ctx: Context | None, cluster: LocalCluster | None, zk: ZkClient | None, zookeepers: dict,
                     findings: list[str], errors: dict[int, list[str]]) -> None:
    if ctx is not None:
        ctx.resume_all()
        partition.heal(ctx)
        link.clear(list(ctx.net.nodes.values()))
    if cluster is not None:
        chaos.check_brokers(cluster, findings, errors)
        for b in cluster.brokers.values():
            b.kill()
    if zk is not None:
        zk.close()
    for proc in zookeepers.values():
        proc.stop()


def _text(cfg: NemesisConfig, ok: bool, seconds: float, timeline: Timeline, body: str, findings: list[str],
          errors: dict[int, list[str]]) -> str:
    kinds: dict[str, int] = {}
    for e in timeline.entries:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    lines = [f"chaos --nemesis {','.join(cfg.nemeses)} --workload {cfg.workload} seed={cfg.seed}: "
             f"{'PASS' if ok else 'FAIL'} in {seconds:.0f}s ({cfg.brokers} brokers, RF {cfg.brokers}, "
             f"min.insync.replicas 2, {cfg.partitions} partitions, {cfg.zookeepers} ZooKeeper, each node in its own "
             f"network namespace)",
             f"faults injected: {len(timeline.entries)} ({', '.join(f'{k} x{n}' for k, n in kinds.items())})"]
    lines += ["  " + e.line() for e in timeline.entries]
    lines += [body] if body else []
    lines += [f"broker {bid} logged {len(errs)} ERROR lines, first: {errs[0][:300]}" for bid, errs in sorted(errors.items())]
    lines += [f"FINDING: {f}" for f in findings]
    lines.append(f"replay: {cfg.replay()}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the spec in RUN_DIR; exit 0 when it passed."""
    base = Path((argv or sys.argv[1:])[0])
    spec = json.loads((base / "spec.json").read_text())
    cfg = NemesisConfig(**spec["config"])
    net = PrivateNet.from_json(spec["net"])
    chaos.stop_cleanly_on_term()
    say = lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True)  # noqa: E731
    say(f"nemesis run seed={cfg.seed} in network {net.run_id}; replay with: {cfg.replay()}")
    out = run(cfg, net, base, say)
    (base / "result.json").write_text(json.dumps(out, indent=1, default=str))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
