"""Raw-socket helpers for integration tests that speak the Kafka protocol byte by byte."""

from __future__ import annotations

import socket
import struct


def connect(cluster, timeout: float = 20) -> socket.socket:
    """A plain TCP connection to the cluster's first broker."""
    b = next(iter(cluster.brokers.values()))
    return socket.create_connection(("127.0.0.1", b.port), timeout=timeout)


def read_frame(sock: socket.socket) -> bytes:
    """One size-prefixed frame (without its size); ConnectionError if the peer closes first."""
    def read(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf
    (size,) = struct.unpack(">i", read(4))
    return read(size)
