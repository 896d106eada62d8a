"""`scripts/chaos --nemesis LIST [--workload acks|txn|queue|groups|ctp]`: runs in a private network, one per seed."""

from __future__ import annotations

import argparse
import shutil
import tempfile

from pylog.chaos.nemesis import NEMESES
from pylog.chaos.nemesis.config import WORKLOADS, NemesisConfig, variants
from pylog.chaos.nemesis.harness import HarnessError, run_isolated


def config(ap: argparse.ArgumentParser, args: argparse.Namespace, seed: int) -> NemesisConfig:
    """The run's settings from the command line (one clear error line for bad input)."""
    names = [n.strip() for n in args.nemesis.split(",") if n.strip()]
    unknown = [n for n in names if n.partition(":")[0] not in NEMESES]
    if not names or unknown:
        ap.error(f"--nemesis: unknown {', '.join(unknown) or '(empty)'}; choose from {', '.join(NEMESES)} "
                 f"(or name:variant, e.g. partition:leader-zk)")
    for name in names:
        try:
            variants(name)
        except ValueError as exc:
            ap.error(f"--nemesis: {exc}")
    workload = args.workload or "acks"
    if workload not in WORKLOADS:
        ap.error(f"--workload {workload} does not run under --nemesis yet; choose from {', '.join(WORKLOADS)}")
    if args.faults < 1 or args.partitions < 1 or args.rate <= 0 or args.runs < 1 or args.zookeepers < 1 \
            or args.members < 1:
        ap.error("--faults, --partitions, --runs, --zookeepers and --members must be >= 1 and --rate > 0")
    if any(n.partition(":")[0] == "zk" for n in names) and args.zookeepers == 1:
        args.zookeepers = 3  # one ZooKeeper partitioned needs an ensemble
    return NemesisConfig(seed=seed, nemeses=names, workload=workload, faults=args.faults, partitions=args.partitions,
                         rate=args.rate, session_timeout_ms=args.session_timeout_ms, duration=args.duration,
                         zookeepers=args.zookeepers, members=args.members)


def main_nemesis(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run --runs seeds; print each report; keep a run's folder when it failed or with --keep."""
    first = args.seed if args.seed is not None else NemesisConfig().seed
    config(ap, args, first)  # validate before building anything
    failed = 0
    for i in range(args.runs):
        cfg = config(ap, args, first + i)
        run_dir = tempfile.mkdtemp(prefix=f"pylog-nemesis-{cfg.seed}-")
        try:
            result = run_isolated(cfg, run_dir)
        except HarnessError as exc:
            ap.exit(2, f"scripts/chaos: {exc}\n")
        print(result["text"], flush=True)
        if result["ok"] and not args.keep:
            shutil.rmtree(run_dir, ignore_errors=True)
        else:
            print(f"run directory (history, timeline.jsonl, result.json, broker logs): {run_dir}", flush=True)
        failed += not result["ok"]
    if args.runs > 1:
        print(f"{args.runs - failed}/{args.runs} runs passed")
    return 1 if failed else 0

