"""The private network of a nemesis run: nodes reach each other only, and teardown leaves nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from pylog.chaos.nemesis import net as netmod
from pylog.chaos.nemesis.net import PrivateNet, capability

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(60),
              pytest.mark.skipif(bool(capability()), reason=f"needs network namespaces: {capability()}")]

CONNECT = """
import socket, sys
s = socket.socket(); s.settimeout(1)
try:
    s.connect((sys.argv[1], int(sys.argv[2]))); print("connected")
except OSError as e:
    print(type(e).__name__)
"""
LISTEN = "import socket, time; s = socket.socket(); s.bind(('0.0.0.0', 9092)); s.listen(); time.sleep(60)"


def _namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def _connect(node, host: str, port: int) -> str:
    return node.run(sys.executable, "-c", CONNECT, host, str(port)).stdout.strip()


def test_nodes_reach_each_other_not_the_outside_and_a_grudge_cuts_one_way():
    net = PrivateNet(["a", "b"]).up()
    server = None
    try:
        a, b = net.node("a"), net.node("b")
        server = subprocess.Popen([*b.prefix, sys.executable, "-c", LISTEN])
        deadline = time.monotonic() + 10
        while _connect(a, b.address, 9092) != "connected":
            assert time.monotonic() < deadline, "the listener in b never became reachable from a"
        outside = subprocess.run(["ip", "-4", "route", "get", "1.1.1.1"], capture_output=True, text=True).stdout
        assert _connect(a, "1.1.1.1", 53) == "OSError", outside  # no route out of the run
        b.run("nft", f"add element inet pylog grudge {{ {a.address} }}")
        assert _connect(a, b.address, 9092) == "TimeoutError"
    finally:
        net.down()
    assert server.wait(10) is not None  # killed by pid with its namespace
    assert f"pl{net.run_id}-" not in _namespaces()


def test_teardown_kills_a_paused_process_and_a_dead_runs_namespaces_are_reaped():
    net = PrivateNet(["a"]).up()
    proc = subprocess.Popen([*net.node("a").prefix, sys.executable, "-c", "import time; time.sleep(60)"])
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGSTOP)
    net.down()
    assert proc.wait(10) is not None
    orphan = PrivateNet(["a"]).up()  # as if its creator had been SIGKILLed: registry names a dead pid
    dead = subprocess.Popen(["true"])
    dead.wait()
    (netmod.REGISTRY / orphan.run_id).write_text(f"{dead.pid}\n")
    netmod.reap_stale()
    assert f"pl{orphan.run_id}-" not in _namespaces()
    assert not (netmod.REGISTRY / orphan.run_id).exists()
