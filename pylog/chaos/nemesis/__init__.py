"""Nemeses: the faults of a chaos run in its private network (issue 30), one module per kind.

Every nemesis module has `KINDS` (its variants) and `inject(ctx, kind, rng) -> Entry`, which
starts the fault, holds it, ends it and returns the timeline entry; the caller then waits for the
cluster to heal. The schedule (which nemesis, which variant, the per-fault generator) comes from
the run's seed, so `--seed` replays it; the victims are picked by role (leader, controller, ...)
from the live cluster with that per-fault generator.

    partition  nftables drops inside the nodes' namespaces (pylog/chaos/nemesis/partition.py)
    pause      SIGSTOP/SIGCONT of brokers by role and of ZooKeeper
    kill       the crash-shaped faults of pylog/chaos/faults.py
    link       packet loss, duplication, a slow link (netem's delay/jitter/reorder where the kernel has it)
    clock      libfaketime: a broker's wall clock jumps or runs fast
    disk       a broker's log dir on a small tmpfs that fills up
"""

from __future__ import annotations

from pylog.chaos.nemesis.base import Context, Entry, Timeline  # noqa: F401

NEMESES = ("partition", "pause", "kill", "link", "clock", "disk", "zk")


def module(name: str):
    """The module implementing a nemesis."""
    import importlib

    if name not in NEMESES:
        raise ValueError(f"unknown nemesis {name!r} (known: {', '.join(NEMESES)})")
    return importlib.import_module(f"pylog.chaos.nemesis.{name}")
