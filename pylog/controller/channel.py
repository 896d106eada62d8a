"""The controller's connections to brokers: one ordered send queue per broker.

Requests to a broker leave in the order the controller issued them (UpdateMetadata before the
LeaderAndIsr that depends on it); a broker that can't be reached is retried until the controller
removes it from the live set. Responses are handed back through callbacks on the event loop.
A failover's resend of every partition's state to the controller's own broker can skip the
socket (`local`): encoding and decoding it on the one event loop the controller shares with its
broker cost more than everything else the failover does. Other requests keep the socket, so the
own broker does not learn of changes (a new topic, say) long before the others do.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

from pylog.client.aio import AsyncBrokerConnection, BrokerUnavailable
from pylog.protocol.api import ApiMessage

log = logging.getLogger("pylog.controller.channel")

Callback = Callable[[int, ApiMessage], None]
LocalDelivery = Callable[[ApiMessage, int], Awaitable[ApiMessage | None]]


class BrokerChannel:
    """The queue and sender task for one broker."""

    def __init__(self, broker_id: int, host: str, port: int, client_id: str, retry_s: float,
                 local: LocalDelivery | None = None) -> None:
        self.broker_id = broker_id
        self.address = (host, port)
        self.conn = AsyncBrokerConnection(host, port, client_id)
        self.local = local
        self.queue: asyncio.Queue = asyncio.Queue()
        self.retry_s = retry_s
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"controller-to-{broker_id}")

    async def _send(self, msg: ApiMessage, version: int, local: bool) -> ApiMessage | None:
        if local and self.local is not None:
            try:
                return await self.local(msg, version)
            except asyncio.CancelledError:
                raise
            except Exception:  # the handler failed: what the socket path does when it can't decode
                log.exception("Controller request %s to broker %d (local) failed", type(msg).__name__,
                              self.broker_id)
                return None
        while True:
            try:
                return await self.conn.request(msg, version, timeout=30)
            except (BrokerUnavailable, OSError, asyncio.TimeoutError) as exc:
                log.info("Controller request %s to broker %d failed (%s); retrying",
                         type(msg).__name__, self.broker_id, exc)
                await self.conn.close()
                await asyncio.sleep(self.retry_s)
            except asyncio.CancelledError:
                raise
            except Exception:  # a request we can't encode or a response we can't decode: drop it
                log.exception("Controller request %s to broker %d failed", type(msg).__name__, self.broker_id)
                return None

    async def _run(self) -> None:
        while True:
            msg, version, callback, local = await self.queue.get()
            resp = await self._send(msg, version, local)
            if resp is None:
                continue
            if callback is not None:
                try:
                    callback(self.broker_id, resp)
                except Exception:
                    log.exception("Controller callback for %s from broker %d failed", type(msg).__name__,
                                  self.broker_id)

    async def close(self) -> None:
        """Stop sending and close the socket."""
        self.task.cancel()
        try:
            await self.task
        except (asyncio.CancelledError, Exception):
            pass
        await self.conn.close()


class ControllerChannel:
    """Per-broker channels, added and removed as brokers come and go."""

    def __init__(self, controller_id: int, retry_s: float = 0.5, local: LocalDelivery | None = None) -> None:
        self.controller_id = controller_id
        self.retry_s = retry_s
        self.local = local  # how to reach our own broker without a socket
        self.channels: dict[int, BrokerChannel] = {}
        self._closing: set[asyncio.Task] = set()  # the loop keeps only weak references to tasks

    def add_broker(self, broker_id: int, host: str, port: int) -> None:
        """Open (or reopen, if its address changed) the channel to a broker."""
        ch = self.channels.get(broker_id)
        if ch is not None and ch.address == (host, port):
            return
        if ch is not None:
            self._close_later(ch)
        local = self.local if broker_id == self.controller_id else None
        self.channels[broker_id] = BrokerChannel(broker_id, host, port, f"controller-{self.controller_id}",
                                                 self.retry_s, local)

    def remove_broker(self, broker_id: int) -> None:
        """Drop a dead broker's channel and whatever it still had queued."""
        ch = self.channels.pop(broker_id, None)
        if ch is not None:
            self._close_later(ch)

    def _close_later(self, ch: BrokerChannel) -> None:
        task = asyncio.get_running_loop().create_task(ch.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def send(self, broker_id: int, msg: ApiMessage, version: int, callback: Callback | None = None,
             local: bool = False) -> None:
        """Queue a request to a broker (dropped if it is not live)."""
        ch = self.channels.get(broker_id)
        if ch is None:
            log.debug("Not sending %s to broker %d: not live", type(msg).__name__, broker_id)
            return
        ch.queue.put_nowait((msg, version, callback, local))

    async def close(self) -> None:
        """Close every channel."""
        await asyncio.gather(*(ch.close() for ch in self.channels.values()), *self._closing, return_exceptions=True)
        self.channels.clear()
