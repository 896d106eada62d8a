"""Jepsen's queue workload against a Kafka-compatible cluster: client processes doing random operations.

A process is a thread with one producer (confluent-kafka at its defaults: `plain`, `idempotent` with
enable.idempotence, or `transactional` with a transactional.id) and one consumer (`subscribe` in a group or
`assign`). It loops over random operations, as Jepsen's generator does: a `send` of one value to a random key,
a `poll`, for transactional processes a `txn` of up to 4 sends and polls (committed with the consumer's offsets
when it subscribes), and now and then (1/64) a new `assign`/`subscribe` of a random subset of keys. Every
invocation and completion goes into the history (history.py). An operation that times out or meets a dead
broker completes `info` and its process is replaced by a new one (process + `processes`), with new clients,
as Jepsen's client crash does; nothing waits longer than `op_timeout`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

PRODUCER_KINDS = ("plain", "idempotent", "transactional")
CONSUMER_KINDS = ("subscribe", "assign")


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
    processes: int = 6  # concurrent client processes, kinds dealt round-robin
    producers: tuple[str, ...] = PRODUCER_KINDS
    consumers: tuple[str, ...] = CONSUMER_KINDS
    rate: float = 100.0  # operations per second over all processes
    op_timeout: float = 10.0  # an operation not done by then completes info
    drain_timeout: float = 60.0  # the final phase's limit
    group_id: str = "pylog-jepsen-queue"


@dataclass
class WorkloadSummary:
    """What the run did (the history has every detail)."""

    history_path: Path
    ops: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    drained: bool = False  # the final phase read every acknowledged offset
    drain_behind: dict[int, tuple[int, int]] = field(default_factory=dict)  # key -> (read up to, acked up to)
    errors: dict[str, int] = field(default_factory=dict)


class QueueWorkload:
    """The workload's processes; start() returns at once, stop() ends them, drains and returns the summary."""

    def __init__(self, cfg: QueueConfig) -> None:
        self.cfg = cfg

    def start(self) -> "QueueWorkload":
        """Start the client processes in the background."""
        raise NotImplementedError("the queue workload is being written (interface first)")

    def stop(self, drain: bool = True) -> WorkloadSummary:
        """Stop the processes (each finishes its operation, bounded by op_timeout) and, with drain, read every
        key from the beginning until every acknowledged offset was seen; close the history."""
        raise NotImplementedError("the queue workload is being written (interface first)")


def run_queue(cfg: QueueConfig, stop: threading.Event | None = None, drain: bool = True) -> WorkloadSummary:
    """Run the workload until its duration / op count or until `stop` is set, then drain; blocking."""
    raise NotImplementedError("the queue workload is being written (interface first)")
