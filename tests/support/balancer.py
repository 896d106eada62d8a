"""Helpers for the balancer's integration tests: cccli runs, the balancer process, its idle state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pylog.cli.admin_client import BROKER_RESOURCE, BrokerAdmin
from support.clients import wait_for

REPO = Path(__file__).resolve().parents[2]
CCCLI = str(Path(sys.executable).parent / "cccli")
THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def cccli(port: int, *args: str) -> tuple[dict, str]:
    """Run cccli against the balancer with --json true; (its final JSON, its stderr with the 202 bodies)."""
    r = subprocess.run([CCCLI, "-a", f"127.0.0.1:{port}", *args, "--json", "true"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), r.stderr


def start_balancer(tmp_path: Path, bootstrap: str, zk_connect: str, port: int, *extra: str) -> subprocess.Popen:
    """bin/pylog-cruise-control-start.sh with a config of short intervals (plus `extra` key=value lines)."""
    config = tmp_path / "cruisecontrol.properties"
    config.write_text("\n".join([
        f"bootstrap.servers={bootstrap}", f"zookeeper.connect={zk_connect}", f"webserver.http.port={port}",
        # No blocking: every task's first answer is 202 progress and cccli polls it, as on a big cluster.
        "webserver.request.maxBlockTimeMs=0", "execution.progress.check.interval.ms=200", *extra, ""]))
    with open(tmp_path / "balancer.log", "a") as out:  # a file, so a chatty log never blocks the service
        return subprocess.Popen([os.path.join(REPO, "bin", "pylog-cruise-control-start.sh"), str(config)],
                                stdout=out, stderr=subprocess.STDOUT)


def wait_listening(port: int, timeout_s: float = 30) -> None:
    """Until cccli gets an answer from the balancer."""
    wait_for(lambda: subprocess.run([CCCLI, "-a", f"127.0.0.1:{port}", "state"], capture_output=True,
                                    timeout=30).returncode == 0, timeout_s, "the balancer to listen")


def stop_balancer(proc: subprocess.Popen, tmp_path: Path) -> subprocess.CompletedProcess:
    """The stop script, given the config, signals only this balancer (its command line names the file)."""
    stop = subprocess.run([os.path.join(REPO, "bin", "pylog-cruise-control-stop.sh"),
                           str(tmp_path / "cruisecontrol.properties")], capture_output=True, text=True, timeout=30)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
    return stop


def wait_idle(port: int, timeout_s: float = 90) -> dict:
    """Until the executor has nothing in progress; the last state body."""
    got: dict = {}

    def idle() -> bool:
        got.update(cccli(port, "state")[0])
        return got["ExecutorState"]["state"] == "NO_TASK_IN_PROGRESS"
    wait_for(idle, timeout_s, "the balancer's execution to finish", interval=0.5)
    return got


def balancer_log(tmp_path: Path) -> str:
    """The balancer's log without the HTTP access lines."""
    log = (tmp_path / "balancer.log").read_text()
    return "\n".join(line for line in log.splitlines() if " GET " not in line and " POST " not in line)


def throttles_left(bootstrap: str, brokers) -> list[str]:
    """The brokers' replication throttle rates that are set (not default)."""
    admin = BrokerAdmin(bootstrap, 10000)
    try:
        found = admin.describe_configs([(BROKER_RESOURCE, str(b)) for b in brokers])
    finally:
        admin.close()
    return [f"{name[1]}:{c.name}" for name, configs in found.items() for c in configs
            if c.name in THROTTLE_KEYS and not c.is_default]
