"""ZkConnection: a kazoo session with Kafka's connect-string rules, bounded retries, pipelined bulk
reads/multis, session events and watch helpers. Kafka-specific operations live in client.py.

Threading (kazoo's SequentialThreadingHandler): kazoo runs a connection thread and one callback
thread. Watch callbacks run on the callback thread, one at a time; a callback that blocks delays every
other watch. Session listeners registered here run on a dedicated thread of ours, in order, so they
may call ZooKeeper; they must still return quickly (session_events.py). The controller/broker should
only post events to their asyncio loop from callbacks (loop.call_soon_threadsafe).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from kazoo import exceptions as kz
from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState, ZnodeStat
from kazoo.security import ACL

from pylog.metrics.recorders import ZK as ZK_METRICS
from pylog.zk import errors
from pylog.zk.acls import AclPolicy
from pylog.zk.paths import prefixes
from pylog.zk._multiread import GET_CHILDREN, GET_DATA, start_multi_read
from pylog.zk.ops import ANY_VERSION, CheckOp, CreateOp, DeleteOp, Op, SetDataOp
from pylog.zk.session import SessionCredentials
from pylog.zk.session_events import SessionEvent, SessionEventDispatcher, SessionListener

__all__ = ["MULTI_READ_BATCH", "SessionEvent", "WatchHandle", "ZkConnection", "parse_connect_string"]

log = logging.getLogger(__name__)

MULTI_READ_BATCH = 1000  # reads per multiRead request (~150 KB replies for partition states)


def parse_connect_string(connect: str) -> tuple[str, str | None]:
    """Split 'host:port[,host:port][/chroot]' into (hosts, chroot or None), as Kafka's zookeeper.connect."""
    if not connect or not isinstance(connect, str):
        raise ValueError(f"Invalid ZooKeeper connect string: {connect!r}")
    idx = connect.find("/")
    if idx < 0:
        return connect, None
    hosts, chroot = connect[:idx], connect[idx:].rstrip("/")
    if not hosts:
        raise ValueError(f"Invalid ZooKeeper connect string (no hosts): {connect!r}")
    if "//" in chroot:
        raise ValueError(f"Invalid chroot in ZooKeeper connect string: {connect!r}")
    return hosts, chroot or None


class WatchHandle:
    """Returned by watch_children/watch_data; cancel() stops further callbacks."""

    def __init__(self, path: str):
        self.path = path
        self.cancelled = False

    def cancel(self) -> None:
        """Stop calling the callback (kazoo drops the recipe at the next event)."""
        self.cancelled = True


