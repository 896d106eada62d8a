"""The disk work of a LeaderAndIsr's new replicas, done in parallel before its states are applied.

A replica new to this broker costs several fsyncs: its dir, segment files and partition.metadata
when the log is created, and its leader-epoch-checkpoint when it becomes leader. One after the
other on the event loop that was ~10 ms per partition on this machine's ext4 (the journal commits
each alone): a 1,000-partition topic took over 30 s, and a restart with 10,000 partitions stalled
every client for minutes. ext4 commits concurrent fsyncs together, so the same work from 16
threads costs a fraction of it (BENCHMARKS.md, latency-scale).

Nothing changes in what is done or when it is durable: the logs are created and the epochs
assigned exactly as ReplicaManager._apply_partition_state would do next (which then finds them
done), and all of it is on disk before the LeaderAndIsr is answered. Only replicas with no
Partition object yet take part: they serve no request until _apply_partition_state registers
them, so nothing can append under an epoch whose checkpoint is not yet durable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pylog.log.checkpoint import fsync_dir, sync_file

log = logging.getLogger("pylog.replica")

IO_THREADS = 16  # enough concurrent fsyncs for the journal to batch them; more only queue


class ReplicaPreparer:
    """Creates the logs and assigns the leader epochs of a request's new replicas from a thread pool."""

    def __init__(self, replicas: Any) -> None:
        self.replicas = replicas  # the ReplicaManager
        self._pool: ThreadPoolExecutor | None = None

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(IO_THREADS, thread_name_prefix="replica-io")
        return self._pool

    def close(self) -> None:
        """Stop the threads (after the broker stopped applying requests)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _new_replicas(self, req: Any) -> list[tuple[str, int, Any, int | None]]:
        """(topic, partition, topic id, leader epoch if we lead it) of each replica with no Partition yet."""
        rm = self.replicas
        out = []
        for ts in req.topic_states:
            for ps in ts.partition_states:
                key = (ts.topic_name, ps.partition_index)
                if (rm.broker_id not in ps.replicas or key in rm.offline or key in rm.partitions
                        or rm.logs.future_log(*key) is not None):
                    continue  # refused, or handled one by one as before
                out.append((key[0], key[1], ts.topic_id, ps.leader_epoch if ps.leader == rm.broker_id else None))
        return out

    async def prepare(self, req: Any, topic_id_str: Any) -> None:
        """Create the missing logs and assign the new leader epochs of `req`'s new replicas, in parallel."""
        rm = self.replicas
        if rm.logs.offline_dirs:
            return  # which logs may be created depends on each replica's state: leave it to the one-by-one path
        new = self._new_replicas(req)
        if len(new) < 2:
            return
        loop = asyncio.get_running_loop()
        pool = self._executor()
        create = [(t, p, tid, epoch) for t, p, tid, epoch in new if rm.logs.get(t, p) is None]
        roots = rm.logs.choose_dirs([(t, p) for t, p, _, _ in create]) if create else {}
        jobs = []
        for t, p, tid, epoch in create:
            cfg = await rm.topic_configs.log_config(t)
            jobs.append(loop.run_in_executor(pool, _create, rm.logs, roots[(t, p)], t, p, cfg, topic_id_str(tid),
                                             epoch))
        synced = []
        for t, p, _, epoch in new:
            plog = rm.logs.get(t, p)
            # An existing log (loaded at start-up): the loop writes the checkpoint, a thread makes it durable.
            if plog is not None and epoch is not None and plog.epoch_cache.assign(epoch, plog.log_end_offset,
                                                                                  sync=False):
                synced.append(plog.epoch_cache.path)
                jobs.append(loop.run_in_executor(pool, sync_file, plog.epoch_cache.path))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        created = [r for r in results[:len(create)] if isinstance(r, tuple)]
        for path, r in zip(synced, results[len(create):]):
            if isinstance(r, OSError):  # the entry is in memory but not on disk: the dir is failing (KIP-112)
                rm.storage_failed(path, r)
        dirs = sorted({r[0] for r in created})
        dir_ok = await asyncio.gather(*(loop.run_in_executor(pool, fsync_dir, d) for d in dirs), return_exceptions=True)
        durable = {d for d, r in zip(dirs, dir_ok) if not isinstance(r, BaseException)}
        for root, t, p, plog, cfg in created:
            if root in durable and rm.logs.get(t, p) is None:
                rm.logs.register(t, p, plog, cfg)
            else:
                with contextlib.suppress(OSError):
                    plog.close()  # the one-by-one path opens the dir again
        # A replica whose creation failed is left to the one-by-one path: it meets the same error and
        # answers it for that partition.
        if len(created) < len(create):
            log.warning("Creating %d new replicas in parallel: %d failed", len(create), len(create) - len(created))


def _create(logs: Any, root: str, topic: str, partition: int, cfg: Any, topic_id: str | None,
            epoch: int | None) -> tuple:
    """In a worker thread: a new durable log, led from `epoch` on when given (what make_leader assigns)."""
    plog = logs.open_new(root, topic, partition, cfg, topic_id)
    if epoch is not None:
        plog.epoch_cache.assign(epoch, plog.log_end_offset)
    return root, topic, partition, plog, cfg
