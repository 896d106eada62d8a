"""A Spark standalone cluster on loopback from PySpark's own `spark-class`: one Master and one Worker.

For the tests and the benchmarks: both are this process's children, each in its own process group, stopped by
pid (the Worker's executors with its group) even when the caller fails. Executors import the pylog of the
current PYTHONPATH, like the driver.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["standalone_cluster", "stop_group", "free_port"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM the process group of `proc` (started with start_new_session), SIGKILL it after 30 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def _spark_class() -> str:
    import pyspark
    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


def _alive_workers(ui_port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
        return sum(1 for w in json.load(r).get("workers", []) if w.get("state") == "ALIVE")


@contextlib.contextmanager
def standalone_cluster(workdir: Path, cores: int = 2, memory: str = "2g", java_opts: str = "",
                       timeout: float = 180) -> Iterator[str]:
    """Start a Master and a Worker on 127.0.0.1; yields the master URL spark://127.0.0.1:PORT.

    `java_opts` go to the Master's and Worker's JVMs (SPARK_DAEMON_JAVA_OPTS); logs are in `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(workdir),
           "SPARK_DAEMON_JAVA_OPTS": java_opts, "PYTHONPATH": os.environ.get("PYTHONPATH", os.getcwd())}
    port, ui = free_port(), free_port()
    procs: list[subprocess.Popen] = []

    def launch(name: str, *args: str) -> None:
        with open(workdir / f"{name}.log", "wb") as log:
            procs.append(subprocess.Popen([_spark_class(), *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True))

    try:
        launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
               "--webui-port", str(ui))
        launch("worker", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores),
               "--memory", memory, "--webui-port", str(free_port()), "--work-dir", str(workdir / "work"),
               f"spark://127.0.0.1:{port}")
        deadline = time.monotonic() + timeout
        while True:
            for p in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a Spark process exited {p.returncode}; see {workdir}/*.log")
            with contextlib.suppress(OSError, ValueError):  # a UI still starting may answer an empty page
                if _alive_workers(ui) >= 1:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Spark worker did not register with the master in {timeout} s")
            time.sleep(1.0)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for p in reversed(procs):
            stop_group(p)
