"""Plumbing shared by the controller's admin extensions: run work on the controller's task, and
react to the creation of an admin request znode (/admin/preferred_replica_election,
/admin/reassign_partitions) the way Kafka's ZNodeChangeHandler.handleCreation does.

Kafka acts on these znodes only when they are created (and once at failover if one is there):
later data changes (the controller removing finished partitions) must not restart the work, so
a creation is recognised by its czxid.
"""

from __future__ import annotations

import concurrent.futures
import logging
from typing import Any, Awaitable, Callable

from pylog.controller import events as ev
from pylog.controller.core import ControllerCore

log = logging.getLogger("pylog.controller")


def post_call(core: ControllerCore, func: Callable[[], Awaitable[Any]], generation: int) -> None:
    """Queue `func()` on the controller's task from any thread; dropped if posted in an earlier term.

    The future is a thread-safe concurrent one that nobody waits on: the controller's loop logs
    failures itself.
    """
    core.post(ev.Call(func, concurrent.futures.Future()), generation)


class CreationWatch:
    """Calls `on_created()` on the controller's task each time `path` is created (and now, if it exists)."""

    def __init__(self, core: ControllerCore, path: str, on_created: Callable[[], Awaitable[None]]) -> None:
        self.core = core
        self.path = path
        self.on_created = on_created
        self._seen_czxid: int | None = None
        self._handle: Any = None
        self._generation = -1

    async def start(self, seen_czxid: int | None = None) -> None:
        """Register the watch for the current controller term (its first call happens right away).

        `seen_czxid` names a creation the caller already handled (e.g. at failover), so it is not
        acted on twice.
        """
        self._generation = self.core.generation
        self._seen_czxid = seen_czxid
        self._handle = await self.core.zk_call(self.core.zk.watch_data, self.path, self._on_data)

    def _on_data(self, data: bytes | None, stat: Any) -> None:
        # Runs on ZooKeeper's callback thread: only decide whether this is a new creation, then post.
        if stat is None:
            self._seen_czxid = None
            return
        if stat.czxid == self._seen_czxid:
            return
        self._seen_czxid = stat.czxid
        post_call(self.core, self.on_created, self._generation)

    def cancel(self) -> None:
        """Stop watching (on resignation)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
