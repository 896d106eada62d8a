"""docs/runbook.md is exercised line by line: every command of its `sh` blocks runs, in order, against a real
two-broker cluster (the "Expanding" section starts a third with pylog-server-start.sh -daemon and the
"Decommissioning" one stops it with pylog-server-stop.sh) and must exit 0, as an operator would see it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cli_helpers import REPO
from pylog.zk.testing import free_port

pytestmark = pytest.mark.integration
RUNBOOK = Path(REPO) / "docs" / "runbook.md"
# What an operator re-runs until it shows the state they wait for (bounded by RETRY_S).
UNTIL = {"--verify": lambda out: "still in progress" not in out,
         "ls /brokers/ids": lambda out: out.rstrip().endswith("2]")}
RETRY_S = 90


def runbook_commands() -> list[tuple[str, str]]:
    """(section, command) for every command of every sh block, continuation lines joined."""
    text = RUNBOOK.read_text()
    commands = []
    section = ""
    for block in re.finditer(r"^## ([^\n]+)$|^```sh\n(.*?)^```", text, re.M | re.S):
        if block.group(1):
            section = block.group(1)
            continue
        joined = block.group(2).replace("\\\n", " ")
        commands += [(section, " ".join(line.split())) for line in joined.splitlines() if line.strip()]
    return commands


def test_every_runbook_line_runs(cluster_factory, tmp_path, zk_connect):
    c = cluster_factory(2)
    new_broker = tmp_path / "server-2.properties"
    new_broker.write_text(f"broker.id=2\nlisteners=PLAINTEXT://127.0.0.1:{free_port()}\nlog.dirs={tmp_path}/b2\n"
                          f"zookeeper.connect={zk_connect}\nzookeeper.session.timeout.ms=6000\n"
                          "offsets.topic.replication.factor=1\ngroup.initial.rebalance.delay.ms=0\n")
    env = {**os.environ, "PATH": f"{REPO}/bin:{os.environ['PATH']}", "BOOTSTRAP": c.bootstrap.split(",")[0],
           "ZOOKEEPER": zk_connect, "NEW_BROKER": str(new_broker), "LOG_DIR": str(tmp_path / "logs")}
    work = tmp_path / "work"
    work.mkdir()
    commands = runbook_commands()
    assert len(commands) > 30 and {s for s, _ in commands} >= {
        "Adding and removing topics", "Modifying topics", "Balancing leadership", "Expanding your cluster",
        "Limiting bandwidth usage during data migration", "Increasing replication factor", "JBOD: log directories",
        "Decommissioning brokers and graceful shutdown"}
    try:
        for section, command in commands:
            deadline = time.monotonic() + RETRY_S
            while True:
                r = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env, capture_output=True,
                                   text=True, timeout=180)
                assert r.returncode == 0, f"[{section}] {command}\n{r.stdout}{r.stderr}"
                done = all(check(r.stdout) for key, check in UNTIL.items() if key in command)
                if done or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert done, f"[{section}] {command} never showed what it waits for:\n{r.stdout}"
    finally:
        pid_file = tmp_path / "logs" / "pylogServer-server-2.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text())
            try:
                os.kill(pid, signal.SIGTERM)
                for _ in range(300):
                    os.kill(pid, 0)
                    time.sleep(0.1)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
