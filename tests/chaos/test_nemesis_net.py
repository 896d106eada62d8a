"""The private network of a nemesis run: nodes reach each other only, and teardown leaves nothing."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from pylog.chaos.nemesis import link
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


CONNECT_MS = """
import socket, sys, time
took = []
for _ in range(5):
    s = socket.socket(); s.settimeout(5); t = time.monotonic()
    try:
        s.connect((sys.argv[1], 9))  # nothing listens: the SYN goes out, the RST comes back
    except OSError:
        pass
    took.append((time.monotonic() - t) * 1000)
print(min(took))
"""


@pytest.mark.skipif(shutil.which("iptables-legacy") is None, reason="the delayer queues packets with iptables "
                                                                     "(scripts/setup installs it)")
def test_the_user_space_delayer_holds_what_a_node_sends_and_lets_it_all_go_when_stopped():
    net = PrivateNet(["a", "b"]).up()
    try:
        a, b = net.node("a"), net.node("b")

        def round_trip() -> float:
            return float(a.run(sys.executable, "-c", CONNECT_MS, b.address).stdout)

        assert round_trip() < 30
        detail = link.delayer(a, "delay")
        assert detail == {"delayer": "nfqueue", "delay_ms": 50, "jitter_ms": 10, "reorder_percent": 0}
        assert round_trip() >= 38  # every SYN held 50 +- 10 ms
        counted = link.stop_delayer(a)
        assert counted["packets"] >= 5 and counted["sent_ahead"] == 0
        assert round_trip() < 30 and "NFQUEUE" not in a.run("iptables-legacy", "-S", "OUTPUT").stdout
    finally:
        net.down()
