"""Jepsen's queue workload against a Kafka-compatible cluster: client processes doing random operations.

A process is a thread with one producer (`plain`, `idempotent`, `transactional` or `kafka-python`) and one consumer
(`subscribe` in a group or `assign`), clients.py. It starts with an assign or subscribe of a random set of keys
and then loops over random operations as Jepsen's generator does: a `send` of one new value to a random key
(`txn` of 1-4 sends and polls for transactional processes), a `poll`, now and then (1/64) a new
assign/subscribe, and rarely (`crash_p`) a `crash`, which replaces the process as below. Every invocation and completion goes into the history (history.py).

Nothing waits on the cluster for longer than `op_timeout`: a watchdog completes an operation that overran it as
`info`, abandons its thread (left to finish on its own, its completion dropped) and starts a replacement process
numbered process + `processes`, as Jepsen's client crash does. Any other `info` (and a transaction that did not
commit) replaces the process too, so a process's operations are a clean sequence for the order checks.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pylog.chaos.jepsen.clients import Clients
from pylog.chaos.jepsen.history import ASSIGN, FAIL, INFO, INVOKE, OK, POLL, SEND, SUBSCRIBE, TXN, HistoryWriter

PRODUCER_KINDS = ("plain", "idempotent", "transactional", "kafka-python")
CONSUMER_KINDS = ("subscribe", "assign")
SUB_P = 1 / 64  # Jepsen's chance of a new assign/subscribe
CRASH = "crash"


@dataclass
class QueueConfig:
    """What a queue run does."""

    bootstrap: str
    topics: list[str]
    partitions: int  # per topic; key k is (topics[k // partitions], k % partitions)
    history_path: str | Path
    seed: int = 0
    duration: float | None = 30.0  # seconds of random operations (None: until stop() or the stop event)
    max_ops: int | None = None  # or stop after this many operations
    processes: int = 8  # concurrent client processes: producer kinds dealt round-robin, consumer kinds so that
    # every producer kind meets every consumer kind once the processes are twice the producer kinds
    producers: tuple[str, ...] = PRODUCER_KINDS
    consumers: tuple[str, ...] = CONSUMER_KINDS
    rate: float = 100.0  # operations per second over all processes
    op_timeout: float = 10.0  # an operation not done by then completes info
    drain_timeout: float = 60.0  # the final phase's limit
    group_id: str = "pylog-jepsen-queue"
    crash_p: float = 1 / 300  # chance per operation of a Jepsen `crash`: the process's clients are replaced
    # (its group member leaves, its transactional.id is taken over), which brings rebalances and fencing

    def keys(self) -> list[tuple[str, int]]:
        """(topic, partition) of every key, by key."""
        return [(t, p) for t in self.topics for p in range(self.partitions)]


@dataclass
class WorkloadSummary:
    """What the run did (the history has every detail)."""

    history_path: Path
    ops: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    drained: bool = False  # the final phase read every acknowledged offset
    drain_behind: dict[int, tuple[int, int]] = field(default_factory=dict)  # key -> (read up to, acked up to)
    errors: dict[str, int] = field(default_factory=dict)
    replaced: int = 0  # processes replaced after an info (crashes)
    stop_s: dict[str, float] = field(default_factory=dict)  # seconds the end took: processes, fencing, drain


@dataclass
class _Process:
    pid: int
    slot: int
    clients: Clients
    rng: random.Random
    abandoned: bool = False
    thread: threading.Thread | None = None
    current: dict[str, Any] | None = None  # the invocation in flight
    deadline: float = 0.0


class QueueWorkload:
    """The workload's processes; start() returns at once, stop() ends them, drains and returns the summary."""

    def __init__(self, cfg: QueueConfig) -> None:
        self.cfg = cfg
        self.keys = cfg.keys()
        self.history = HistoryWriter(cfg.history_path, self.keys, seed=cfg.seed, workload="queue",
                                     bootstrap=cfg.bootstrap, processes=cfg.processes)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._values = itertools.count(1)
        self._generation = [0] * cfg.processes
        self._procs: dict[int, _Process] = {}
        self._acked: dict[int, int] = {}  # key -> highest acknowledged offset
        self.summary = WorkloadSummary(Path(cfg.history_path))
        self._types: Counter = Counter()
        self._errors: Counter = Counter()
        self._watchdog = threading.Thread(target=self._watch, name="jepsen-watchdog", daemon=True)

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> "QueueWorkload":
        """Start the client processes in the background."""
        for slot in range(self.cfg.processes):
            self._spawn(slot)
        self._watchdog.start()
        return self

    def wait(self, stop: threading.Event | None = None) -> None:
        """Block until the duration or op count is reached, or `stop` is set."""
        deadline = None if self.cfg.duration is None else time.monotonic() + self.cfg.duration
        while not self._stop.is_set() and not (stop is not None and stop.is_set()):
            if deadline is not None and time.monotonic() >= deadline:
                break
            time.sleep(0.1)

    def stop(self, drain: bool = True) -> WorkloadSummary:
        """Stop the processes (each finishes its operation, bounded by op_timeout) and, with drain, read every
        key from the beginning until every acknowledged offset was seen; close the history."""
        self._stop.set()
        t = time.monotonic()
        if self._watchdog.is_alive():
            self._watchdog.join(2)  # it may be completing an overrun operation: let it finish writing
        end = t + self.cfg.op_timeout + 4
        for proc in list(self._procs.values()):
            if proc.thread is not None:
                proc.thread.join(max(0.0, end - time.monotonic()))
        with self._lock:
            live = list(self._procs.values())
            self._procs.clear()
        for proc in live:
            self._expire(proc, "stopped: the run ended while it was in flight")
            if proc.thread is not None and not proc.thread.is_alive():
                proc.clients.close()
        times = self.summary.stop_s
        times["processes"] = round(time.monotonic() - t, 2)
        if drain:
            self._fence_transactions()
            times["fencing"] = round(time.monotonic() - t - times["processes"], 2)
            self._drain()
            times["drain"] = round(time.monotonic() - t - times["processes"] - times["fencing"], 2)
        self.history.close()
        s = self.summary
        s.ops, s.by_type, s.errors = sum(self._types.values()), dict(self._types), dict(self._errors)
        return s

    # -- processes ---------------------------------------------------------------------------------

    def _spawn(self, slot: int) -> None:
        gen = self._generation[slot]
        self._generation[slot] += 1
        cfg = self.cfg
        kind = cfg.producers[slot % len(cfg.producers)]
        clients = Clients(cfg.bootstrap, self.keys, kind, cfg.group_id, slot, cfg.seed, cfg.op_timeout)
        proc = _Process(slot + gen * cfg.processes, slot, clients, random.Random(cfg.seed * 1000 + slot * 97 + gen))
        proc.thread = threading.Thread(target=self._loop, args=(proc,), name=f"jepsen-process-{proc.pid}",
                                       daemon=True)
        with self._lock:
            self._procs[slot] = proc
        proc.thread.start()

    def _loop(self, proc: _Process) -> None:
        cfg = self.cfg
        via = cfg.consumers[(proc.slot + proc.slot // len(cfg.producers)) % len(cfg.consumers)]
        first = True
        while not self._stop.is_set() and not proc.abandoned:
            if not first and proc.rng.random() < cfg.crash_p:
                ok = self._op(proc, CRASH, None)
            elif first or proc.rng.random() < SUB_P:
                keys = sorted(proc.rng.sample(range(len(self.keys)), proc.rng.randint(1, len(self.keys))))
                ok = self._op(proc, via, keys)
                first = False
            else:
                ok = self._op(proc, *self._choose(proc))
            if not ok:
                self._crash(proc)
                proc.clients.close()
                return
            if self._reached_max():
                self._stop.set()
            time.sleep(proc.rng.expovariate(cfg.rate / cfg.processes) if cfg.rate > 0 else 0)

    def _choose(self, proc: _Process) -> tuple[str, Any]:
        r = proc.rng.random()
        if r < 0.5:
            return POLL, [[POLL]]
        n = proc.rng.randint(1, 4) if proc.clients.kind == "transactional" else 1
        mops = []
        for i in range(n):
            if i > 0 and proc.rng.random() < 0.5:
                mops.append([POLL])
            else:
                mops.append([SEND, proc.rng.randrange(len(self.keys)), next(self._values)])
        return (TXN if proc.clients.kind == "transactional" else SEND), mops

    def _crash(self, proc: _Process) -> None:
        """Replace the process (once); its own thread closes its clients when its call returns: closing a
        consumer under another thread's consume() is not safe."""
        with self._lock:
            proc.abandoned = True
            replace = self._procs.get(proc.slot) is proc and not self._stop.is_set()
            if replace:
                self.summary.replaced += 1
        if replace:
            self._spawn(proc.slot)

    def _reached_max(self) -> bool:
        return self.cfg.max_ops is not None and sum(self._types.values()) >= self.cfg.max_ops

    # -- one operation -----------------------------------------------------------------------------

    def _op(self, proc: _Process, f: str, value: Any) -> bool:
        """Invoke, run and complete one operation; False when the process must be replaced."""
        inv: dict[str, Any] = {"type": INVOKE, "process": proc.pid, "f": f, "value": value,
                               "client": proc.clients.kind}
        if f in (ASSIGN, SUBSCRIBE):
            inv["client"] = f"{proc.clients.kind}/{f}"
        with self._lock:
            if proc.abandoned:
                return False
            proc.clients.rebalance_log = []
            proc.current = self.history.record(inv)
            proc.deadline = time.monotonic() + self.cfg.op_timeout + 2 + (2 if f == TXN else 0)
        try:
            type_, out, error = self._run(proc, f, value)
        except Exception as exc:  # a client error we did not classify: the outcome is unknown
            type_, out, error = INFO, None, f"{type(exc).__name__}: {exc}"
        return self._complete(proc, type_, out, error)

    def _run(self, proc: _Process, f: str, value: Any) -> tuple[str, Any, str]:
        c = proc.clients
        if f == CRASH:
            return INFO, None, "crash: the process's clients are replaced (Jepsen's :crash)"
        if f == ASSIGN:
            return c.assign(value)
        if f == SUBSCRIBE:
            return c.subscribe(value, lambda entry: c.rebalance_log.append(entry))
        if f == POLL:
            return c.poll(proc.rng.uniform(0.02, 0.2))
        if f == SEND:
            return c.send(value[0][1], value[0][2])
        return c.txn(value, proc.rng.uniform(0.02, 0.1))

    def _complete(self, proc: _Process, type_: str, out: Any, error: str) -> bool:
        with self._lock:
            inv = proc.current
            if proc.abandoned or inv is None:
                return False  # the watchdog completed it already
            done: dict[str, Any] = {"type": type_, "process": proc.pid, "f": inv["f"], "value": out,
                                    "client": inv["client"]}
            if error:
                done["error"] = error
            if proc.clients.rebalance_log:
                done["rebalance_log"] = list(proc.clients.rebalance_log)
            self.history.record(done)
            proc.current = None
            self._types[type_] += 1
            if error:
                self._errors[error.split(":")[0]] += 1
            if type_ == OK and inv["f"] in (SEND, TXN):
                for mop in out:
                    if mop[0] == SEND and mop[2][0] is not None:
                        self._acked[mop[1]] = max(self._acked.get(mop[1], -1), mop[2][0])
        return type_ == OK or (type_ == FAIL and inv["f"] != TXN)

    def _expire(self, proc: _Process, why: str) -> None:
        """Complete the process's operation as info (the watchdog's or the end's verdict)."""
        with self._lock:
            if proc.current is None:
                return
            self.history.record({"type": INFO, "process": proc.pid, "f": proc.current["f"], "value": None,
                                 "client": proc.current["client"], "error": why})
            proc.current = None
            proc.abandoned = True
            self._types[INFO] += 1
            self._errors[why.split(":")[0]] += 1

    def _watch(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            for proc in list(self._procs.values()):
                if proc.current is not None and now > proc.deadline:
                    self._expire(proc, "timeout: the operation overran op_timeout")
                    self._crash(proc)
            time.sleep(0.2)

    # -- the final phase ---------------------------------------------------------------------------

    def _fence_transactions(self) -> None:
        """Abort what transactional processes left open (init_transactions with their ids), so the last stable
        offset is not held back until transaction.timeout.ms while the drain reads read_committed."""
        cfg = self.cfg
        for slot in range(cfg.processes):
            if cfg.producers[slot % len(cfg.producers)] != "transactional":
                continue
            c = Clients(cfg.bootstrap, self.keys, "transactional", cfg.group_id, slot, cfg.seed, cfg.op_timeout)
            try:
                c.producer()
            except Exception as exc:  # the drain then shows what stayed open
                self._errors[f"fencing {c.txn_id}: {type(exc).__name__}"] += 1
            finally:
                c.close()

    def _drain(self) -> None:
        """Jepsen's final phase: a fresh process assigns every key from the beginning and polls until every
        acknowledged offset was read, or drain_timeout."""
        cfg = self.cfg
        pid = max(self._generation) * cfg.processes  # a process number no one used
        clients = Clients(cfg.bootstrap, self.keys, "drain", f"{cfg.group_id}-drain", -1, cfg.seed, cfg.op_timeout)
        proc = _Process(pid, -1, clients, random.Random(cfg.seed))
        read_up_to: dict[int, int] = {}
        deadline = time.monotonic() + cfg.drain_timeout
        try:
            if not self._drain_op(proc, ASSIGN, list(range(len(self.keys))), seek_to_beginning=True):
                return
            while time.monotonic() < deadline:
                behind = {k: (read_up_to.get(k, -1), o) for k, o in self._acked.items() if read_up_to.get(k, -1) < o}
                self.summary.drain_behind = behind
                if not behind:
                    self.summary.drained = True
                    return
                out = self._drain_op(proc, POLL, [[POLL]])
                for k, recs in (out or [[POLL, {}]])[0][1].items():
                    read_up_to[k] = max([read_up_to.get(k, -1)] + [o for o, _ in recs])
        finally:
            clients.close()

    def _drain_op(self, proc: _Process, f: str, value: Any, seek_to_beginning: bool = False) -> Any:
        inv = {"type": INVOKE, "process": proc.pid, "f": f, "value": value, "client": "drain", "final": True}
        if seek_to_beginning:
            inv["seek_to_beginning"] = True
        with self._lock:
            proc.current = self.history.record(inv)
        try:
            if f == ASSIGN:
                type_, out, error = proc.clients.assign(value, seek_to_beginning=True)
            else:
                type_, out, error = proc.clients.poll(1.0)
        except Exception as exc:
            type_, out, error = INFO, None, f"{type(exc).__name__}: {exc}"
        self._complete(proc, type_, out, error)
        return out if type_ == OK else None


def run_queue(cfg: QueueConfig, stop: threading.Event | None = None, drain: bool = True) -> WorkloadSummary:
    """Run the workload until its duration / op count or until `stop` is set, then drain; blocking."""
    w = QueueWorkload(cfg).start()
    try:
        w.wait(stop)
    finally:
        summary = w.stop(drain=drain)
    return summary

