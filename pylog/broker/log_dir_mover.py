"""Moving a replica between this broker's log dirs (AlterReplicaLogDirs; Kafka's ReplicaAlterLogDirsThread).

A move creates a `-future` log in the destination dir and copies the replica's batches into it
chunk by chunk on the event loop (appends and truncations of the replica go on meanwhile). Once
the copy holds every batch, the swap happens in the same loop step as that check, so no append
can slip in between: the future log replaces the current one (LogManager.replace_current_with_future)
and the partition serves from the new dir. A truncated or rewritten replica is noticed by comparing
the last copied batch's header with the replica's, and the copy starts over.

A restart (even kill -9) in the middle of a copy loses nothing: the `-future` dir is loaded with
the logs, and the copy resumes from its last complete batch once the replica is served again
(`resume`, from the LeaderAndIsr that makes it leader or follower), as Kafka's
ReplicaAlterLogDirsManager does.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Protocol

from pylog.log import Log, LogError
from pylog.protocol import records
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.partition import Partition
    from pylog.log.manager import LogManager

log = logging.getLogger("pylog.broker.log_dir_mover")

CHUNK_BYTES = 1 << 20
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LONG_MAX = 2**63 - 1
_HEADER_BYTES = 61  # a v2 batch header


def _batch_header(plog: Log, offset: int) -> tuple[int, int, int] | None:
    """(base offset, length, crc) of the batch holding `offset`, or None."""
    slices = plog.read(offset, 1)
    if not slices:
        return None
    fd = os.open(slices[0].path, os.O_RDONLY)
    try:
        raw = os.pread(fd, _HEADER_BYTES, slices[0].position)
    finally:
        os.close(fd)
    h = records.parse_header(raw)
    return h.base_offset, h.batch_length, h.crc


def _diverged(current: Log, future: Log) -> bool:
    """Whether the copy's last batch is no longer the replica's (the replica was truncated)."""
    last = future.log_end_offset - 1
    if last >= current.log_end_offset:
        return True
    if last < max(current.log_start_offset, future.log_start_offset):
        return False
    return _batch_header(current, last) != _batch_header(future, last)


def copy_step(current: Log, future: Log, max_bytes: int = CHUNK_BYTES) -> bool:
    """Copy the next batches of `current` into `future`; True when the copy holds all of them."""
    if future.log_end_offset > future.log_start_offset and _diverged(current, future):
        future.truncate_fully_and_start_at(current.log_start_offset)
    start = max(future.log_end_offset, current.log_start_offset)
    if start >= current.log_end_offset:
        if future.log_end_offset != current.log_end_offset:  # everything below was deleted: start empty there
            future.truncate_fully_and_start_at(current.log_end_offset)
        return True
    # No more than a segment at once: one append may not exceed segment.bytes (at least one batch is read).
    limit = min(max_bytes, future.config.segment_bytes)
    buf = bytearray(b"".join(s.read() for s in current.read(start, limit)))
    headers = records.validate_batches(buf)
    if headers[0].base_offset != future.log_end_offset:
        future.truncate_fully_and_start_at(headers[0].base_offset)
    future.append_as_follower(buf, headers)
    return False


class HostedReplicas(Protocol):
    """The replica manager as a move sees it: which replicas are served here, which are offline."""

    offline: set[tuple[str, int]]

    def get(self, topic: str, partition: int) -> Partition | None:
        """The local replica of a partition, if hosted here."""


class LogDirMover:
    """The moves in progress on one broker, one task each (owned by the replica manager, as in Kafka)."""

    def __init__(self, logs: LogManager, replicas: HostedReplicas, spawn: Callable[[Coroutine[Any, Any, Any]],
                 asyncio.Task], rate: Callable[[], int]) -> None:
        self.logs = logs
        self.replicas = replicas
        self.spawn = spawn
        self.rate = rate  # replica.alter.log.dirs.io.max.bytes.per.second, dynamic
        self._tasks: dict[tuple[str, int], asyncio.Task] = {}

    def request(self, topic: str, partition: int, root: str) -> ErrorCode:
        """Start (or keep, or cancel) moving a replica to `root`; the per-partition error code."""
        logs = self.logs
        if root not in logs.log_dirs:
            return ErrorCode.LOG_DIR_NOT_FOUND
        if root in logs.offline_dirs or (topic, partition) in self.replicas.offline:
            return ErrorCode.KAFKA_STORAGE_ERROR
        p = self.replicas.get(topic, partition)
        if p is None:
            # Kafka remembers the dir for when the replica is created, and answers REPLICA_NOT_AVAILABLE.
            logs.preferred_dirs[(topic, partition)] = root
            return ErrorCode.REPLICA_NOT_AVAILABLE
        future = logs.future_log(topic, partition)
        if future is not None and logs.log_dir_of(future) == root:
            return ErrorCode.NONE
        self._stop(topic, partition)
        if logs.log_dir_of(p.log) == root:
            return ErrorCode.NONE
        logs.create_future(topic, partition, root)
        self._tasks[(topic, partition)] = self.spawn(self._copy(topic, partition))
        return ErrorCode.NONE

    def resume(self, topic: str, partition: int) -> None:
        """Go on copying a replica whose copy was loaded at start-up (a move a restart interrupted)."""
        if (topic, partition) in self._tasks or self.logs.future_log(topic, partition) is None:
            return
        log.info("Resuming the move of %s-%d to %s", topic, partition,
                 self.logs.log_dir_of(self.logs.future_log(topic, partition)))
        self._tasks[(topic, partition)] = self.spawn(self._copy(topic, partition))

    def _stop(self, topic: str, partition: int) -> None:
        task = self._tasks.pop((topic, partition), None)
        if task is not None:
            task.cancel()
        self.logs.abort_future(topic, partition)

    async def _copy(self, topic: str, partition: int) -> None:
        logs = self.logs
        try:
            while True:
                p = self.replicas.get(topic, partition)
                future = logs.future_log(topic, partition)
                if p is None or future is None:
                    return
                before = future.size_bytes
                if copy_step(p.log, future):
                    p.log = logs.replace_current_with_future(topic, partition)
                    return
                # Requests run between chunks; replica.alter.log.dirs.io.max.bytes.per.second paces them.
                rate = self.rate()
                await asyncio.sleep(max(0, future.size_bytes - before) / rate if 0 < rate < LONG_MAX else 0)
        except (LogError, records.RecordError, OSError):
            log.exception("Moving %s-%d between log dirs failed; the replica stays where it was", topic, partition)
            logs.abort_future(topic, partition)
        finally:
            if self._tasks.get((topic, partition)) is asyncio.current_task():
                del self._tasks[(topic, partition)]
