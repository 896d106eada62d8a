"""`scripts/chaos --transactions`: a transactional producer under faults, and the exactly-once checks.

The producer (confluent-kafka at its defaults plus a transactional.id) writes numbered records in
transactions of `per_txn` records spread over every partition, one transaction after another. Each
transaction ends as committed (commit_transaction returned), aborted (abort_transaction returned) or
unknown (the producer failed fatally, e.g. fenced after a coordinator change, or gave up): then a new
producer with the same transactional.id takes over, which aborts whatever was left open.

A read_committed consumer then reads every partition up to its last stable offset. The named checks
are the anomalies Jepsen reported against Kafka-compatible systems: a committed record missing (lost
write), an aborted record visible (aborted read), a committed record twice (duplicate), a partition
whose records go backwards (reordering), an unknown transaction partly visible (not atomic), and a
transaction still open at the end (the LSO stuck below the high watermark: a hanging transaction).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import confluent_kafka as ck

from pylog.chaos.verify import high_watermarks

TRANSACTIONAL_ID = "pylog-chaos-txn"


@dataclass
class TxnOutcomes:
    """What the producer saw: the record numbers of each transaction, by how it ended."""

    committed: list[list[int]] = field(default_factory=list)
    aborted: list[list[int]] = field(default_factory=list)
    unknown: list[list[int]] = field(default_factory=list)
    producers: int = 0  # producers created (1 + the takeovers after fatal errors)
    errors: Counter = field(default_factory=Counter)


class TxnWorkload:
    """A thread running transactions back to back until stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, per_txn: int = 20) -> None:
        self.bootstrap, self.topic, self.partitions, self.per_txn = bootstrap, topic, partitions, per_txn
        self.outcomes = TxnOutcomes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-txn-producer", daemon=True)
        self.failure: BaseException | None = None

    def start(self) -> "TxnWorkload":
        """Start producing."""
        self._thread.start()
        return self

    def _producer(self) -> Any:
        self.outcomes.producers += 1
        p = ck.Producer({"bootstrap.servers": self.bootstrap, "transactional.id": TRANSACTIONAL_ID, "log_level": 3})
        p.init_transactions(120)
        return p

    def _run(self) -> None:
        try:
            p = self._producer()
            seq = 0
            while not self._stop.is_set():
                ids = list(range(seq, seq + self.per_txn))
                seq += self.per_txn
                ended, p = self._one(p, ids)
                getattr(self.outcomes, ended).append(ids)
        except BaseException as exc:  # reported by stop(): the run records it as a finding
            self.failure = exc

    def _one(self, p: Any, ids: list[int]) -> tuple[str, Any]:
        """Run one transaction; how it ended, and the producer to go on with."""
        try:
            p.begin_transaction()
            for s in ids:
                p.produce(self.topic, str(s).encode(), partition=s % self.partitions)
            for _ in range(10):
                try:
                    p.commit_transaction(60)
                    return "committed", p
                except ck.KafkaException as e:
                    if not e.args[0].retriable() or e.args[0].txn_requires_abort():
                        raise
                    self.outcomes.errors[e.args[0].name()] += 1
            return "unknown", self._takeover(p)
        except ck.KafkaException as e:
            err = e.args[0]
            self.outcomes.errors[err.name()] += 1
            if err.txn_requires_abort():
                try:
                    p.abort_transaction(60)
                    return "aborted", p
                except ck.KafkaException as e2:
                    self.outcomes.errors[e2.args[0].name()] += 1
            return "unknown", self._takeover(p)

    def _takeover(self, old: Any) -> Any:
        """A new producer of the same transactional.id: fences the old one and aborts its open transaction."""
        old.purge()
        while True:
            try:
                return self._producer()
            except ck.KafkaException as e:
                self.outcomes.errors[e.args[0].name()] += 1
                if self._stop.is_set():
                    raise

    def snapshot(self) -> str:
        """Progress for the run's log."""
        o = self.outcomes
        return f"{len(o.committed)} committed, {len(o.aborted)} aborted, {len(o.unknown)} unknown transactions"

    def stop(self, timeout: float = 300) -> TxnOutcomes:
        """Finish the transaction in progress and stop."""
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError("the transactional producer did not finish its last transaction")
        if self.failure is not None:
            raise RuntimeError(f"the transactional producer failed: {self.failure!r}") from self.failure
        return self.outcomes


def read_committed(bootstrap: str, topic: str, partitions: int, timeout: float = 120,
                   decode: Callable[[bytes], Any] = int) -> dict[int, list[Any]]:
    """Every record value a read_committed consumer (librdkafka's default) gets, decoded, per partition in
    offset order, once each partition's LSO has reached its high watermark (no transaction open)."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "pylog-chaos-txn-verify", "log_level": 3,
                     "enable.auto.commit": False})
    raw = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "pylog-chaos-txn-verify", "log_level": 3,
                       "isolation.level": "read_uncommitted"})
    try:
        tps = [ck.TopicPartition(topic, p) for p in range(partitions)]
        deadline = time.monotonic() + timeout
        while True:
            lso, hw = high_watermarks(c, topic, partitions), high_watermarks(raw, topic, partitions)
            if lso == hw:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"hanging transaction: (LSO, high watermark) per partition "
                                   f"{ {p: (lso[p], hw[p]) for p in lso if lso[p] != hw[p]} }")
            time.sleep(1.0)
        c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
        out: dict[int, list[Any]] = {p: [] for p in range(partitions)}
        while True:
            for m in c.consume(10000, 1.0):
                if m.error() is None:
                    out[m.partition()].append(decode(m.value()))
            positions = {tp.partition: tp.offset for tp in c.position(tps)}
            if all(positions[p] >= lso[p] for p in lso):  # control records count: position, not the last record
                return out
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading back timed out at {positions}, LSOs {lso}")
    finally:
        c.close()
        raw.close()


def check(outcomes: TxnOutcomes, seen: dict[int, list[int]]) -> list[str]:
    """The named anomalies found (empty when the run was exactly-once)."""
    counts = Counter(s for values in seen.values() for s in values)
    findings = []
    lost = [s for ids in outcomes.committed for s in ids if counts[s] == 0]
    if lost:
        findings.append(f"lost writes: {len(lost)} committed records not visible, e.g. {lost[:10]}")
    aborted = [s for ids in outcomes.aborted for s in ids if counts[s]]
    if aborted:
        findings.append(f"aborted reads: {len(aborted)} aborted records visible, e.g. {aborted[:10]}")
    dups = sorted(s for s, n in counts.items() if n > 1)
    if dups:
        findings.append(f"duplicates: {len(dups)} records visible more than once, e.g. {dups[:10]}")
    partial = [ids[0] for ids in outcomes.unknown if 0 < sum(counts[s] > 0 for s in ids) < len(ids)]
    if partial:
        findings.append(f"not atomic: {len(partial)} transactions partly visible, first records {partial[:10]}")
    for p, values in sorted(seen.items()):
        back = [(a, b) for a, b in zip(values, values[1:]) if b < a]  # equal ones are duplicates
        if back:
            findings.append(f"reordering: partition {p} goes backwards at {back[:5]}")
    return findings
