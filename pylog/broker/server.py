"""The broker's socket server: it only moves bytes between sockets and handlers.

Each connection decodes frames with the sans-I/O FrameDecoder straight into buffers the handlers
may keep, handles requests one at a time in arrival order and writes the responses in request
order, sending record bytes from segment files with sendfile (the loop's, or os.sendfile on the socket
under uvloop, which has none).
Garbage closes that one connection and nothing else.

One exception to "one at a time": a handler may return a Later (Produce with acks=-1 once it has
appended). The connection then owes that response and goes on with the next request; responses
owed are kept in order and a writer task sends each as soon as it and all before it are ready.
Kafka itself handles one request per connection at a time, but its acks=all round trip is well
under a millisecond; ours crosses several Python event loops, and a client with small batches
would otherwise get one batch per round trip. At most _MAX_OWED responses may be owed before the
connection stops handling requests (its frames then queue up to _MAX_QUEUED_BYTES, and then the
socket stops being read).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from pylog.broker.handlers import HANDLERS, Later, advertised_ranges, load_all
from pylog.broker.request_quota import BusyTime, charged, request_throttle, with_throttle
from pylog.broker.services import BrokerServices
from pylog.metrics.recorders import FETCH_FOLLOWER, REQUESTS
from pylog.protocol.api import ApiKey, api_name
from pylog.protocol.codec import (
    MalformedRequest,
    RequestHeader,
    api_versions_unsupported,
    decode_request_body,
    encode_response,
    parse_request_header,
)
from pylog.protocol.framing import FrameDecoder, FrameTooLarge
from pylog.security.authorizer import allowed
from pylog.security.connection import ConnectionSecurity
from pylog.security.credentials import CredentialStore

log = logging.getLogger("pylog.network")

_MAX_QUEUED_BYTES = 64 * 1024 * 1024  # stop reading from a client that pipelines more than this
# Responses a connection may owe (waiting for replication, or queued behind one that is) before it
# handles no further request. What an owed acks=-1 response holds is small (its records are already
# in the log): the cap bounds per-connection bookkeeping and how far a client can run ahead, and it
# is deep enough that a follower fetch carries many batches per replication round trip (see
# BENCHMARKS.md, replication). librdkafka pipelines up to 1,000,000 requests by default, the Java
# producer 5.
_MAX_OWED = 64
_CLOSE = object()  # owed: close the connection once every response before it has been sent
# The controller's and the brokers' own requests: CLUSTER_ACTION on the cluster when ACLs are on.
_CLUSTER_ACTION_APIS = frozenset((ApiKey.LeaderAndIsr, ApiKey.StopReplica, ApiKey.UpdateMetadata,
                                  ApiKey.ControlledShutdown))


@dataclass(slots=True)
class _Owed:
    """A response that waits (a handler's Later) and the header to encode it with."""

    header: RequestHeader
    later: Later
    key: int  # the request metrics' key (FETCH_FOLLOWER for a replica's Fetch)
    started: float  # time.perf_counter() on arrival, for the request metrics' total time


@dataclass(slots=True)
class RequestContext:
    """What a handler may know about the request it serves (a services.HandlerContext)."""

    broker: BrokerServices
    header: RequestHeader
    peer: str
    security: ConnectionSecurity | None = None  # listener and principal; None for in-process calls
    size: int = 0  # the request's bytes
    throttle_ms: int = 0  # a quota's throttle time: the connection is muted that long after the response


class KafkaConnection(asyncio.BufferedProtocol):
    """One client connection."""

    def __init__(self, server: "SocketServer") -> None:
        self.server = server
        self.decoder = FrameDecoder(server.max_request_size)
        self.transport: asyncio.Transport | None = None
        self.queue: collections.deque[bytearray | memoryview] = collections.deque()
        self.queued_bytes = 0
        self.ready = asyncio.Event()
        self.can_write = asyncio.Event()
        self.can_write.set()
        self.peer = "?"
        self.task: asyncio.Task | None = None
        self.handling = False  # the task is inside a handler: a lost connection must not cancel it (see connection_lost)
        self.lost = False
        self.reading_paused = False
        self.muted_until = 0.0  # monotonic time until which a quota throttle mutes this connection
        self.sock: Any = None
        self.held: list[bytes] = []  # responses not yet written, in order (see _write)
        self.flush_scheduled = False
        # Once a response has to wait, every later one queues behind it here until the writer
        # task has sent it: outputs, _Owed entries and _CLOSE, in request order.
        self.owed: collections.deque[Any] = collections.deque()
        self.owed_room = asyncio.Event()
        self.writer: asyncio.Task | None = None
        self.sending_file: asyncio.Task | None = None  # the task inside loop.sendfile, if any
        self.security: ConnectionSecurity | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = self.sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.security = ConnectionSecurity(self.server.listener, self.peer, transport.get_extra_info("peercert"),
                                           self.server.credentials.lookup, self._token_auth)
        self.server.connections.add(self)
        self.task = asyncio.get_running_loop().create_task(self._guarded(self._process(), "serving"))

    def _token_auth(self, mechanism: str, token_id: str) -> Any:
        """SCRAM `tokenauth=true`: the token's credential and owner, None when tokens are off or it is unknown."""
        tokens = self.server.broker.tokens
        return None if tokens is None else tokens.auth(mechanism, token_id)

    def _cork(self, on: bool) -> bool:
        """Set TCP_CORK on the connection's socket; False if that is not possible here."""
        sock = self.sock
        if sock is None or not hasattr(socket, "TCP_CORK"):
            return False
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1 if on else 0)
        except OSError:
            return False
        return True

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.decoder.get_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        try:
            frames = self.decoder.buffer_updated(nbytes)
        except FrameTooLarge as exc:
            log.warning("Closing connection from %s: %s (socket.request.max.bytes)", self.peer, exc)
            self.close()
            return
        if frames:
            for f in frames:
                self.queue.append(f)
                self.queued_bytes += len(f)
            self.ready.set()
            if self.queued_bytes > _MAX_QUEUED_BYTES and not self.reading_paused and self.transport:
                self.transport.pause_reading()
                self.reading_paused = True

    def pause_writing(self) -> None:
        self.can_write.clear()

    def resume_writing(self) -> None:
        self.can_write.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.can_write.set()
        self.lost = True
        self.owed.clear()  # nobody to send them to; their records stay appended
        self.queue.clear()
        tasks = [t for t in (self.task, self.writer) if t is not None and not t.done()]
        if not tasks:
            self.server.connections.discard(self)
            return

        def unwound(_t: asyncio.Task) -> None:
            if all(t.done() for t in tasks):
                self.server.connections.discard(self)

        # The loop holds tasks weakly: stay referenced until the cancelled tasks have unwound
        # (else one may be collected mid-cancel: "Task was destroyed but it is pending").
        for t in tasks:
            t.add_done_callback(unwound)
            # A handler runs to its end, as Kafka's request handlers do when the client goes away: cancelled
            # between two awaits it would leave half-made state behind (a transaction marked pending Prepare*
            # whose record was written, which answered CONCURRENT_TRANSACTIONS for ever: the stalled ctp runs).
            # Its answer goes nowhere; _process stops after it. Waiting for a frame or an answer is cancelled.
            if not (t is self.task and self.handling):
                t.cancel()

    def close(self) -> None:
        """Drop the connection (protocol violation or shutdown), after the responses already made."""
        if self.transport is not None and not self.transport.is_closing():
            if self.sending_file is not None:
                # Closing a transport under loop.sendfile makes asyncio (3.11) log an
                # InvalidStateError from its connection_lost: stop the sendfile, then close.
                self.sending_file.add_done_callback(lambda _t: self.close())
                self.sending_file.cancel()
                return
            self._flush_held()
            self.transport.close()

    def _flush_held(self) -> None:
        """Write the responses held back by _write (one send for all of them)."""
        self.flush_scheduled = False
        held = self.held
        if held:
            self.held = []
            if self.transport is not None and not self.transport.is_closing():
                self.transport.write(held[0] if len(held) == 1 else b"".join(held))

    async def _next_frame(self) -> bytearray | memoryview:
        while not self.queue:
            self.ready.clear()
            await self.ready.wait()
        frame = self.queue.popleft()
        self.queued_bytes -= len(frame)
        if self.reading_paused and self.queued_bytes < _MAX_QUEUED_BYTES // 2 and self.transport:
            self.transport.resume_reading()
            self.reading_paused = False
        return frame

    async def _process(self) -> None:
        while True:
            while len(self.owed) >= _MAX_OWED:  # back-pressure: handle nothing more until one is sent
                self.owed_room.clear()
                await self.owed_room.wait()
            if self.muted_until:
                await self._wait_unmuted()
            frame = await self._next_frame()
            self.handling = True
            try:
                out = await self._handle(frame)
            finally:
                self.handling = False
            if self.lost:
                return
            self.decoder.recycle(frame)  # nothing of the request is needed any more
            if out is None:
                continue
            if self.security.close_after_reply:  # failed authentication: this answer, then close
                self._pause_reading()
                self._owe(out)
                self._owe(_CLOSE)
                return
            if out is False:
                if not self.owed:
                    self.close()
                    return
                out = _CLOSE  # after the responses owed for the requests before the garbage
                self._pause_reading()
            if self.owed or isinstance(out, _Owed) or out is _CLOSE:
                self._owe(out)
                if out is _CLOSE:
                    return
                continue
            await self._write(out)

    async def _wait_unmuted(self) -> None:
        """Sit out a quota's throttle time (Kafka mutes the channel): no request is read or handled."""
        wait = self.muted_until - time.monotonic()
        self.muted_until = 0.0
        if wait > 0:
            self._pause_reading()
            await asyncio.sleep(wait)
            if self.reading_paused and self.queued_bytes < _MAX_QUEUED_BYTES // 2 and self.transport:
                self.transport.resume_reading()
                self.reading_paused = False

    async def _guarded(self, work: Any, doing: str) -> None:
        """Run one of the connection's tasks; a failure closes the connection, and only a bug is logged loudly."""
        try:
            await work
        except asyncio.CancelledError:
            pass
        except (ConnectionError, OSError) as exc:
            log.debug("Connection from %s failed: %s", self.peer, exc)
            self.close()
        except Exception:
            log.exception("Unexpected error %s %s; closing the connection", doing, self.peer)
            self.close()

    def _pause_reading(self) -> None:
        if not self.reading_paused and self.transport is not None:
            self.transport.pause_reading()
            self.reading_paused = True

    def _owe(self, entry: Any) -> None:
        """Queue a response behind the ones owed, and make sure the writer task runs."""
        self.owed.append(entry)
        if self.writer is None or self.writer.done():
            self.writer = asyncio.get_running_loop().create_task(self._guarded(self._send_owed(), "answering"))

    async def _send_owed(self) -> None:
        """Send the responses owed, in order, each once it is ready; ends when none is left."""
        owed = self.owed
        while owed:
            entry = owed[0]
            if entry is _CLOSE:
                owed.clear()
                self.close()
                return
            out = entry
            if isinstance(entry, _Owed):
                resp = await entry.later.finish()
                REQUESTS.record(entry.key, entry.header.api_version, entry.started, getattr(resp, "error_code", 0))
                out = None if resp is None else _output(entry.header, resp)
            if out is not None:
                # More owed behind this one: hold it so that responses completed together
                # (one high-watermark advance) leave in one send.
                await self._write(out, more=len(owed) > 1)
            if owed and owed[0] is entry:  # (connection_lost empties the queue)
                owed.popleft()
            self.owed_room.set()

    async def _handle(self, frame: bytearray | memoryview) -> Any:
        try:
            header = parse_request_header(frame)
        except MalformedRequest as exc:
            log.warning("Closing connection from %s: %s", self.peer, exc)
            return False
        refused = self.security.refuse(header.api_key)
        if refused is not None:
            log.warning("Closing connection from %s: %s", self.peer, refused)
            return False
        h = HANDLERS.get(header.api_key)
        if h is None:
            log.warning("Closing connection from %s: unsupported API key %d", self.peer, header.api_key)
            return False
        levels = self.server.broker.features.levels
        if not h.min_version <= header.api_version <= h.top(levels):
            if header.api_key == ApiKey.ApiVersions:
                return api_versions_unsupported(header, advertised_ranges(levels))
            log.warning("Closing connection from %s: %s v%d is not supported (v%d-%d)", self.peer,
                        api_name(header.api_key), header.api_version, h.min_version, h.top(levels))
            return False
        try:
            req = decode_request_body(header, frame) if h.decode is None else h.decode(header, frame)
        except MalformedRequest as exc:
            log.warning("Closing connection from %s: %s", self.peer, exc)
            return False
        ctx = RequestContext(self.server.broker, header, self.peer, self.security, len(frame))
        if header.api_key in _CLUSTER_ACTION_APIS and not allowed(ctx, "CLUSTER_ACTION", "CLUSTER"):
            # Only brokers send these: a client without CLUSTER_ACTION loses the connection.
            log.warning("Closing connection from %s: %s is not allowed %s (CLUSTER_ACTION)", self.peer,
                        self.security.principal, api_name(header.api_key))
            return False
        started = time.perf_counter()
        key = FETCH_FOLLOWER if header.api_key == ApiKey.Fetch and _fetch_replica(req, header.api_version) >= 0 else header.api_key
        if charged(ctx, key == FETCH_FOLLOWER):  # KIP-124: the handler's time on the loop counts
            timed = BusyTime(h.func(ctx, req))
            resp = await timed
            throttle = request_throttle(ctx, timed.busy)
            ctx.throttle_ms = max(ctx.throttle_ms, throttle)  # a Produce's later response reads it
            resp = with_throttle(resp, ctx.throttle_ms, header)
        else:
            resp = await h.func(ctx, req)
        if ctx.throttle_ms > 0:  # KIP-219: the response goes now, then nothing is read for the throttle time
            self.muted_until = time.monotonic() + ctx.throttle_ms / 1000
        if isinstance(resp, Later):
            return _Owed(header, resp, key, started)
        REQUESTS.record(key, header.api_version, started, getattr(resp, "error_code", 0))
        return None if resp is None else _output(header, resp)

    async def _write(self, out: Any, more: bool = False) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if isinstance(out, (bytes, bytearray)):
            if self.queue or more:
                # More requests already arrived (a pipelining client) or more responses are owed:
                # hold this response and send it with the next ones -- one send and one client
                # wake-up per burst, not per response. If a later one has to wait (long poll,
                # acks=all), the callback sends the held responses as soon as the loop runs, so
                # none is delayed by it.
                self.held.append(out)
                if not self.flush_scheduled:
                    self.flush_scheduled = True
                    asyncio.get_running_loop().call_soon(self._flush_held)
                return
            if self.held:
                self.held.append(out)
                self._flush_held()
            else:
                transport.write(out)
        else:
            self._flush_held()
            # Cork while a response goes out in pieces (header bytes, then sendfile): the client
            # then gets one segment train and one wake-up per response instead of a tiny header
            # segment first. Uncorking pushes whatever is still held.
            corked = self._cork(True) if len(out) > 1 else False
            try:
                for part in out:
                    if isinstance(part, (bytes, bytearray)):
                        transport.write(part)
                    else:
                        self.sending_file = asyncio.current_task()
                        try:
                            await self.server.send_file_chunk(transport, part)
                        finally:
                            self.sending_file = None
            finally:
                if corked:
                    self._cork(False)
        if not self.can_write.is_set():
            await self.can_write.wait()