class ZkConnection:
    """One ZooKeeper session. Sync methods retry on connection loss until connected again (bounded)."""

    def __init__(self, connect: str, session_timeout_ms: int = 18000, connection_timeout_ms: int | None = None,
                 *, session_file: str | None = None, create_chroot: bool = True, multi_read: bool = True,
                 auth_data: Sequence[tuple[str, str]] = (), acl_policy: AclPolicy | None = None):
        self.connect = connect
        self.hosts, self.chroot = parse_connect_string(connect)
        self.session_timeout_ms = session_timeout_ms
        # Kafka's zookeeper.connection.timeout.ms defaults to the session timeout.
        self.connection_timeout_ms = connection_timeout_ms or session_timeout_ms
        self.session_file = session_file
        self._create_chroot = create_chroot
        self.multi_read = multi_read  # bulk reads as multiRead batches (ZooKeeper >= 3.6)
        # (scheme, credential) pairs sent on every (re)connect, e.g. ("digest", "user:password")
        self.auth_data = list(auth_data)
        # path -> ACL for every znode this session creates; None leaves ZooKeeper's open default
        self.acl_policy = acl_policy
        self._kazoo = self._new_kazoo(connect)
        self._connected = threading.Event()
        self._closing = False
        self._session_id: int | None = None
        self._session_events = SessionEventDispatcher()

    def _new_kazoo(self, hosts: str) -> KazooClient:
        """A kazoo client that reconnects quickly (backoff capped at 1 s) and forever."""
        retry = {"max_tries": -1, "delay": 0.05, "backoff": 2, "max_delay": 1.0}
        return KazooClient(hosts=hosts, timeout=self.session_timeout_ms / 1000.0,
                           connection_retry=retry, command_retry=retry, auth_data=self.auth_data or None)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "ZkConnection":
        """Create the chroot if missing (like Kafka), connect, and wait up to the connection timeout.

        Starting a started client does nothing, so `with ZkClient(...).start() as zk:` is fine too.
        """
        if self._session_events.running:
            return self
        if self._closing:
            raise errors.ClientClosedError("A closed ZooKeeper client cannot be restarted; create a new one")
        timeout = self.connection_timeout_ms / 1000.0
        if self.chroot and self._create_chroot:
            root = self._new_kazoo(self.hosts)
            try:
                root.start(timeout=timeout)
                # each level with its own ACL (kazoo's ensure_path would give the parents the chroot's)
                for prefix in prefixes(self.chroot) if self.acl_policy else [self.chroot]:
                    root.ensure_path(prefix, self._acl(prefix))
            except root.handler.timeout_exception:
                raise errors.ZkTimeoutError(
                    f"Timed out after {timeout:g}s connecting to ZooKeeper at {self.hosts}") from None
            finally:
                root.stop()
                root.close()
        self._session_events.start()
        self._kazoo.add_listener(self._on_kazoo_state)
        try:
            self._kazoo.start(timeout=timeout)
        except self._kazoo.handler.timeout_exception:
            self._session_events.stop()
            raise errors.ZkTimeoutError(
                f"Timed out after {timeout:g}s connecting to ZooKeeper at {self.connect}") from None
        return self

    def close(self) -> None:
        """Close the session (its ephemeral znodes go at once) and stop the threads."""
        if self._closing:
            return
        self._closing = True
        try:
            self._kazoo.stop()
            self._kazoo.close()
        finally:
            self._session_events.stop()

    def __enter__(self) -> "ZkConnection":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def kazoo(self) -> KazooClient:
        """The underlying kazoo client (escape hatch; prefer the methods here)."""
        return self._kazoo

    @property
    def connected(self) -> bool:
        """True while the session is connected."""
        return self._connected.is_set()

    @property
    def session_id(self) -> int | None:
        """The current (or last) session id; ephemeralOwner of our ephemeral znodes."""
        return self._session_id

    def session_credentials(self) -> SessionCredentials:
        """(session id, password) of the live session, to let another process expire it in tests."""
        cid = self._kazoo.client_id
        if cid is None:
            raise errors.ConnectionLossError("Not connected to ZooKeeper")
        return SessionCredentials(cid[0], bytes(cid[1]))

    def wait_until_connected(self, timeout: float | None = None) -> None:
        """Block until connected; ZkTimeoutError after timeout (default: the connection timeout)."""
        limit = self.connection_timeout_ms / 1000.0 if timeout is None else timeout
        if self._closing:
            raise errors.ClientClosedError("ZooKeeper client is closed")
        if not self._connected.wait(max(limit, 0.0)):
            raise errors.ZkTimeoutError(f"Timed out after {limit:g}s waiting to reconnect to ZooKeeper at "
                                        f"{self.connect}")

    # ------------------------------------------------------------------ session events

    def add_session_listener(self, listener: SessionListener) -> None:
        """Call listener(SessionEvent) on every session change (on our event thread, in order)."""
        self._session_events.add(listener)

    def remove_session_listener(self, listener: SessionListener) -> None:
        """Stop calling a listener."""
        self._session_events.remove(listener)

    def _on_kazoo_state(self, state: KazooState) -> None:
        """kazoo's state listener: runs on kazoo's connection thread, so no blocking and no ZK calls."""
        if state == KazooState.CONNECTED:
            cid = self._kazoo.client_id
            sid = cid[0] if cid else None
            if self._session_id is None:
                event = SessionEvent.CONNECTED
            elif sid == self._session_id:
                event = SessionEvent.RECONNECTED
            else:
                event = SessionEvent.NEW_SESSION
            self._session_id = sid
            if cid and self.session_file:
                self._write_session_file(SessionCredentials(cid[0], bytes(cid[1])))
            self._connected.set()
        elif state == KazooState.SUSPENDED:
            self._connected.clear()
            event = SessionEvent.SUSPENDED
        else:  # LOST: our close(), or the server expired the session
            self._connected.clear()
            event = SessionEvent.CLOSED if self._closing else SessionEvent.EXPIRED
        log.info("ZooKeeper session %s: %s", hex(self._session_id or 0), event.value)
        ZK_METRICS.events[event.value] += 1
        self._session_events.post(event)

    def _write_session_file(self, creds: SessionCredentials) -> None:
        """Publish the session credentials (tests expire the session from outside the process)."""
        try:
            creds.write(self.session_file)  # type: ignore[arg-type]
        except OSError:
            log.exception("Could not write ZooKeeper session file %s", self.session_file)

    # ------------------------------------------------------------------ request plumbing

    def _deadline(self) -> float:
        """When a retried request gives up: connection timeout from now (Kafka's waitUntilConnected)."""
        return time.monotonic() + self.connection_timeout_ms / 1000.0

    def _pipeline(self, requests: Sequence[tuple[Any, str, Callable[[], Any]]]) -> dict[Any, Any]:
        """Send every request before waiting for any, retrying the ones that hit connection loss.

        requests: (key, path, start) where start() returns a kazoo IAsyncResult. Returns key -> result or
        the (translated) exception of that request; only timeouts and a closed client raise.
        """
        deadline = self._deadline()
        started_at = time.perf_counter()
        results: dict[Any, Any] = {}
        pending = list(requests)
        while pending:
            if self._closing:
                raise errors.ClientClosedError("ZooKeeper client is closed")
            started = [(key, path, start, start()) for key, path, start in pending]
            retry = []
            for key, path, start, async_result in started:
                try:
                    results[key] = async_result.get(timeout=max(deadline - time.monotonic(), 0.001))
                except kz.ConnectionLoss:
                    retry.append((key, path, start))
                except self._kazoo.handler.timeout_exception:
                    raise errors.ZkTimeoutError(f"Timed out waiting for ZooKeeper to answer for {path}") from None
                except kz.ConnectionClosedError:
                    raise errors.ClientClosedError(f"ZooKeeper client closed during a request for {path}") from None
                except (kz.SessionExpiredError, kz.AuthFailedError) as e:
                    # The session is gone, not just this request: fail the whole call (the caller resigns
                    # or re-registers on the session event) rather than report it per znode.
                    raise errors.translate(e, path) from None
                except Exception as e:  # a per-request result such as NoNode: the caller decides
                    results[key] = errors.translate(e, path)
            if retry:
                self.wait_until_connected(deadline - time.monotonic())
            pending = retry
        ZK_METRICS.latency.observe((time.perf_counter() - started_at) * 1000)  # Kafka's ZooKeeperRequestLatencyMs
        return results

    def _call(self, path: str, start: Callable[[], Any]) -> Any:
        """One request through _pipeline; raises its error."""
        result = self._pipeline([(0, path, start)])[0]
        if isinstance(result, BaseException):
            raise result
        return result

    # ------------------------------------------------------------------ basic operations

    def get(self, path: str) -> tuple[bytes, ZnodeStat]:
        """(data, stat) of a znode; NoNodeError if absent."""
        data, stat = self._call(path, lambda: self._kazoo.get_async(path))
        return data or b"", stat

    def get_or_none(self, path: str) -> tuple[bytes, ZnodeStat] | None:
        """(data, stat), or None if the znode does not exist."""
        try:
            return self.get(path)
        except errors.NoNodeError:
            return None

    def exists(self, path: str) -> ZnodeStat | None:
        """The znode's stat, or None."""
        return self._call(path, lambda: self._kazoo.exists_async(path))

    def get_children(self, path: str) -> list[str]:
        """Child names (unsorted, as ZooKeeper returns them); NoNodeError if absent."""
        return list(self._call(path, lambda: self._kazoo.get_children_async(path)))

    def _acl(self, path: str) -> list[ACL] | None:
        """The ACL a new znode at path gets (None: kazoo's open default)."""
        return None if self.acl_policy is None else self.acl_policy(path)

    def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False, sequence: bool = False,
               make_parents: bool = False) -> tuple[str, ZnodeStat]:
        """Create a znode; returns (created path, stat). NodeExistsError if it exists."""
        if make_parents and self.acl_policy is not None:
            # kazoo's makepath would give every parent this znode's ACL; each path gets its own instead.
            parent = path.rsplit("/", 1)[0]
            if parent:
                self.ensure_path(parent)
            make_parents = False
        return self._call(path, lambda: self._kazoo.create_async(
            path, data, acl=self._acl(path), ephemeral=ephemeral, sequence=sequence, makepath=make_parents,
            include_data=True))

    def set(self, path: str, data: bytes, version: int = ANY_VERSION) -> ZnodeStat:
        """Set data, conditional on version unless -1; BadVersionError / NoNodeError on failure."""
        return self._call(path, lambda: self._kazoo.set_async(path, data, version))

    def delete(self, path: str, version: int = ANY_VERSION) -> None:
        """Delete one znode (no children), conditional on version unless -1."""
        self._call(path, lambda: self._kazoo.delete_async(path, version))

    def ensure_path(self, path: str) -> None:
        """Create a persistent path and its parents if missing (Kafka's makeSurePersistentPathExists)."""
        if self.acl_policy is None:
            self._call(path, lambda: self._kazoo.ensure_path_async(path))
            return
        for prefix in prefixes(path):
            self._call(prefix, lambda prefix=prefix: self._kazoo.ensure_path_async(prefix, self._acl(prefix)))

    def set_acls_many(self, acls: Mapping[str, list[ACL]]) -> dict[str, BaseException | None]:
        """Set each znode's ACL (any version), pipelined: path -> None, or the error for that znode."""
        raw = self._pipeline([(p, p, (lambda p=p, a=a: self._kazoo.set_acls_async(p, a))) for p, a in acls.items()])
        return {p: r if isinstance(r, BaseException) else None for p, r in raw.items()}

    def tree_levels(self, path: str) -> list[list[str]]:
        """The subtree under path, breadth-first, one pipelined round trip per level ([] if absent)."""
        if self.get_children_many([path])[path] is None:
            return []
        levels: list[list[str]] = [[path]]
        while True:
            children = self.get_children_many(levels[-1])
            below = [f"{p.rstrip('/')}/{c}" for p in levels[-1] for c in (children[p] or [])]
            if not below:
                return levels
            levels.append(below)

    def delete_recursive(self, path: str) -> bool:
        """Delete a znode and everything below it, deepest level first (pipelined); False if absent."""
        return self._delete_tree(path, self.multi_many)

    def _delete_tree(self, path: str, run: Callable[[dict[str, list[Op]]], Mapping[str, Any]]) -> bool:
        """Delete a subtree level by level with run (multi_many or a fenced variant); gone nodes are fine."""
        levels = self.tree_levels(path)
        for level in reversed(levels):
            for result in run({p: [DeleteOp(p)] for p in level}).values():
                if isinstance(result, BaseException) and not isinstance(result, errors.NoNodeError):
                    raise result
        return bool(levels)

    def _read_many(self, op: int, paths: Iterable[str]) -> dict[str, Any]:
        """Pipelined reads: path -> kazoo result, or the (translated) error of that read."""
        unique = list(dict.fromkeys(paths))
        if self.multi_read and unique:
            batches = [unique[i:i + MULTI_READ_BATCH] for i in range(0, len(unique), MULTI_READ_BATCH)]
            raw = self._pipeline([(i, batch[0], (lambda batch=batch: start_multi_read(self._kazoo, op, batch)))
                                  for i, batch in enumerate(batches)])
            if not any(isinstance(r, kz.UnimplementedError) for r in raw.values()):
                out: dict[str, Any] = {}
                for i, batch in enumerate(batches):
                    if isinstance(raw[i], BaseException):
                        raise raw[i]
                    for path, item in zip(batch, raw[i]):
                        out[path] = errors.translate(item, path) if isinstance(item, BaseException) else item
                return out
            log.warning("ZooKeeper at %s has no multiRead (< 3.6); reading one znode per request", self.hosts)
            self.multi_read = False
        start = self._kazoo.get_async if op == GET_DATA else self._kazoo.get_children_async
        return self._pipeline([(p, p, (lambda p=p: start(p))) for p in unique])

    def _collect(self, op: int, paths: Iterable[str], convert: Callable[[Any], Any]) -> dict[str, Any]:
        """_read_many, then None for missing znodes, convert(result) otherwise; other errors raise."""
        out: dict[str, Any] = {}
        for path, result in self._read_many(op, paths).items():
            if isinstance(result, errors.NoNodeError):
                out[path] = None
            elif isinstance(result, BaseException):
                raise result
            else:
                out[path] = convert(result)
        return out

    def get_many(self, paths: Iterable[str]) -> dict[str, tuple[bytes, ZnodeStat] | None]:
        """Read many znodes at once; path -> (data, stat), or None where the znode is missing.

        Reads go out as multiRead batches of MULTI_READ_BATCH, all pipelined (kazoo *_async
        requests, one per znode, when multi_read is off or unsupported).
        """
        return self._collect(GET_DATA, paths, lambda r: (r[0] or b"", r[1]))

    def get_children_many(self, paths: Iterable[str]) -> dict[str, list[str] | None]:
        """Children of many znodes, pipelined like get_many; None where the znode is missing."""
        return self._collect(GET_CHILDREN, paths, list)

    # ------------------------------------------------------------------ multi

    def _start_multi(self, ops: Sequence[Op]) -> Any:
        """Begin a kazoo transaction for ops; returns its IAsyncResult."""
        tx = self._kazoo.transaction()
        for op in ops:
            if isinstance(op, CreateOp):
                tx.create(op.path, op.data, acl=self._acl(op.path), ephemeral=op.ephemeral, sequence=op.sequence)
            elif isinstance(op, SetDataOp):
                tx.set_data(op.path, op.data, op.version)
            elif isinstance(op, DeleteOp):
                tx.delete(op.path, op.version)
            elif isinstance(op, CheckOp):
                tx.check(op.path, op.version)
            else:
                raise TypeError(f"Not a multi op: {op!r}")
        return tx.commit_async()

    @staticmethod
    def multi_failure(ops: Sequence[Op], results: Sequence[Any]) -> BaseException | None:
        """The error of the op that made a multi fail (with .op_index and .op set), or None if it succeeded."""
        for i, result in enumerate(results):
            if isinstance(result, BaseException) and not isinstance(result, (kz.RolledBackError,
                                                                              kz.RuntimeInconsistency)):
                err = errors.translate(result, ops[i].path)
                err.op_index = i  # type: ignore[attr-defined]
                err.op = ops[i]  # type: ignore[attr-defined]
                return err
        return None

    def multi(self, ops: Sequence[Op]) -> list[Any]:
        """Run ops atomically; returns per-op results, or raises the failing op's error (.op_index, .op)."""
        ops = list(ops)
        results = self._call(ops[0].path if ops else "/", lambda: self._start_multi(ops))
        failure = self.multi_failure(ops, results)
        if failure is not None:
            raise failure
        return list(results)

    def multi_many(self, batches: Mapping[Any, Sequence[Op]]) -> dict[Any, list[Any] | BaseException]:
        """Many independent multis, pipelined: key -> results, or the failing op's error."""
        frozen = {key: list(ops) for key, ops in batches.items()}
        raw = self._pipeline([(key, ops[0].path, (lambda ops=ops: self._start_multi(ops)))
                              for key, ops in frozen.items()])
        out: dict[Any, list[Any] | BaseException] = {}
        for key, ops in frozen.items():
            result = raw[key]
            if isinstance(result, BaseException):
                out[key] = result
            else:
                out[key] = self.multi_failure(ops, result) or list(result)
        return out

    # ------------------------------------------------------------------ watches

    def watch_children(self, path: str, callback: Callable[[list[str]], Any], *,
                       create: bool = True) -> WatchHandle:
        """Call callback(children) now and after every change, surviving reconnects and session expiry.

        The first call happens in this thread before returning; later ones on kazoo's callback thread.
        kazoo stops a children watch whose znode is deleted, so the path is created first (create=True).
        """
        if create:
            self.ensure_path(path)
        handle = WatchHandle(path)

        def on_change(children: list[str]) -> bool | None:
            if handle.cancelled:
                return False
            callback(list(children))
            return None

        self._kazoo.ChildrenWatch(path, on_change)
        return handle

    def watch_data(self, path: str,
                   callback: Callable[[bytes | None, ZnodeStat | None], Any]) -> WatchHandle:
        """Call callback(data, stat) now and on every create/change/delete ((None, None) when absent)."""
        handle = WatchHandle(path)

        # The third parameter makes kazoo pass the event instead of retrying on TypeError, which would
        # call the callback twice when it raises a TypeError of its own.
        def on_change(data: bytes | None, stat: ZnodeStat | None, event: Any = None) -> bool | None:
            if handle.cancelled:
                return False
            callback(data, stat)
            return None

        self._kazoo.DataWatch(path, on_change)
        return handle

