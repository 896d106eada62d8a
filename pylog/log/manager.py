"""All partition logs of a broker across its log dirs, and the per-dir checkpoint files.

Each log dir root holds `recovery-point-offset-checkpoint`, `replication-offset-checkpoint` (high
watermarks) and `log-start-offset-checkpoint` for the partitions in that dir, and the
`.kafka_cleanshutdown` marker after a clean shutdown (which lets the next start skip recovery).

A log dir whose files fail (an OSError writing a checkpoint, flushing, appending, reading) goes
offline as a whole, as in Kafka's KIP-112: the failure is reported to `failure_listener` (Kafka's
LogDirFailureChannel), the broker calls `fail_dir`, which forgets that dir's logs, and the other
dirs go on. Nothing is written to an offline dir again until the broker restarts.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Mapping

from pylog.log.checkpoint import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PARTITION_METADATA,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    OffsetCheckpoint,
    fsync_dir,
)
from pylog.log.config import LogConfig
from pylog.log.errors import KafkaStorageError, LogError
from pylog.log.log import Log, parse_partition_dir

log = logging.getLogger("pylog.log")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
_SHUTDOWN_THREADS = 16
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"

TopicPartition = tuple[str, int]


def delete_dir_name(topic: str, partition: int, marker: str = DELETE_DIR_SUFFIX) -> str:
    """Kafka's `<topic>-<partition>.<uuid32hex>-delete` (or `-future`), topic cut so the name fits 255 chars."""
    suffix = f"-{partition}.{uuid.uuid4().hex}{marker}"
    return topic[: max(0, 255 - len(suffix))] + suffix


