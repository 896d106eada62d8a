"""An asyncio connection to one broker: pipelined requests matched to responses by correlation id.

Used by replica fetchers, the controller's channel to brokers and controlled shutdown. When the
inter-broker listener uses TLS and/or SASL, the broker process sets `AsyncBrokerConnection.security`
once at start-up: every connection it opens is then an inter-broker one with those settings.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import ssl
import struct
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from pylog.protocol.api import ApiKey, ApiMessage, request_class
from pylog.protocol.codec import decode_response, encode_request

log = logging.getLogger("pylog.client")
_I32 = struct.Struct(">i")


async def _within(aw, seconds: float):
    """Await `aw` for at most `seconds` (asyncio.TimeoutError after that).

    wait_for can swallow a cancellation when the awaited operation completes at the same moment
    (a refused connect, a response arriving): the caller then never learns it was cancelled, and a
    task being stopped runs on. asyncio.timeout (3.11+) delivers the cancellation; 3.10 keeps wait_for.
    """
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await aw
    return await asyncio.wait_for(aw, seconds)


class BrokerUnavailable(ConnectionError):
    """The connection failed or was closed before the response arrived."""


class AuthenticationFailed(BrokerUnavailable):
    """The broker refused this client's SASL authentication."""


@dataclass
class ConnectSecurity:
    """TLS and SASL for connections to other brokers.

    `sasl` makes a new mechanism object per connection: `.mechanism` (its name) and
    `.step(challenge: bytes | None) -> bytes | None` giving the next token (None: done).
    """

    ssl_context: ssl.SSLContext | None = None
    sasl: Callable[[], Any] | None = None


class AsyncBrokerConnection:
    """One TCP connection to a broker; `request()` may be called concurrently."""

    security: ClassVar[ConnectSecurity | None] = None  # set by a broker whose inter-broker listener is secure

    def __init__(self, host: str, port: int, client_id: str, connect_timeout: float = 10.0) -> None:
        self.host, self.port, self.client_id = host, port, client_id
        self.connect_timeout = connect_timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, tuple[asyncio.Future, Callable[[Any], Any]]] = {}  # id -> (future, decode)
        self._ids = itertools.count(1)
        self._read_task: asyncio.Task | None = None
        self._connecting: asyncio.Lock = asyncio.Lock()
        self._ready = False  # connected and, with SASL, authenticated

    @property
    def connected(self) -> bool:
        """Whether the socket is open (and authenticated when SASL is used)."""
        return self._ready and self._writer is not None and not self._writer.is_closing()

    async def connect(self) -> None:
        """Open the socket (no-op when already open)."""
        async with self._connecting:
            if self.connected:
                return
            sec = self.security
            tls = sec.ssl_context if sec is not None else None
            self._reader, self._writer = await _within(
                asyncio.open_connection(self.host, self.port, limit=1 << 20, ssl=tls,
                                        server_hostname=self.host if tls else None), self.connect_timeout)
            self._read_task = asyncio.get_running_loop().create_task(self._read_loop())
            if sec is not None and sec.sasl is not None:
                await self._authenticate(sec.sasl())
            self._ready = True

    async def _authenticate(self, mech: Any) -> None:
        """SaslHandshake v1, then SaslAuthenticate rounds until the mechanism is done (KIP-152)."""
        hs = await self._send(request_class(ApiKey.SaslHandshake)[1](mechanism=mech.mechanism), 1, self.connect_timeout)
        if hs.error_code != 0:
            await self.close()
            raise AuthenticationFailed(f"{self.host}:{self.port}: SASL mechanism {mech.mechanism} refused "
                                       f"(error {hs.error_code}; enabled: {hs.mechanisms})")
        token = mech.step(None)
        cls = request_class(ApiKey.SaslAuthenticate)[1]
        while token is not None:
            resp = await self._send(cls(auth_bytes=token), 1, self.connect_timeout)
            if resp.error_code != 0:
                await self.close()
                raise AuthenticationFailed(f"{self.host}:{self.port}: {resp.error_message}")
            token = mech.step(bytes(resp.auth_bytes))

    async def request(self, msg: ApiMessage, version: int, timeout: float = 30.0) -> ApiMessage:
        """Send one request and wait for its response."""
        if not self.connected:
            await self.connect()
        return await self._send(msg, version, timeout)

    async def request_encoded(self, encode: Callable[[int, str], bytes], decode: Callable[[Any], tuple[int, Any]],
                              timeout: float = 30.0) -> Any:
        """Send a request a hand-written codec frames (`encode(correlation id, client id)`); the response
        `decode(frame)` gives as (correlation id, message). For the hottest inter-broker request (a follower's Fetch)."""
        if not self.connected:
            await self.connect()
        corr = next(self._ids) & 0x7FFFFFFF
        return await self._exchange(corr, encode(corr, self.client_id), decode, timeout)

    async def _send(self, msg: ApiMessage, version: int, timeout: float) -> ApiMessage:
        corr = next(self._ids) & 0x7FFFFFFF
        return await self._exchange(corr, encode_request(msg, version, corr, self.client_id),
                                    functools.partial(decode_response, msg.API_KEY, version), timeout)

    async def _exchange(self, corr: int, frame: bytes, decode: Callable[[Any], tuple[int, Any]], timeout: float) -> Any:
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending[corr] = (fut, decode)
        try:
            assert self._writer is not None
            self._writer.write(frame)
            return await _within(fut, timeout)
        except asyncio.TimeoutError:
            # A late response would desynchronise nothing (ids are unique) but the peer is slow
            # or gone: drop the connection so the next request starts clean.
            await self.close()
            raise
        finally:
            self._pending.pop(corr, None)

    async def _read_loop(self) -> None:
        reader = self._reader
        assert reader is not None
        try:
            while True:
                (size,) = _I32.unpack(await reader.readexactly(4))
                frame = await reader.readexactly(size)
                (corr,) = _I32.unpack_from(frame, 0)
                entry = self._pending.get(corr)
                if entry is None:
                    continue
                fut, decode = entry
                if not fut.done():
                    try:
                        fut.set_result(decode(frame)[1])
                    except Exception as exc:  # undecodable response: fail this request only
                        fut.set_exception(exc)
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            self._fail_pending(BrokerUnavailable(f"{self.host}:{self.port}: {exc or 'connection closed'}"))
        except asyncio.CancelledError:
            self._fail_pending(BrokerUnavailable(f"{self.host}:{self.port}: connection closed"))
            raise
        finally:
            if self._writer is not None:
                self._writer.close()

    def _fail_pending(self, exc: Exception) -> None:
        for fut, _ in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(exc)

    async def close(self) -> None:
        """Close the socket and fail outstanding requests."""
        writer, task = self._writer, self._read_task
        self._ready = False
        self._writer = self._reader = None
        self._read_task = None
        if writer is not None:
            writer.close()
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._fail_pending(BrokerUnavailable(f"{self.host}:{self.port}: connection closed"))
