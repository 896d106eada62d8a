"""The chaos clients: an acks=all producer of numbered records and a consumer reading along.

Record `seq` goes to partition `seq % partitions` with the value `str(seq)`. A delivery report
without error is an acknowledgement: the broker promised the record is at that offset on every
in-sync replica. Reports arrive in order per partition, so the list per partition is the
acknowledgement order the verifier checks. The reader consumes every partition while the faults
happen; whatever it was served must still be in the final log at the same offset, or a consumer
saw data above the high watermark that was later truncated.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import confluent_kafka as ck


@dataclass
class Acked:
    """What the producer saw: per partition [(seq, offset)] in acknowledgement order, and failures."""

    by_partition: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    errors: Counter = field(default_factory=Counter)
    sent: int = 0

    @property
    def count(self) -> int:
        """Acknowledged records."""
        return sum(len(v) for v in self.by_partition.values())


# A long message timeout: a record should be delivered through any failover we inject, and
# only given up on if the cluster really stays unavailable.
PRODUCER_CONFIG: dict[str, Any] = {
    "acks": "all",
    "enable.idempotence": False,  # duplicates from retried batches are expected and counted
    "linger.ms": 5,
    "retries": 1_000_000,
    "retry.backoff.ms": 100,
    "message.timeout.ms": 120_000,
    "request.timeout.ms": 10_000,
    "socket.timeout.ms": 10_000,
    "topic.metadata.refresh.interval.ms": 2_000,
    "log_level": 3,
}


class Workload:
    """A producer thread writing `rate` numbered records per second until stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float,
                 extra: dict[str, Any] | None = None) -> None:
        self.topic = topic
        self.partitions = partitions
        self.rate = rate
        self.acked = Acked(by_partition={p: [] for p in range(partitions)})
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conf = {"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, **(extra or {})}
        self._thread: threading.Thread | None = None
        self.unflushed = 0
        self.failure: BaseException | None = None

    def _on_delivery(self, err: Any, msg: Any) -> None:
        with self._lock:
            if err is not None:
                self.acked.errors[err.name()] += 1
            else:
                self.acked.by_partition[msg.partition()].append((int(msg.value()), msg.offset()))

    def start(self) -> "Workload":
        """Start producing in the background."""
        self._thread = threading.Thread(target=self._run, name="chaos-producer", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            p = ck.Producer(self._conf)
            seq = 0
            t0 = time.monotonic()
            while not self._stop.is_set():
                due = int((time.monotonic() - t0) * self.rate)
                while seq < due and not self._stop.is_set():
                    try:
                        p.produce(self.topic, value=str(seq).encode(), partition=seq % self.partitions,
                                  on_delivery=self._on_delivery)
                    except BufferError:
                        break  # the queue is full (cluster unavailable): try again after poll
                    seq += 1
                    self.acked.sent = seq
                p.poll(0.01)
            # Every record ends acknowledged or failed: wait out message.timeout.ms at most.
            self.unflushed = p.flush(self._conf["message.timeout.ms"] / 1000 + 30)
        except BaseException as exc:  # reported by stop(); the run fails with it
            self.failure = exc

    def stop(self, timeout: float = 180) -> Acked:
        """Stop sending, wait for every outstanding delivery report, and return the tally."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise RuntimeError(f"the producer did not finish flushing within {timeout:.0f}s")
        if self.failure is not None:
            raise RuntimeError(f"the producer failed: {self.failure!r}") from self.failure
        return self.acked

    def snapshot(self) -> int:
        """Acknowledged so far (for progress lines)."""
        with self._lock:
            return self.acked.count


class Reader:
    """A consumer thread following every partition, remembering offset -> seq as served."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.topic = topic
        self.partitions = partitions
        self.seen: dict[int, dict[int, int]] = {p: {} for p in range(partitions)}
        self.conflicts: list[str] = []  # the same offset served with two different records
        self._stop = threading.Event()
        self._conf = {"bootstrap.servers": bootstrap, "group.id": "pylog-chaos-reader", "enable.auto.commit": False,
                      "enable.partition.eof": False, "topic.metadata.refresh.interval.ms": 2_000, "log_level": 3}
        self._thread = threading.Thread(target=self._run, name="chaos-reader", daemon=True)
        self.failure: BaseException | None = None

    def start(self) -> "Reader":
        """Start consuming in the background."""
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            c = ck.Consumer(self._conf)
            try:
                c.assign([ck.TopicPartition(self.topic, p, ck.OFFSET_BEGINNING) for p in range(self.partitions)])
                while not self._stop.is_set():
                    for m in c.consume(1000, 0.2):
                        if m.error() is not None:
                            continue  # transient (leader moved, broker down): the client retries
                        seq = int(m.value())
                        prev = self.seen[m.partition()].setdefault(m.offset(), seq)
                        if prev != seq:
                            self.conflicts.append(f"partition {m.partition()} offset {m.offset()}: "
                                                  f"served {prev}, later {seq}")
            finally:
                c.close()
        except BaseException as exc:  # reported by stop()
            self.failure = exc

    def stop(self, timeout: float = 60) -> dict[int, dict[int, int]]:
        """Stop and return what was served: {partition: {offset: seq}}."""
        self._stop.set()
        self._thread.join(timeout)
        if self.failure is not None:
            raise RuntimeError(f"the reader failed: {self.failure!r}") from self.failure
        return self.seen