class LogManager:
    """Creates, loads, checkpoints, retains, flushes and deletes the broker's partition logs."""

    def __init__(
        self,
        log_dirs: list[str],
        default_config: LogConfig,
        topic_configs: Mapping[str, LogConfig] | None = None,
    ) -> None:
        if not log_dirs:
            raise ValueError("at least one log dir is needed")
        self.log_dirs = [os.path.abspath(d) for d in log_dirs]
        self.default_config = default_config
        self.topic_configs: dict[str, LogConfig] = dict(topic_configs or {})
        self._logs: dict[TopicPartition, Log] = {}
        self._futures: dict[TopicPartition, Log] = {}  # replicas being copied to another log dir
        # Where AlterReplicaLogDirs asked a replica not created yet to go (Kafka's preferredLogDirs).
        self.preferred_dirs: dict[TopicPartition, str] = {}
        self.had_clean_shutdown: dict[str, bool] = {}
        self.offline_dirs: set[str] = set()
        # Told of every OSError under a log dir (from any thread); the broker takes the dir offline.
        self.failure_listener: Callable[[str, BaseException], None] | None = None
        self._shut_down = False

    @property
    def online_dirs(self) -> list[str]:
        """The log dirs still in use, in configured order."""
        return [d for d in self.log_dirs if d not in self.offline_dirs]

    def root_of(self, path: str) -> str | None:
        """The log dir holding a file or partition dir, if any."""
        path = os.path.abspath(path)
        for root in self.log_dirs:
            if path == root or path.startswith(root + os.sep):
                return root
        return None

    def report_failure(self, root: str | None, exc: BaseException) -> None:
        """An I/O error under `root`: tell the listener (once the dir is offline, further reports are noise)."""
        if root is None or root in self.offline_dirs:
            return
        if self.failure_listener is None:
            raise exc
        self.failure_listener(root, exc)

    def fail_dir(self, root: str) -> list[TopicPartition]:
        """Take a log dir offline: forget its logs (and copies being made there); the partitions it held."""
        if root in self.offline_dirs:
            return []
        self.offline_dirs.add(root)
        gone = [tp for tp, plog in self._logs.items() if self.log_dir_of(plog) == root]
        for tp in gone:
            self._close_quietly(self._logs.pop(tp))
        for tp, future in list(self._futures.items()):
            if self.log_dir_of(future) == root or tp in gone:
                self._close_quietly(self._futures.pop(tp))
        self.preferred_dirs = {tp: d for tp, d in self.preferred_dirs.items() if d != root}
        log.error("Log dir %s is offline: stopped serving its %d partitions", root, len(gone))
        return gone

    @staticmethod
    def _close_quietly(plog: Log) -> None:
        try:
            plog.close()
        except OSError as exc:  # the dir is failing: file handles may not close cleanly
            log.warning("Closing %s failed: %s", plog.dir, exc)

    def config_for(self, topic: str) -> LogConfig:
        """The topic's config override, else the default."""
        return self.topic_configs.get(topic, self.default_config)

    # --- loading ------------------------------------------------------------------------------
    def load(self, now_ms: int | None = None) -> None:
        """Open every partition dir of every log dir (recovering unless shut down cleanly).

        High watermarks are restored from `replication-offset-checkpoint`. The clean shutdown
        marker is removed afterwards, so a crash from here on leads to recovery.
        """
        for root in self.log_dirs:
            try:
                self._load_dir(root, now_ms)
            except OSError as exc:  # Kafka starts without an unreadable dir (it goes offline)
                log.error("Error while loading log dir %s: %s", root, exc)
                self.fail_dir(root)
        if not self.online_dirs:
            raise KafkaStorageError(f"All log dirs {self.log_dirs} have failed")
        for tp in [tp for tp in self._futures if tp not in self._logs]:
            # Without its replica the copy is useless (the swap renames the copy first, so this is no
            # swap cut short); it stays on disk for the operator when the replica's dir is offline.
            future = self._futures.pop(tp)
            self._close_quietly(future)
            if not self.offline_dirs:
                log.warning("Deleting %s, the copy of a replica this broker no longer has", future.dir)
                shutil.rmtree(future.dir, ignore_errors=True)

    def _load_dir(self, root: str, now_ms: int | None) -> None:
        os.makedirs(root, exist_ok=True)
        marker = os.path.join(root, CLEAN_SHUTDOWN_FILE)
        clean = os.path.exists(marker)
        self.had_clean_shutdown[root] = clean
        recovery_points = OffsetCheckpoint(os.path.join(root, RECOVERY_POINT_CHECKPOINT)).read()
        log_starts = OffsetCheckpoint(os.path.join(root, LOG_START_OFFSET_CHECKPOINT)).read()
        high_watermarks = OffsetCheckpoint(os.path.join(root, REPLICATION_OFFSET_CHECKPOINT)).read()
        for entry in sorted(os.listdir(root)):
            path = os.path.join(root, entry)
            if not os.path.isdir(path):
                continue
            if entry.endswith(DELETE_DIR_SUFFIX):
                log.info("Deleting %s, a partition dir marked for deletion", path)
                shutil.rmtree(path, ignore_errors=True)
                continue
            try:
                tp = parse_partition_dir(entry)
            except ValueError as e:
                log.warning("Skipping %s: %s", path, e)
                continue
            if entry.endswith(FUTURE_DIR_SUFFIX):
                # The copy of a move between log dirs that a restart interrupted: Kafka loads it and the
                # move resumes from where the copy got to once the replica is served again.
                self._futures[tp] = Log.open(path, self.config_for(tp[0]), 0, clean_shutdown=False, now_ms=now_ms)
                log.info("Loaded future log for partition %s-%d in %s: its move resumes", *tp, root)
                continue
            if tp in self._logs:
                raise LogError(
                    f"Duplicate log directories for {tp[0]}-{tp[1]} are found in both {path} and "
                    f"{self._logs[tp].dir}. It is likely because log directory failure happened while "
                    "broker was replacing current replica with future replica. Recover broker from "
                    "this failure by manually deleting one of the two directories for this partition. "
                    "It is recommended to delete the partition in the log directory that is known to "
                    "have failed recently."
                )
            plog = Log.open(path, self.config_for(tp[0]), recovery_points.get(tp, 0), log_starts.get(tp, 0),
                            clean_shutdown=clean, now_ms=now_ms)
            if tp in high_watermarks:
                plog.high_watermark = high_watermarks[tp]
            plog.recovery_point_listener = self._recovery_point_lowered
            self._logs[tp] = plog
        if clean:
            os.unlink(marker)
            fsync_dir(root)

    def resumable_moves(self) -> list[TopicPartition]:
        """Replicas with a copy in another log dir loaded at start-up (moves to resume)."""
        return [tp for tp in self._futures if tp in self._logs]

    # --- lookup and lifecycle -----------------------------------------------------------------
    def get(self, topic: str, partition: int) -> Log | None:
        """The partition's log, if this broker has it."""
        return self._logs.get((topic, partition))

    def all_logs(self) -> list[Log]:
        """Every open log."""
        return list(self._logs.values())

    def log_dir_of(self, plog: Log) -> str:
        """The log dir root holding a partition."""
        return os.path.dirname(plog.dir)

    def get_or_create(
        self, topic: str, partition: int, config: LogConfig | None = None, topic_id: str | None = None
    ) -> Log:
        """Return the log, creating it if needed (in the dir choose_dirs picks)."""
        existing = self._logs.get((topic, partition))
        if existing is not None:
            if topic_id is not None and existing.topic_id is None:
                existing.set_topic_id(topic_id)
            return existing
        root = self.choose_dirs([(topic, partition)])[(topic, partition)]
        plog = self.open_new(root, topic, partition, config or self.config_for(topic), topic_id)
        fsync_dir(root)
        return self.register(topic, partition, plog, config)

    def choose_dirs(self, tps: list[TopicPartition]) -> dict[TopicPartition, str]:
        """Where new replicas go: the dir AlterReplicaLogDirs asked for, else the log dir with the fewest
        partitions (ties: the first configured), as Kafka's nextLogDirs does.

        The partitions are counted once per call (not once per new replica: that was quadratic in the
        partitions a broker hosts, seconds per replica at 10,000) and only when there is a choice.
        """
        online = self.online_dirs
        if not online:
            raise KafkaStorageError(f"No online log dir to create {tps[0][0]}-{tps[0][1]} in")
        counts = {d: 0 for d in online}
        if len(online) > 1:
            for plog in self._logs.values():
                root = self.log_dir_of(plog)
                counts[root] = counts.get(root, 0) + 1
        chosen = {}
        for tp in tps:
            preferred = self.preferred_dirs.pop(tp, None)
            root = preferred if preferred in counts else min(online, key=lambda d: counts[d])
            counts[root] += 1
            chosen[tp] = root
        return chosen

    @staticmethod
    def open_new(root: str, topic: str, partition: int, config: LogConfig, topic_id: str | None) -> Log:
        """Create a partition dir under `root` with its files made durable (all but the root's own entry).

        Touches nothing but that dir, so it may run in a worker thread; register() makes it known.
        """
        plog = Log.open(os.path.join(root, f"{topic}-{partition}"), config, topic_id=topic_id)
        plog.flush()
        return plog

    def register(self, topic: str, partition: int, plog: Log, config: LogConfig | None = None) -> Log:
        """Make a log opened by open_new (its root fsynced since) one of this manager's."""
        if config is not None:
            self.topic_configs[topic] = config
        plog.recovery_point_listener = self._recovery_point_lowered
        self._logs[(topic, partition)] = plog
        log.info("Created log for partition %s-%d in %s", topic, partition, self.log_dir_of(plog))
        return plog

    def delete(self, topic: str, partition: int) -> bool:
        """Remove a partition's log and files; False if it was not here."""
        plog = self._logs.pop((topic, partition), None)
        if plog is None:
            return False
        self.abort_future(topic, partition)
        root = self.log_dir_of(plog)
        plog.close()
        # Rename first: a crash half-way through the rmtree leaves a dir load() cleans up.
        doomed = os.path.join(root, delete_dir_name(topic, partition))
        os.rename(plog.dir, doomed)
        fsync_dir(root)
        self._checkpoint(root, RECOVERY_POINT_CHECKPOINT, lambda p: p.recovery_point)
        self._checkpoint(root, LOG_START_OFFSET_CHECKPOINT, self._log_start_to_checkpoint)
        shutil.rmtree(doomed, ignore_errors=True)
        log.info("Deleted log for partition %s-%d in %s", topic, partition, root)
        return True

    # --- moving a replica to another log dir (AlterReplicaLogDirs) ---------------------------
    def future_log(self, topic: str, partition: int) -> Log | None:
        """The copy being made of a partition in another log dir, if any."""
        return self._futures.get((topic, partition))

    def future_logs(self) -> list[Log]:
        """Every copy in progress."""
        return list(self._futures.values())

    def create_future(self, topic: str, partition: int, root: str) -> Log:
        """The (empty at first) `<topic>-<partition>.<id>-future` log in `root` the replica is copied into."""
        if root not in self.log_dirs:
            raise LogError(f"Log dir {root} is not found in the config.")
        current = self._logs[(topic, partition)]
        existing = self._futures.get((topic, partition))
        if existing is not None:
            if self.log_dir_of(existing) == root:
                return existing
            self.abort_future(topic, partition)
        future = Log.open(os.path.join(root, delete_dir_name(topic, partition, FUTURE_DIR_SUFFIX)), current.config)
        fsync_dir(root)
        self._futures[(topic, partition)] = future
        log.info("Created future log for partition %s-%d in %s", topic, partition, root)
        return future

    def abort_future(self, topic: str, partition: int) -> None:
        """Drop an unfinished copy."""
        future = self._futures.pop((topic, partition), None)
        if future is not None:
            future.delete()
            log.info("Deleted future log for partition %s-%d", topic, partition)

    def replace_current_with_future(self, topic: str, partition: int) -> Log:
        """Swap a complete copy in for the replica: Kafka's replaceCurrentWithFutureLog. Returns the new log.

        The caller has checked that the copy holds every batch of the current log; the leader-epoch
        file and the topic id are carried over, the old dir is renamed `-delete` and removed.
        """
        current, future = self._logs[(topic, partition)], self._futures.pop((topic, partition))
        old_root, new_root = self.log_dir_of(current), self.log_dir_of(future)
        current.flush()
        future.flush()
        current.close()
        future.close()
        for name in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA):
            if os.path.exists(os.path.join(current.dir, name)):
                shutil.copyfile(os.path.join(current.dir, name), os.path.join(future.dir, name))
        # The copy takes the replica's name first, as Kafka does: a crash in between leaves two full
        # copies (load() then refuses to guess), never none.
        target = os.path.join(new_root, f"{topic}-{partition}")
        os.rename(future.dir, target)
        fsync_dir(new_root)
        doomed = os.path.join(old_root, delete_dir_name(topic, partition))
        os.rename(current.dir, doomed)
        fsync_dir(old_root)
        plog = Log.open(target, current.config, future.recovery_point, current.log_start_offset, clean_shutdown=True)
        plog.high_watermark = current.high_watermark
        plog.recovery_point_listener = self._recovery_point_lowered
        self._logs[(topic, partition)] = plog
        for root in (old_root, new_root):
            self._checkpoint(root, RECOVERY_POINT_CHECKPOINT, lambda p: p.recovery_point)
            self._checkpoint(root, LOG_START_OFFSET_CHECKPOINT, self._log_start_to_checkpoint)
            self._checkpoint(root, REPLICATION_OFFSET_CHECKPOINT, lambda p: p.high_watermark)
        shutil.rmtree(doomed, ignore_errors=True)
        log.info("The current replica of %s-%d moved from %s to %s", topic, partition, old_root, new_root)
        return plog

    # --- checkpoints --------------------------------------------------------------------------
    def _checkpoint(self, root: str, filename: str, value) -> None:  # type: ignore[no-untyped-def]
        if root in self.offline_dirs:
            return
        offsets = {}
        for (topic, partition), plog in list(self._logs.items()):  # may run in a worker thread
            if self.log_dir_of(plog) == root:
                v = value(plog)
                if v is not None:
                    offsets[(topic, partition)] = v
        try:
            OffsetCheckpoint(os.path.join(root, filename)).write(offsets)
        except OSError as exc:
            self.report_failure(root, exc)

    @staticmethod
    def _log_start_to_checkpoint(plog: Log) -> int | None:
        # Kafka only records log start offsets that moved past the first segment's base offset.
        return plog.log_start_offset if plog.log_start_offset > plog.segments[0].base_offset else None

    def checkpoint_high_watermarks(self) -> None:
        """Write `replication-offset-checkpoint` in every log dir."""
        for root in self.log_dirs:
            self._checkpoint(root, REPLICATION_OFFSET_CHECKPOINT, lambda p: p.high_watermark)

    def checkpoint_recovery_points(self) -> None:
        """Write `recovery-point-offset-checkpoint` in every log dir."""
        for root in self.log_dirs:
            self._checkpoint(root, RECOVERY_POINT_CHECKPOINT, lambda p: p.recovery_point)

    def checkpoint_log_start_offsets(self) -> None:
        """Write `log-start-offset-checkpoint` in every log dir."""
        for root in self.log_dirs:
            self._checkpoint(root, LOG_START_OFFSET_CHECKPOINT, self._log_start_to_checkpoint)

    def _recovery_point_lowered(self, plog: Log) -> None:
        # Truncation lowered a recovery point: persist it now, as Kafka's LogManager.truncateTo does.
        self._checkpoint(self.log_dir_of(plog), RECOVERY_POINT_CHECKPOINT, lambda p: p.recovery_point)

    # --- periodic work ------------------------------------------------------------------------
    def run_retention(self, now_ms: int | None = None) -> int:
        """Apply retention to every log; the number of segments deleted."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return sum(self._guarded(plog, lambda p: p.apply_retention(now), 0) for plog in list(self._logs.values()))

    def flush_due(self, now_ms: int | None = None) -> int:
        """Flush logs whose flush.ms passed or that rolled; the number of logs flushed."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return sum(1 for plog in list(self._logs.values()) if self._guarded(plog, lambda p: p.flush_due(now), False))

    def _guarded(self, plog: Log, action, failed):  # type: ignore[no-untyped-def]
        """Run `action(plog)`; an OSError takes the log's dir offline and gives `failed`."""
        try:
            return action(plog)
        except OSError as exc:
            self.report_failure(self.root_of(plog.dir), exc)
            return failed

    def shutdown(self) -> None:
        """Flush and close every log, write all checkpoints and the clean shutdown markers.

        A second call does nothing (it must not overwrite the checkpoints with an empty set).
        """
        if self._shut_down:
            return
        self._shut_down = True
        self.failure_listener = self._mark_offline  # nobody acts on failures any more: just skip those dirs
        # Each log's fsyncs are independent: from several threads the journal commits them together
        # (one after the other, 10,000 partitions took minutes to shut down; BENCHMARKS.md, latency-scale).
        with ThreadPoolExecutor(_SHUTDOWN_THREADS, thread_name_prefix="log-shutdown") as pool:
            list(pool.map(lambda plog: self._guarded(plog, lambda p: p.flush(), None), list(self._logs.values())))
            self.checkpoint_recovery_points()
            self.checkpoint_log_start_offsets()
            self.checkpoint_high_watermarks()
            list(pool.map(lambda plog: self._guarded(plog, lambda p: p.close(), None),
                          [*self._logs.values(), *self._futures.values()]))
        for root in self.online_dirs:  # an offline dir gets no clean shutdown marker: it recovers
            try:
                open(os.path.join(root, CLEAN_SHUTDOWN_FILE), "ab").close()
                fsync_dir(root)
            except OSError as exc:
                log.error("Could not mark %s as cleanly shut down: %s", root, exc)
        self._logs.clear()

    def _mark_offline(self, root: str, exc: BaseException) -> None:
        log.error("I/O error in log dir %s during shutdown: %s", root, exc)
        self.offline_dirs.add(root)