def _output(header: RequestHeader, resp: Any) -> Any:
    """What goes on the wire for a handler's response: raw parts and bytes as they are, messages encoded."""
    if isinstance(resp, (list, bytes)):
        return resp
    return encode_response(header, resp)


class SocketServer:
    """Accepts client connections on one of the broker's listeners (TLS when the listener uses it)."""

    def __init__(self, broker: BrokerServices, credentials: CredentialStore, host: str, port: int,
                 max_request_size: int, listener: Any = None) -> None:
        self.broker = broker  # what its requests' handlers are given
        self.credentials = credentials  # SCRAM logins on this listener
        self.listener = listener  # a pylog.security.settings.ListenerSecurity (None: plain, unnamed)
        self.host, self.port = host, port
        self.max_request_size = max_request_size
        self.connections: set[KafkaConnection] = set()
        self.server: asyncio.base_events.Server | None = None
        self._sendfile_ok = True
        load_all()

    async def start(self) -> int:
        """Listen; returns the bound port (useful with port 0)."""
        loop = asyncio.get_running_loop()
        tls = None if self.listener is None else self.listener.ssl_context
        self.server = await loop.create_server(lambda: KafkaConnection(self), self.host or None, self.port,
                                               reuse_address=True, backlog=512, ssl=tls,
                                               ssl_handshake_timeout=10 if tls else None)
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    async def send_file_chunk(self, transport: asyncio.Transport, chunk: Any) -> None:
        """Send part of a segment file: sendfile when the loop can, else read and write.

        If the file shrank since the read was planned (truncation, retention) or was swapped for a
        compacted one, the response can't be completed; the connection is dropped so the client
        never sees a short or wrong frame.
        """
        loop = asyncio.get_running_loop()
        try:
            with open(chunk.path, "rb") as f:
                if getattr(chunk, "inode", 0) and os.fstat(f.fileno()).st_ino != chunk.inode:
                    raise ConnectionError(f"{chunk.path} was replaced by the log cleaner while being sent")
                if self._sendfile_ok:
                    try:
                        sent = await loop.sendfile(transport, f, chunk.position, chunk.size, fallback=False)
                        if sent != chunk.size:
                            raise ConnectionError(f"{chunk.path} shrank while being sent")
                        return
                    except (NotImplementedError, asyncio.SendfileNotAvailableError, RuntimeError):
                        self._sendfile_ok = False  # e.g. uvloop: fall back for good
                done = _sendfile_direct(transport, f.fileno(), chunk.position, chunk.size)
                data = os.pread(f.fileno(), chunk.size - done, chunk.position + done) if done < chunk.size else b""
        except FileNotFoundError as exc:
            raise ConnectionError(f"segment vanished while being sent: {exc}") from exc
        except OSError as exc:
            if exc.filename == chunk.path:  # opening the segment failed: the log dir is failing (KIP-112)
                self.broker.storage_failed(chunk.path, exc)
            raise
        if done + len(data) != chunk.size:
            raise ConnectionError(f"{chunk.path} shrank while being sent")
        if data:
            transport.write(data)

    async def stop(self) -> None:
        """Stop accepting and close every connection."""
        if self.server is not None:
            self.server.close()
        for c in list(self.connections):
            c.close()
        if self.server is not None:
            try:
                await asyncio.wait_for(self.server.wait_closed(), 5)
            except asyncio.TimeoutError:
                pass


def _sendfile_direct(transport: asyncio.Transport, fd: int, position: int, size: int) -> int:
    """Bytes of the file range the kernel took straight from the page cache (os.sendfile on the socket).

    For loops without loop.sendfile (uvloop): only when the transport holds nothing unsent, so these
    bytes cannot overtake buffered ones, and never under TLS. Stops where the socket would block;
    the caller writes the rest through the transport. 0 at the end of the file (it shrank): the
    caller finds the range short.
    """
    if transport.get_write_buffer_size() or transport.get_extra_info("sslcontext") is not None:
        return 0
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    out, sent = sock.fileno(), 0
    while sent < size:
        try:
            n = os.sendfile(out, fd, position + sent, size - sent)
        except BlockingIOError:
            break
        if n == 0:
            break
        sent += n
    return sent


def _fetch_replica(req, version: int) -> int:
    """A Fetch's replica id: top-level before v15, in ReplicaState from v15 (KIP-903); -1 for a consumer."""
    state = getattr(req, "replica_state", None) if version >= 15 else None
    return state.replica_id if state is not None else getattr(req, "replica_id", -1)
