"""Start-up mistakes of bin/pylog-server-start.sh (issue 25 edge 7): one line with the cause on stderr, exit 1,
no Python traceback on the console; the stack trace in $LOG_DIR/server.log."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO
from pylog.zk.testing import free_port

pytestmark = pytest.mark.integration


def _start(tmp_path: Path, zk_connect: str, port: int, **extra: str) -> subprocess.CompletedProcess:
    props = {"broker.id": "0", "listeners": f"PLAINTEXT://127.0.0.1:{port}", "log.dirs": str(tmp_path / "data"),
             "zookeeper.connect": zk_connect, "zookeeper.connection.timeout.ms": "3000", **extra}
    cfg = tmp_path / "server.properties"
    cfg.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return subprocess.run([os.path.join(REPO, "bin", "pylog-server-start.sh"), str(cfg)], capture_output=True,
                          text=True, timeout=90, env={**os.environ, "LOG_DIR": str(tmp_path / "logs")})


def _one_clear_line(r: subprocess.CompletedProcess, tmp_path: Path, cause: str) -> None:
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: Broker 0 failed to start: "), r.stderr
    assert cause in r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert f"Fatal error during broker startup: " in r.stdout and cause in r.stdout
    assert "Traceback (most recent call last)" in (tmp_path / "logs" / "server.log").read_text()


def test_zookeeper_out_of_reach(tmp_path):
    r = _start(tmp_path, f"127.0.0.1:{free_port()}", free_port())
    _one_clear_line(r, tmp_path, "connecting to ZooKeeper at 127.0.0.1:")


def test_port_in_use(tmp_path, zk_connect):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        r = _start(tmp_path, zk_connect, taken.getsockname()[1])
    _one_clear_line(r, tmp_path, "address already in use")


def test_broker_id_not_matching_meta_properties(tmp_path, zk_connect):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "meta.properties").write_text("version=0\nbroker.id=5\n")
    r = _start(tmp_path, zk_connect, free_port())
    _one_clear_line(r, tmp_path, "Configured broker.id 0 doesn't match stored broker.id")
