"""The fault driver: kill -9 and restart brokers, pause them, and expire their ZooKeeper sessions.

At most one broker is down (killed or paused) at any time. Before the next fault the victim
must have registered under a new session and been told its role for every partition by the
controller (so the controller has processed its failure and return); with settle "isr" (the
default) every partition must also be led with its full replica set in the ISR again. So no
more than min.insync.replicas - 1 = 1 replica of any partition is ever missing, which is the
condition of the no-loss claim. A cluster that does not heal within the timeout is a finding
(a hang), not something to wait out.

A shutdown is SIGTERM (controlled shutdown: leaderships handed over first) and a restart. A
pause (SIGSTOP shorter than the session timeout, like a GC pause) keeps the session but
outlasts replica.lag.time.max.ms, so ISRs shrink and expand under load. The session expiry is
a real one: the broker is paused until ZooKeeper has expired its session (its /brokers/ids
znode is gone), then resumed. It comes back as a zombie that still believes in its old
leaderships and controllership, which is exactly what fencing must handle.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable

from pylog.localcluster import LocalCluster
from pylog.zk import paths
from pylog.zk.client import ZkClient

KINDS = ("kill-leader", "kill-controller", "kill-random", "pause", "shutdown", "expire-session")


class Hang(RuntimeError):
    """The cluster did not get back to health in time."""


@dataclass
class Fault:
    """One injected fault and how long the cluster took to heal afterwards."""

    kind: str
    broker: int
    at: float  # seconds since the run started
    down_s: float = 0.0
    heal_s: float = 0.0
    note: str = ""

    def line(self) -> str:
        """One line for the report."""
        return (f"{self.at:7.1f}s  {self.kind:<16} broker {self.broker}  down {self.down_s:4.1f}s  "
                f"healed after {self.heal_s:4.1f}s  {self.note}").rstrip()


def plan(n_faults: int, rng: random.Random, expiries: int = 1) -> list[str]:
    """The fault kinds of a run: `expiries` session expiries, a controller and a leader kill, the rest random."""
    must = ["expire-session"] * expiries + ["kill-controller", "kill-leader"]
    kinds = must[:n_faults] + [rng.choice(KINDS[:5]) for _ in range(max(n_faults - len(must), 0))]
    rng.shuffle(kinds)
    return kinds


@dataclass
class FaultDriver:
    """Injects faults one at a time into `cluster`, whose topic `topic` has `partitions` partitions."""

    cluster: LocalCluster
    zk: ZkClient
    topic: str
    partitions: int
    rng: random.Random
    session_timeout_ms: int
    heal_timeout: float = 90.0
    settle: str = "isr"  # "isr": next fault once every ISR is full; "rejoin": once the victim is back
    log: Callable[[str], None] = print
    t0: float = field(default_factory=time.monotonic)
    faults: list[Fault] = field(default_factory=list)
    paused: set[int] = field(default_factory=set)

    # -- observing the cluster ------------------------------------------------------------------

    def controller(self) -> int:
        """The broker in /controller, or -1."""
        cid = self.zk.get_controller_id()
        return -1 if cid is None else cid

    def controller_epoch(self) -> int:
        """The current /controller_epoch."""
        got = self.zk.get_controller_epoch()
        return got.epoch if got else 0

    def states(self) -> dict[int, object]:
        """Partition state znodes (leader, ISR, epochs) by partition."""
        got = self.zk.get_partition_states((self.topic, p) for p in range(self.partitions))
        return {tp.partition: st for tp, st in got.items() if st is not None}

    def registered(self) -> set[int]:
        """Broker ids with a registration znode."""
        return {int(c) for c in self.zk.get_children(paths.broker_ids()) if c.isdigit()}

    def unhealthy(self) -> str:
        """Why the cluster is not healed yet ('' when it is)."""
        everyone = set(self.cluster.brokers)
        missing = everyone - self.registered()
        if missing:
            return f"brokers {sorted(missing)} not registered"
        if self.controller() < 0:
            return "no controller"
        states = self.states()
        if len(states) < self.partitions:
            return "partition states missing"
        for p, st in sorted(states.items()):
            if st.leader < 0:
                return f"partition {p} has no leader"
            if set(st.isr) != everyone:
                return f"partition {p} ISR {list(st.isr)}"
        return ""

    def wait_healthy(self, what: str) -> float:
        """Wait until healed; returns the seconds it took. Raises Hang after heal_timeout."""
        start = time.monotonic()
        why = ""
        while time.monotonic() - start < self.heal_timeout:
            try:
                why = self.unhealthy()
            except Exception as exc:  # ZooKeeper hiccup: look again
                why = f"ZooKeeper: {exc}"
            if not why:
                return time.monotonic() - start
            time.sleep(0.1)
        raise Hang(f"cluster not healed {self.heal_timeout:.0f}s after {what}: {why}")

    # -- faults ---------------------------------------------------------------------------------

    def pick(self, kind: str) -> int:
        """The broker a fault hits."""
        if kind == "kill-controller":
            cid = self.controller()
            if cid >= 0:
                return cid
        if kind in ("kill-leader", "expire-session", "shutdown"):
            leaders = sorted({st.leader for st in self.states().values() if st.leader >= 0})
            if kind == "expire-session" and self.rng.random() < 0.5:
                cid = self.controller()  # half the time the zombie is the controller
                if cid >= 0:
                    return cid
            if leaders:
                return self.rng.choice(leaders)
        return self.rng.choice(sorted(self.cluster.brokers))

    def inject(self, kind: str, bid: int | None = None) -> Fault:
        """Run one fault to completion (the broker is back and the cluster healed); `bid` picks the victim
        (e.g. a group's coordinator) instead of `kind`'s rule; kinds other than pause, shutdown and
        expire-session are kill -9s."""
        bid = self.pick(kind) if bid is None else bid
        fault = Fault(kind, bid, time.monotonic() - self.t0)
        led = sorted(p for p, st in self.states().items() if st.leader == bid)
        was_controller = self.controller() == bid
        role = ", ".join(filter(None, ["controller" if was_controller else "", f"leads {led}" if led else ""]))
        self.log(f"fault {len(self.faults) + 1}: {kind} on broker {bid} ({role or 'follower only'})")
        if kind == "expire-session":
            self._expire(bid, fault)
        elif kind == "pause":
            self._pause(bid, fault)
        elif kind == "shutdown":
            self._shutdown(bid, fault)
        else:
            self._kill(bid, fault)
        if self.settle == "isr":
            fault.heal_s = self.wait_healthy(f"{kind} of broker {bid}")
        if role:
            fault.note = f"[{role}]" + (" " + fault.note if fault.note else "")
        self.faults.append(fault)
        self.log(f"  healed: {fault.line()}")
        return fault

    def owner(self, bid: int) -> int | None:
        """The session holding a broker's registration (None when it is not registered)."""
        stat = self.zk.exists(paths.broker_id(bid))
        return stat.ephemeralOwner if stat else None

    def _log_size(self, bid: int) -> int:
        try:
            return self.cluster.brokers[bid].log_path.stat().st_size
        except OSError:
            return 0

    def wait_rejoined(self, bid: int, old_owner: int | None, log_from: int) -> None:
        """Wait until `bid` registered with a new session and was told its role for every partition in it.

        Only then has the controller dealt with the broker's failure and return; judging by the
        ISR alone would count a broker as back while ZooKeeper still shows its old session.
        """
        pattern = re.compile(rf"Broker {bid} (?:is leader of|follows -?\d+ for) {re.escape(self.topic)}-(\d+) ")
        # a state it already had (no epoch bump while it was away) is acknowledged in one summary line
        ignored = re.compile(r"Ignoring LeaderAndIsr from controller .*?: (.*)")
        name = re.compile(rf"\b{re.escape(self.topic)}-(\d+)\b")
        deadline = time.monotonic() + self.heal_timeout
        while True:
            owner = self.owner(bid)
            if owner is not None and owner != old_owner:
                with open(self.cluster.brokers[bid].log_path, "rb") as f:
                    f.seek(log_from)
                    text = f.read().decode(errors="replace")
                # From the start of the session it registered with: the controller may answer the
                # registration before the broker's own "Registered" line is written.
                reg = max(text.rfind(": NEW_SESSION"), text.rfind(": CONNECTED"))
                told: set[int] = set()
                if reg >= 0:
                    told = {int(m.group(1)) for m in pattern.finditer(text, reg)}
                    for m in ignored.finditer(text, reg):
                        told |= {int(n.group(1)) for n in name.finditer(m.group(1))}
                if told >= set(range(self.partitions)):
                    return
            if time.monotonic() > deadline:
                raise Hang(f"broker {bid} did not rejoin within {self.heal_timeout:.0f}s "
                           f"(registration owner {owner}, old {old_owner})")
            time.sleep(0.1)

    def restart(self, bid: int, owner: int | None) -> None:
        """Start a stopped broker again and wait until it has rejoined (see wait_rejoined)."""
        b = self.cluster.brokers[bid]
        log_from = self._log_size(bid)
        b.start()
        b.wait_ready(60)
        self.wait_rejoined(bid, owner, log_from)

    def _kill(self, bid: int, fault: Fault) -> None:
        owner = self.owner(bid)
        t = time.monotonic()
        self.cluster.brokers[bid].kill()
        time.sleep(self.rng.uniform(0.0, 3.0))
        self.restart(bid, owner)
        fault.down_s = time.monotonic() - t

    def _shutdown(self, bid: int, fault: Fault) -> None:
        """SIGTERM: a controlled shutdown, then a restart."""
        b = self.cluster.brokers[bid]
        owner = self.owner(bid)
        t = time.monotonic()
        b.signal(signal.SIGTERM)
        try:
            b.proc.wait(60)
        except subprocess.TimeoutExpired:
            raise Hang(f"broker {bid} did not exit within 60 s of SIGTERM (controlled shutdown)") from None
        self.restart(bid, owner)
        fault.down_s = time.monotonic() - t

    def _pause(self, bid: int, fault: Fault) -> None:
        b = self.cluster.brokers[bid]
        seconds = self.rng.uniform(0.3, 0.7) * self.session_timeout_ms / 1000
        b.signal(signal.SIGSTOP)
        self.paused.add(bid)
        try:
            time.sleep(seconds)
        finally:
            b.signal(signal.SIGCONT)
            self.paused.discard(bid)
        fault.down_s = seconds

    def _expire(self, bid: int, fault: Fault) -> None:
        b = self.cluster.brokers[bid]
        path = paths.broker_id(bid)
        owner = self.owner(bid)
        epoch = self.controller_epoch()
        was_controller = self.controller() == bid
        t = time.monotonic()
        b.signal(signal.SIGSTOP)
        self.paused.add(bid)
        try:
            limit = 3 * self.session_timeout_ms / 1000 + 10
            while (s := self.zk.exists(path)) is not None and s.ephemeralOwner == owner:
                if time.monotonic() - t > limit:
                    raise Hang(f"ZooKeeper did not expire broker {bid}'s session within {limit:.0f}s")
                time.sleep(0.1)
            expired_after = time.monotonic() - t
            time.sleep(self.rng.uniform(0.0, 2.0))  # let the controller act on it while the zombie sleeps
            log_from = self._log_size(bid)
        finally:
            b.signal(signal.SIGCONT)
            self.paused.discard(bid)
        self.wait_rejoined(bid, owner, log_from)
        fault.down_s = time.monotonic() - t
        new_epoch = self.controller_epoch()
        fault.note = (f"session expired after {expired_after:.1f}s, re-registered with session "
                      f"{hex(self.owner(bid) or 0)}; controller epoch {epoch} -> {new_epoch}"
                      + (" (it was the controller)" if was_controller else ""))

    def resume_all(self) -> None:
        """SIGCONT anything still paused (cleanup: a stopped process ignores SIGTERM)."""
        for bid in list(self.paused):
            try:
                self.cluster.brokers[bid].signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
            self.paused.discard(bid)
