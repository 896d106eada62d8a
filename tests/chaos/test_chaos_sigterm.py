"""scripts/chaos stopped with SIGTERM (a CI timeout, an operator's kill) stops every broker it started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]


def _pids_with(marker: str, also: bytes = b"") -> list[int]:
    """Pids of the processes whose command line mentions marker (the run's temporary directory) and also."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and also in cmdline:
            found.append(int(entry.name))
    return found


def test_sigterm_stops_the_brokers_the_run_started():
    seed = 900_000 + os.getpid() % 100_000  # the run's directory is pylog-chaos-<seed>-...: ours alone
    marker = f"pylog-chaos-{seed}-"
    cmd = [sys.executable, "-m", "pylog.chaos.run", "--seed", str(seed), "--faults", "1", "--expiries", "0",
           "--duration", "60", "--partitions", "1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        brokers: list[int] = []
        while time.monotonic() < deadline and len(brokers) < 3:
            brokers = _pids_with(marker, b"pylog.broker.main")
            time.sleep(0.5)
        assert len(brokers) == 3, f"the run did not start its 3 brokers: {brokers}"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _pids_with(marker):
            time.sleep(0.5)
        assert _pids_with(marker) == [], "processes of the terminated run are still alive"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for pid in _pids_with(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
