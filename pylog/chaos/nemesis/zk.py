"""ZooKeeper faults: one server of a 3-node ensemble partitioned, and a restart of the whole ensemble.

The ensemble is Debian's ZooKeeper (QuorumPeerMain), one server per node of the run's network
(`--zookeepers 3`); with a single server only the full restart applies.

    partition-one  one ZooKeeper server cut from every other node for 0.5-2 session timeouts
    restart-all    every ZooKeeper server SIGTERMed, down for a random while, started again
"""

from __future__ import annotations

import random
from pathlib import Path

from pylog.chaos.nemesis import partition
from pylog.chaos.nemesis.base import Context, Entry, hold
from pylog.chaos.nemesis.net import PrivateNet
from pylog.zk.server import QUORUM_MAIN_CLASS, ZooKeeperProcess

KINDS = ("partition-one", "restart-all")


def start_ensemble(net: PrivateNet, names: list[str], base: Path, port: int) -> dict[str, ZooKeeperProcess]:
    """Start a ZooKeeper server in each named node (a quorum when several) and wait until all serve."""
    servers = {f"server.{i + 1}": f"{net.node(n).address}:2888:3888" for i, n in enumerate(names)}
    procs: dict[str, ZooKeeperProcess] = {}
    try:
        for i, name in enumerate(names):
            node = net.node(name)
            config = {"maxSessionTimeout": "60000"}
            if len(names) > 1:
                config.update({"initLimit": "10", "syncLimit": "5", **servers})
            proc = ZooKeeperProcess(str(base / "zookeeper" / name), port, host=node.address, tick_time_ms=500,
                                    config=config, exec_prefix=node.prefix, start_timeout=90)
            if len(names) > 1:
                proc.main_class = QUORUM_MAIN_CLASS
                Path(proc.data_dir).mkdir(parents=True, exist_ok=True)
                (Path(proc.data_dir) / "myid").write_text(f"{i + 1}\n")
            procs[name] = proc
            proc.launch()
        for proc in procs.values():
            proc.wait_until_serving(proc.start_timeout)
    except BaseException:
        for proc in procs.values():
            proc.stop()
        raise
    return procs


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """Partition one server or restart them all."""
    names = sorted(ctx.zookeepers)
    seconds = rng.uniform(0.5, 2.0) * ctx.session_timeout_ms / 1000
    start = ctx.now()
    if kind == "partition-one" and len(names) > 1:
        victim = rng.choice(names)
        ctx.log(f"zk partition-one: {victim} cut from everyone for {seconds:.1f}s")
        try:
            partition.apply(ctx, partition.complete([victim], [n for n in ctx.net.names if n != victim]))
            hold(seconds)
        finally:
            partition.heal(ctx)
        return Entry(start, ctx.now(), "zk:partition-one", [victim], {})
    ctx.log(f"zk restart-all: {', '.join(names)} down for {seconds:.1f}s")
    for name in names:
        ctx.zookeepers[name].stop()
    hold(seconds)
    for proc in ctx.zookeepers.values():
        proc.launch()
    for proc in ctx.zookeepers.values():
        proc.wait_until_serving(proc.start_timeout)
    return Entry(start, ctx.now(), "zk:restart-all", names, {"down_s": round(seconds, 1)})
