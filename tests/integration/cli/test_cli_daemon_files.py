"""bin/pylog-server-start.sh -daemon for several brokers of one install (issue 25 edge 6): each broker has its
own console file and pid file in LOG_DIR, appended across restarts, never truncated or shared; the
per-config pylog-server-stop.sh stops just that broker."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from cli_helpers import REPO
from pylog.client.sync import KafkaClient
from pylog.zk.testing import free_port
from support.clients import wait_for

pytestmark = pytest.mark.integration
BIN = Path(REPO) / "bin"


def _config(tmp_path: Path, zk_connect: str, broker_id: int) -> tuple[Path, int]:
    port = free_port()
    path = tmp_path / f"b{broker_id}.properties"
    path.write_text(f"broker.id={broker_id}\nlisteners=PLAINTEXT://127.0.0.1:{port}\nlog.dirs={tmp_path}/data-{broker_id}\n"
                    f"zookeeper.connect={zk_connect}\nzookeeper.session.timeout.ms=4000\n"
                    "offsets.topic.replication.factor=1\n")
    return path, port


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _start(cfg: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "pylog-server-start.sh"), "-daemon", str(cfg)], env=env, cwd="/",
                          capture_output=True, text=True, timeout=30)


def _serving(port: int) -> bool:
    with KafkaClient(f"127.0.0.1:{port}", timeout=2) as k:
        k.refresh_metadata(topics=[])
    return True


def test_daemon_brokers_get_their_own_out_and_pid_files(tmp_path, zk_connect):
    logs = tmp_path / "logs"
    env = {**os.environ, "LOG_DIR": str(logs)}
    configs = {b: _config(tmp_path, zk_connect, b) for b in (1, 2)}
    pids: list[int] = []
    try:
        for b, (cfg, _) in configs.items():
            assert _start(cfg, env).returncode == 0
            pids.append(int((logs / f"pylogServer-b{b}.pid").read_text()))
        for _, port in configs.values():
            wait_for(lambda: _serving(port), 60, "a broker")
        assert len(set(pids)) == 2 and sorted(p.name for p in logs.iterdir()) == [
            "pylogServer-b1.out", "pylogServer-b1.pid", "pylogServer-b2.out", "pylogServer-b2.pid"]

        again = _start(configs[1][0], env)  # the same broker twice: refused, its files untouched
        assert again.returncode == 1 and f"{logs}/pylogServer-b1.pid belongs to the running process {pids[0]}" \
            in again.stderr
        assert int((logs / "pylogServer-b1.pid").read_text()) == pids[0]

        stop = subprocess.run([str(BIN / "pylog-server-stop.sh"), str(configs[1][0])], capture_output=True,
                              text=True, timeout=30)
        assert stop.returncode == 0, stop.stdout + stop.stderr
        wait_for(lambda: not _alive(pids[0]), 60, "broker 1 to exit")
        assert _alive(pids[1])
        first_run = (logs / "pylogServer-b1.out").read_text()
        assert "shut down completed" in first_run and "shut down completed" not in (logs / "pylogServer-b2.out").read_text()

        assert _start(configs[1][0], env).returncode == 0  # a restart appends to its own file
        pids[0] = int((logs / "pylogServer-b1.pid").read_text())
        wait_for(lambda: _serving(configs[1][1]), 60, "broker 1 again")
        assert (logs / "pylogServer-b1.out").read_text().startswith(first_run)
    finally:
        for cfg, _ in configs.values():  # by config too, should a pid file be missing
            pids += [int(line.split()[0]) for line in subprocess.run(
                ["ps", "ax", "-ww", "-o", "pid=", "-o", "args="], capture_output=True, text=True).stdout.splitlines()
                if f"pylog.broker.main {cfg}" in line]
        for pid in set(pids):
            if _alive(pid):
                os.kill(pid, 15)
        deadline = time.monotonic() + 60
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in pids:
            if _alive(pid):
                os.kill(pid, 9)
