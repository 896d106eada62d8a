"""The quickstart behind ./scripts/quickstart (run with the repo's .venv python).

start: stop a previous quickstart cluster if one runs, start ZooKeeper and three brokers (on
2181 and 9092-9094 when free), create a topic with replication factor 3 and
min.insync.replicas=2, produce and consume with kcat, describe the topic, and leave it running.
stop: stop what `start` started, by the pids it recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pylog.localcluster import LocalCluster, terminate_pids, wait_until  # noqa: E402
from pylog.zk.testing import free_port  # noqa: E402

STATE = ROOT / ".quickstart"
PIDS = STATE / "pids.json"
TOPIC = "quickstart-events"


def _free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _port(preferred: int) -> int:
    return preferred if _free(preferred) else free_port()


def _run(*cmd: str, stdin: str | None = None) -> str:
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"quickstart: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    return r.stdout


def stop(quiet: bool = False) -> None:
    """Stop the processes a previous start recorded."""
    if not PIDS.exists():
        if not quiet:
            print("No quickstart cluster is running.")
        return
    pids = json.loads(PIDS.read_text())
    brokers = [p for name, p in pids.items() if name.startswith("broker")]
    terminate_pids(brokers, timeout=60)  # brokers first: a controlled shutdown needs ZooKeeper
    terminate_pids([p for name, p in pids.items() if not name.startswith("broker")], timeout=30)
    PIDS.unlink()
    if not quiet:
        print(f"Stopped the quickstart cluster (pids {', '.join(str(p) for p in pids.values())}).")


def status() -> None:
    """Print what runs."""
    if not PIDS.exists():
        print("No quickstart cluster is running.")
        return
    for name, pid in json.loads(PIDS.read_text()).items():
        alive = os.path.exists(f"/proc/{pid}")
        print(f"{name}: pid {pid} {'running' if alive else 'not running'}")


def start() -> None:
    """Start the cluster and run the demo against it."""
    if PIDS.exists():
        print("A quickstart cluster is already running; restarting it from scratch.")
        stop(quiet=True)
    shutil.rmtree(STATE, ignore_errors=True)
    ports = {i: _port(9092 + i) for i in range(3)}
    cluster = LocalCluster(STATE, 3, zk_port=_port(2181), broker_ports=ports,
                           overrides={"zookeeper.session.timeout.ms": "18000"})
    cluster.start()
    pids = {"zookeeper": cluster.zk_process.pid, **{f"broker-{i}": b.pid for i, b in cluster.brokers.items()}}
    PIDS.write_text(json.dumps(pids))
    bootstrap = cluster.bootstrap
    topics = str(ROOT / "bin" / "pylog-topics.sh")
    wait_until(lambda: _run(topics, "--bootstrap-server", bootstrap, "--list") is not None, 60, "brokers to answer")
    print(_run(topics, "--bootstrap-server", bootstrap, "--create", "--topic", TOPIC, "--partitions", "3",
               "--replication-factor", "3", "--config", "min.insync.replicas=2"), end="")
    records = "".join(f"key-{i}:hello pylog {i}\n" for i in range(5))
    _run("kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-K:", "-X", "acks=all", stdin=records)
    print(f"Produced 5 records to {TOPIC} with kcat (acks=all). Consuming them back:")
    print(_run("kcat", "-b", bootstrap, "-C", "-t", TOPIC, "-o", "beginning", "-e", "-q",
               "-f", "  partition %p offset %o: %k = %s\n"), end="")
    print(f"\n$ bin/pylog-topics.sh --bootstrap-server {bootstrap} --describe --topic {TOPIC}")
    print(_run(topics, "--bootstrap-server", bootstrap, "--describe", "--topic", TOPIC), end="")
    print(f"\nThe cluster keeps running: ZooKeeper at {cluster.zk_connect}, brokers at {bootstrap} "
          f"(logs in {STATE}).\nStop it with: ./scripts/quickstart stop")


def main() -> None:
    """Dispatch start/stop/status."""
    action = sys.argv[1] if len(sys.argv) > 1 else "start"
    {"start": start, "stop": stop, "status": status}.get(action, lambda: sys.exit(
        f"usage: scripts/quickstart [start|stop|status] (got {action!r})"))()


if __name__ == "__main__":
    main()
