"""Helpers for tests that need real ZooKeeper and loopback ports (used by tests/conftest.py and others).

free_port() hands out ports below Linux's ephemeral range (so outgoing connections can't take them
between our check and the server's bind) and records each one under /tmp for a while, so concurrent
test runs on the same machine don't get the same port.
"""

from __future__ import annotations

import errno
import os
import random
import re
import socket
import time
import uuid
from typing import Callable, TypeVar

from pylog.zk.server import ZooKeeperProcess, ZooKeeperStartError

T = TypeVar("T")

_PORT_RANGE = (20000, 32000)  # below net.ipv4.ip_local_port_range's default 32768
_RESERVATIONS = os.path.join("/tmp", "pylog-test-ports")
_RESERVATION_TTL_S = 600.0


def _bindable(port: int) -> bool:
    """True if nothing listens on port on loopback or the wildcard address."""
    for host in ("127.0.0.1", "0.0.0.0"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def _reserve(port: int) -> bool:
    """Atomically claim port for this process for _RESERVATION_TTL_S (stale claims are taken over)."""
    os.makedirs(_RESERVATIONS, exist_ok=True)
    path = os.path.join(_RESERVATIONS, str(port))
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError as e:
        if e.errno != errno.EEXIST:
            raise
        try:
            if time.time() - os.stat(path).st_mtime < _RESERVATION_TTL_S:
                return False
            os.unlink(path)
        except FileNotFoundError:
            pass
        return _reserve(port)
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    return True


def free_port() -> int:
    """A TCP port that is free on loopback now and not handed to any other test process recently."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(1000):
        port = rng.randrange(*_PORT_RANGE)
        if _bindable(port) and _reserve(port):
            return port
    raise RuntimeError(f"No free port found in {_PORT_RANGE}")


def wait_until(predicate: Callable[[], T], timeout: float, message: str, interval: float = 0.05) -> T:
    """Poll predicate until it returns something truthy (returned); AssertionError with message on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"Timed out after {timeout:g}s: {message}")
        time.sleep(interval)


def unique_chroot(label: str = "test") -> str:
    """A fresh chroot path like /pylog-test_create_topic-1a2b3c4d (label sanitised for a znode name)."""
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[-80:].strip("._") or "test"
    return f"/pylog-{clean}-{uuid.uuid4().hex[:8]}"


def start_test_zookeeper(data_dir: str, attempts: int = 3, **kwargs: object) -> ZooKeeperProcess:
    """Start a ZooKeeper for tests on a free port: short ticks, killed if the test process dies.

    tickTime 500 ms allows session timeouts from 1 s (fast expiry tests) while maxSessionTimeout is
    raised to 60 s so brokers' default 18 s timeout is honoured, not capped at 20 ticks.
    """
    last: Exception | None = None
    config = {"maxSessionTimeout": "60000"}
    config.update(kwargs.pop("config", None) or {})  # type: ignore[arg-type]
    for attempt in range(attempts):
        zk = ZooKeeperProcess(os.path.join(data_dir, f"zk{attempt}"), free_port(), tick_time_ms=500,
                              config=config, die_with_parent=True, **kwargs)  # type: ignore[arg-type]
        try:
            return zk.start()
        except ZooKeeperStartError as e:
            last = e
            if "Address already in use" not in str(e):
                raise
    raise ZooKeeperStartError(f"Could not start ZooKeeper after {attempts} attempts: {last}")
