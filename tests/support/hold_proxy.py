"""A loopback TCP proxy that delays the requests passing through it: while held, each request frame from
the client waits in the proxy; `release()` passes them on in order (the responses come back untouched).

This is a network delay with its length chosen by the test (from `hold()` to `release()`) rather than a
timer, so a delayed Produce lands exactly after the EndTxn or AddPartitionsToTxn the test sends meanwhile on
another connection: the Bufstream/Jepsen delayed-message anomaly, without racing a clock. (This kernel has no
netem; pylog/chaos/nemesis/link.py's delay falls back to a slow link for the same reason.)
"""

from __future__ import annotations

import socket
import threading

from support.proxy import _close, _read_frame


class HoldingProxy:
    """Forwards 127.0.0.1:`port` to 127.0.0.1:`target_port`, holding client requests while `hold()` is on."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.passed = 0  # request frames passed on to the broker
        self._open = threading.Event()
        self._open.set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self) -> None:
        """From now on requests wait in the proxy."""
        self._open.clear()

    def release(self) -> None:
        """Pass the held requests on (and every later one at once)."""
        self._open.set()

    def close(self) -> None:
        """Release, stop accepting and cut every proxied connection."""
        self._closed = True
        self._open.set()
        self._listener.close()
        for s in self._sockets:
            _close(s)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port), timeout=30)
            server.settimeout(None)
            self._sockets += [client, server]
            threading.Thread(target=self._upstream, args=(client, server), daemon=True).start()
            threading.Thread(target=self._downstream, args=(client, server), daemon=True).start()

    def _upstream(self, client: socket.socket, server: socket.socket) -> None:
        while (frame := _read_frame(client)) is not None:
            self._open.wait(60)  # bounded: a test that forgets to release still ends
            try:
                server.sendall(frame)
            except OSError:
                break
            self.passed += 1
        _close(client, server)

    def _downstream(self, client: socket.socket, server: socket.socket) -> None:
        while (frame := _read_frame(server)) is not None:
            try:
                client.sendall(frame)
            except OSError:
                break
        _close(client, server)
