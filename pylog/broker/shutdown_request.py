"""Shutting down on request through ZooKeeper (pylog-alter-cluster --remove-brokers; not in Kafka).

A remote tool cannot signal a broker process, so it writes /admin/shutdown_brokers/<id> naming the
broker's registration epoch. The broker watches its own path; a request for its current epoch is
deleted and the broker stops exactly as on SIGTERM (controlled shutdown, then its ephemeral
registration goes with its session). A request for another epoch is a leftover for an earlier run
of this broker id and is deleted without effect.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable, Coroutine

from pylog.zk import paths
from pylog.zk.codecs_admin import ShutdownRequest
from pylog.zk.errors import NoNodeError

if TYPE_CHECKING:
    from pylog.zk.core import WatchHandle, ZkConnection

log = logging.getLogger("pylog.broker")


class ShutdownRequests:
    """Watches /admin/shutdown_brokers/<own id> and calls `stop()` for a request meant for this run."""

    def __init__(self, zk: ZkConnection, broker_id: int, broker_epoch: Callable[[], int],
                 spawn: Callable[[Coroutine[Any, Any, Any]], Any], stop: Callable[[], None]) -> None:
        self.zk = zk
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch  # this run's registration epoch (it changes when a session expires)
        self.spawn = spawn
        self.stop = stop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: WatchHandle | None = None

    async def start(self) -> None:
        """Start watching (a request written before start-up is seen at once)."""
        self._loop = asyncio.get_running_loop()
        path = paths.shutdown_broker(self.broker_id)
        self._handle = await self._loop.run_in_executor(None, self.zk.watch_data, path, self._on_data)

    def cancel(self) -> None:
        """Stop watching."""
        if self._handle is not None:
            self._handle.cancel()

    def _on_data(self, data: bytes | None, _stat: object) -> None:
        # kazoo's thread: hand over to the event loop.
        if data is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(lambda: self.spawn(self._handle_request(data)))

    async def _handle_request(self, data: bytes) -> None:
        path = paths.shutdown_broker(self.broker_id)
        try:
            epoch = ShutdownRequest.decode(data, path).broker_epoch
        except ValueError as exc:
            log.warning("Ignoring malformed shutdown request: %s", exc)
            epoch = None
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.zk.delete, path)
        except NoNodeError:
            return  # handled already
        if epoch != self.broker_epoch():
            log.info("Deleted a shutdown request for broker epoch %s; this broker runs at epoch %d", epoch,
                     self.broker_epoch())
            return
        log.info("[KafkaServer id=%d] shutdown requested through %s", self.broker_id, path)
        self.stop()
