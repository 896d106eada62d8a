"""What every nemesis shares: the run's context, timeline entries and the JSON-lines timeline file."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from pylog.chaos.nemesis.net import Node, PrivateNet


@dataclass
class Entry:
    """One fault: seconds since the run started, the nemesis:variant, the nodes it hit, details."""

    start: float
    end: float
    kind: str
    targets: list[str]
    detail: dict[str, Any] = field(default_factory=dict)
    heal_s: float = 0.0  # seconds from the fault's end until the cluster was healthy again

    def line(self) -> str:
        """One line for the report."""
        info = " ".join(f"{k}={v}" for k, v in self.detail.items())
        return (f"{self.start:7.1f}s  {self.kind:<24} {','.join(self.targets):<14} for {self.end - self.start:5.1f}s  "
                f"healed after {self.heal_s:4.1f}s  {info}").rstrip()


class Timeline:
    """Appends entries as JSON lines ({start, end, kind, targets, detail}) to a file as they happen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[Entry] = []

    def add(self, entry: Entry) -> None:
        """Record a finished fault."""
        self.entries.append(entry)
        with open(self.path, "a") as f:
            f.write(json.dumps(asdict(entry)) + "\n")


@dataclass
class Context:
    """The run as the nemeses see it."""

    net: PrivateNet
    cluster: Any  # LocalCluster
    driver: Any  # pylog.chaos.faults.FaultDriver: roles (leader, controller), kills and wait_healthy
    zookeepers: dict[str, Any]  # node name -> ZooKeeperProcess
    session_timeout_ms: int
    t0: float
    log: Callable[[str], None] = print
    paused: set[int] = field(default_factory=set)  # pids stopped right now (resumed at cleanup)
    timeline: Timeline | None = None

    def now(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.t0

    def broker_node(self, bid: int) -> Node:
        """The network node of a broker."""
        return self.net.node(f"b{bid}")

    def server_nodes(self) -> list[str]:
        """Names of the brokers' and ZooKeepers' nodes (not the clients')."""
        return [n for n in self.net.names if n != "cl"]

    def leader(self, rng) -> int:
        """A broker leading some partition of the chaos topic (any broker if none)."""
        leaders = sorted({st.leader for st in self.driver.states().values() if st.leader >= 0})
        return rng.choice(leaders or sorted(self.cluster.brokers))

    def controller(self, rng) -> int:
        """The controller (any broker if there is none)."""
        cid = self.driver.controller()
        return cid if cid >= 0 else rng.choice(sorted(self.cluster.brokers))

    def stop(self, pid: int) -> None:
        """SIGSTOP a process, remembered so cleanup resumes it."""
        self.paused.add(pid)
        signal_pid(pid, signal.SIGSTOP)

    def cont(self, pid: int) -> None:
        """SIGCONT a process stopped with stop()."""
        signal_pid(pid, signal.SIGCONT)
        self.paused.discard(pid)

    def resume_all(self) -> None:
        """SIGCONT everything still paused."""
        for pid in list(self.paused):
            self.cont(pid)


def signal_pid(pid: int, sig: int) -> None:
    """Send a signal by pid; a process that is gone is not an error."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def hold(seconds: float) -> None:
    """Keep a fault in place."""
    time.sleep(max(seconds, 0.0))

