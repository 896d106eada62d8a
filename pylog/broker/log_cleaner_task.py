"""The broker's log cleaner task: Kafka's CleanerThread, as a periodic asyncio task.

Each pass cleans the filthiest due compacted log, then the next, until none is due (at most one
pass over all logs per tick). The recopying runs in a worker thread; only planning and the swap
of the finished segments run on the event loop, so produce and fetch never wait for a clean.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from pylog.log.cleaner import CleaningAborted, discard, finish_clean, run_clean
from pylog.log.cleaner_manager import LogCleanerManager
from pylog.log.manager import LogManager

log = logging.getLogger("pylog.log.cleaner")


class LogCleanerTask:
    """Drives LogCleanerManager from the broker's background tasks."""

    def __init__(self, logs: LogManager, config: Any, blocking: Callable[..., Awaitable[Any]],
                 now_ms: Callable[[], int]) -> None:
        self.manager = LogCleanerManager(
            logs, int(config.get("log.cleaner.dedupe.buffer.size")),
            float(config.get("log.cleaner.io.buffer.load.factor")),
        )
        self.logs = logs
        self._blocking = blocking
        self._now_ms = now_ms

    async def run_once(self) -> int:
        """Clean every due compacted log once; the number of logs cleaned."""
        cleaned = 0
        for _ in range(len(self.logs.all_logs())):
            plan = self.manager.grab_filthiest(self._now_ms())
            if plan is None:
                break
            ok = False
            try:
                await self._blocking(run_clean, plan)
                if self.logs.get(plan.log.topic, plan.log.partition) is not plan.log:
                    discard(plan)  # the partition was deleted or replaced while it was being cleaned
                else:
                    finish_clean(plan)
                    ok = True
            except CleaningAborted as e:
                log.info("Cleaning of %s aborted: %s", plan.log.name, e)
            except OSError as exc:  # the log's dir failed: it goes offline (KIP-112), the cleaner goes on elsewhere
                log.error("I/O error while cleaning %s: %s", plan.log.name, exc)
                self.logs.report_failure(self.logs.root_of(plan.log.dir), exc)
                self.manager.done(plan, cleaned=False)
                continue
            except Exception:
                log.exception("Unexpected exception while cleaning %s", plan.log.name)
                discard(plan)
                self.manager.done(plan, cleaned=False)
                break
            checkpoint = self.manager.done(plan, cleaned=ok)
            if checkpoint is not None:
                await self._blocking(self.manager.write_checkpoint, *checkpoint)
                cleaned += 1
        return cleaned
