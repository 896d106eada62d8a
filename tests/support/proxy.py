"""A loopback TCP proxy in front of one broker that loses Produce responses on purpose.

It also records the API key and version of every request it passes on (with drop=0 it only
records): which version a real client negotiated.

The broker handles every request it is given; for the first `drop` Produce requests the proxy
then closes the client's connection instead of passing the response on -- the client sees a
network error after the broker appended, and retries. Point the broker's advertised.listeners at
the proxy so clients use it for everything after bootstrap.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from pathlib import Path
from typing import Iterator

PRODUCE = 0


def _read_frame(sock: socket.socket) -> bytes | None:
    """One length-prefixed Kafka frame (with its length), or None at EOF."""
    head = _read_exact(sock, 4)
    if head is None:
        return None
    body = _read_exact(sock, struct.unpack(">i", head)[0])
    return None if body is None else head + body


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class DroppingProxy:
    """Forwards to 127.0.0.1:`target_port` (settable after start); loses the first `drop` Produce responses."""

    def __init__(self, drop: int) -> None:
        self.drop = drop
        self.dropped = 0
        self.target_port: int | None = None
        self.requests: list[tuple[int, int]] = []  # (api key, version) of every request passed on
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        """Stop accepting and cut every proxied connection."""
        self._closed = True
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                _close(s)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.target_port is None:
                _close(client)
                continue
            server = socket.create_connection(("127.0.0.1", self.target_port), timeout=30)
            server.settimeout(None)
            with self._lock:
                self._sockets += [client, server]
            produce_ids: set[int] = set()
            threading.Thread(target=self._upstream, args=(client, server, produce_ids), daemon=True).start()
            threading.Thread(target=self._downstream, args=(client, server, produce_ids), daemon=True).start()

    def _upstream(self, client: socket.socket, server: socket.socket, produce_ids: set[int]) -> None:
        while (frame := _read_frame(client)) is not None:
            api_key, version, correlation = struct.unpack_from(">hhi", frame, 4)
            self.requests.append((api_key, version))
            if api_key == PRODUCE:
                produce_ids.add(correlation)
            try:
                server.sendall(frame)
            except OSError:
                break
        _close(client, server)

    def _downstream(self, client: socket.socket, server: socket.socket, produce_ids: set[int]) -> None:
        while (frame := _read_frame(server)) is not None:
            (correlation,) = struct.unpack_from(">i", frame, 4)
            with self._lock:
                lose = correlation in produce_ids and self.dropped < self.drop
                if lose:
                    self.dropped += 1
            if lose:
                break
            try:
                client.sendall(frame)
            except OSError:
                break
        _close(client, server)


def _close(*socks: socket.socket) -> None:
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


@contextlib.contextmanager
def proxied_cluster(zk_connect: str, base: Path, drop: int = 0) -> Iterator[tuple]:
    """A started one-broker cluster that clients reach only through a DroppingProxy: (cluster, proxy, bootstrap).

    The broker advertises the proxy's port, so every client connection after bootstrap goes through it too; the
    proxy and the broker are stopped on the way out, whatever happened."""
    from pylog.localcluster import LocalCluster
    from pylog.zk.testing import free_port
    proxy = DroppingProxy(drop=drop)
    port = free_port()
    c = LocalCluster(base / "proxied", 1, zk_connect=zk_connect, broker_ports={0: port},
                     overrides={"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"})
    proxy.target_port = port
    try:
        c.start()
        yield c, proxy, f"127.0.0.1:{proxy.port}"
    finally:
        proxy.close()
        c.stop()
