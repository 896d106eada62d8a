"""A nemesis run's settings and its fault schedule (both decided by the seed)."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from pylog.chaos.nemesis import module

WORKLOADS = ("acks", "txn", "queue", "groups", "ctp")


@dataclass
class NemesisConfig:
    """What a nemesis run does; the defaults are a bounded run's."""

    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(1 << 31))
    nemeses: list[str] = field(default_factory=lambda: ["partition", "pause", "kill"])
    workload: str = "acks"
    faults: int = 6
    brokers: int = 3
    partitions: int = 4
    rate: float = 300.0
    session_timeout_ms: int = 4000
    heal_timeout: float = 90.0
    duration: float = 0.0
    zookeepers: int = 1
    members: int = 3  # the groups and ctp workloads' member processes

    def replay(self) -> str:
        """The command that repeats this run's fault schedule."""
        return (f"scripts/chaos --nemesis {','.join(self.nemeses)} --workload {self.workload} --faults {self.faults} "
                f"--seed {self.seed} --partitions {self.partitions} --rate {self.rate:g} "
                f"--session-timeout-ms {self.session_timeout_ms}"
                + (f" --duration {self.duration:g}" if self.duration else "")
                + (f" --members {self.members}" if self.workload in ("groups", "ctp") else ""))

    def uses(self, name: str) -> bool:
        """True if nemesis `name` is among the chosen ones (with or without a variant)."""
        return any(entry.partition(":")[0] == name for entry in self.nemeses)

    def to_json(self) -> dict:
        """For the process that runs inside the private network."""
        return asdict(self)

    def node_names(self) -> list[str]:
        """The run's network nodes: ZooKeeper servers, brokers, then the clients' node."""
        return [f"zk{i + 1}" for i in range(self.zookeepers)] + [f"b{i}" for i in range(self.brokers)] + ["cl"]


def variants(entry: str) -> tuple[str, tuple[str, ...]]:
    """A --nemesis entry, `name` or `name:variant` (e.g. partition:leader-zk), as (name, its variants)."""
    name, _, variant = entry.partition(":")
    kinds = module(name).KINDS
    if variant and variant not in kinds:
        raise ValueError(f"unknown {name} variant {variant!r} (known: {', '.join(kinds)})")
    return name, (variant,) if variant else tuple(kinds)


def schedule(cfg: NemesisConfig) -> list[tuple[str, str, int]]:
    """(nemesis, variant, per-fault seed) for every fault: each chosen nemesis once first, then at random."""
    rng = random.Random(cfg.seed)
    first = list(cfg.nemeses)
    rng.shuffle(first)
    entries = (first + [rng.choice(cfg.nemeses) for _ in range(max(cfg.faults - len(first), 0))])[:cfg.faults]
    plan = []
    for entry in entries:
        name, kinds = variants(entry)
        plan.append((name, rng.choice(kinds), rng.randrange(1 << 31)))
    return plan
