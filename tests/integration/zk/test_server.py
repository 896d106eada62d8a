"""ZooKeeperProcess and the bin/pylog-zookeeper-server-{start,stop}.sh scripts against Debian's ZooKeeper."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from pylog.zk.server import ZooKeeperProcess, ZooKeeperStartError, find_zookeeper_pids, four_letter_word
from pylog.zk.testing import free_port, wait_until

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
START = REPO / "bin" / "pylog-zookeeper-server-start.sh"
STOP = REPO / "bin" / "pylog-zookeeper-server-stop.sh"


def port_open(port: int) -> bool:
    """True if something accepts connections on 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_process_start_serve_stop(tmp_path: Path) -> None:
    zk = ZooKeeperProcess(str(tmp_path / "data"), free_port(), tick_time_ms=500)
    with zk:
        assert zk.is_running()
        reply = four_letter_word("127.0.0.1", zk.client_port, "srvr")
        assert "Mode: standalone" in reply
        cfg = Path(zk.config_file).read_text()
        assert f"clientPort={zk.client_port}" in cfg and "admin.enableServer=false" in cfg
        pid = zk.pid
    assert not zk.is_running() and not port_open(zk.client_port)
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(f"/proc/{pid}/status").read_text()
    log = Path(zk.log_file).read_text()
    # slf4j-simple is on the classpath: real log lines, not SLF4J's "no binding" warning.
    assert "SLF4J: Failed to load class" not in log and "ZooKeeperServerMain" in log
    assert "AdminServer" not in log or "Started AdminServer" not in log


def test_startup_failure_reports_log_tail(zk_server: ZooKeeperProcess, tmp_path: Path) -> None:
    clash = ZooKeeperProcess(str(tmp_path / "data"), zk_server.client_port, start_timeout=30)
    with pytest.raises(ZooKeeperStartError) as err:
        clash.start()
    message = str(err.value)
    assert "ZooKeeper exited with code" in message and f"port {zk_server.client_port}" in message
    assert "Address already in use" in message  # the tail of its log is in the error
    assert not clash.is_running()
    assert zk_server.probe()  # the real one is untouched


def test_stop_escalates_to_sigkill(tmp_path: Path) -> None:
    zk = ZooKeeperProcess(str(tmp_path / "data"), free_port()).start()
    try:
        os.kill(zk.pid, signal.SIGSTOP)  # a stopped JVM ignores SIGTERM until continued
        started = time.monotonic()
        assert zk.stop(timeout=1.0) == -signal.SIGKILL
        assert time.monotonic() - started < 10
    finally:
        if zk.is_running():
            zk.process.kill()


def write_properties(tmp_path: Path, port: int) -> Path:
    """A zookeeper.properties in Kafka's format for the scripts."""
    cfg = tmp_path / "zookeeper.properties"
    cfg.write_text(f"# test\ndataDir={tmp_path / 'zkdata'}\nclientPort={port}\nmaxClientCnxns=0\n"
                   "admin.enableServer=false\ntickTime=500\n")
    return cfg


def kill_leftovers(cfg: Path) -> None:
    """Stop by pid whatever a failed test left running."""
    for pid in find_zookeeper_pids(str(cfg)):
        os.kill(pid, signal.SIGKILL)


def test_scripts_daemon_then_stop(tmp_path: Path) -> None:
    port = free_port()
    cfg = write_properties(tmp_path, port)
    env = {**os.environ, "LOG_DIR": str(tmp_path / "logs")}
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    try:
        started = subprocess.run([str(START), "-daemon", str(cfg)], cwd=elsewhere, env=env,
                                 capture_output=True, text=True, timeout=90)
        assert started.returncode == 0, started.stderr
        assert "Mode: standalone" in four_letter_word("127.0.0.1", port, "srvr")
        pids = find_zookeeper_pids(str(cfg))
        assert len(pids) == 1
        out = (tmp_path / "logs" / "zookeeper.out").read_text()
        assert f"binding to port 0.0.0.0/0.0.0.0:{port}" in out or f":{port}" in out
        assert "SLF4J: Failed to load class" not in out

        stopped = subprocess.run([str(STOP), str(cfg)], cwd=elsewhere, env=env, capture_output=True, text=True,
                                 timeout=60)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert find_zookeeper_pids(str(cfg)) == [] and not port_open(port)

        again = subprocess.run([str(STOP), str(cfg)], cwd=elsewhere, env=env, capture_output=True, text=True,
                               timeout=60)
        assert (again.returncode, again.stdout) == (1, "No zookeeper server to stop\n")
    finally:
        kill_leftovers(cfg)


def test_script_foreground_runs_the_jvm_itself(tmp_path: Path) -> None:
    port = free_port()
    cfg = write_properties(tmp_path, port)
    proc = subprocess.Popen([str(START), str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: port_open(port), 60, "foreground ZooKeeper to listen")
        assert find_zookeeper_pids(str(cfg)) == [proc.pid]  # exec'd: the script's pid is the JVM's
        assert subprocess.run([str(STOP), str(cfg)], timeout=60).returncode == 0
        assert proc.wait(30) == 128 + signal.SIGTERM
        assert b"ZooKeeperServerMain" in proc.stdout.read()  # logs went to the terminal
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        kill_leftovers(cfg)


def test_script_usage_and_bad_config(tmp_path: Path) -> None:
    usage = subprocess.run([str(START)], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 1 and "USAGE:" in usage.stderr and "[-daemon] zookeeper.properties" in usage.stderr
    bad = tmp_path / "bad.properties"
    bad.write_text("dataDir=/tmp/x\n")
    result = subprocess.run([str(START), "-daemon", str(bad)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "clientPort is not set" in result.stderr
