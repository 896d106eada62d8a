"""Helpers for the exactly-once kill tests: a Spark driver as a process of its own (support/spark_copy_driver.py)
and the processes under it, found in /proc (no psutil in the venv).

Every process the driver starts (its JVM, the local executors' python daemons and workers) shares the driver's
session: the driver is started with start_new_session, and PySpark's daemon only changes its process group. So
"the processes of this driver" is exactly "the processes whose session id is the driver's pid", which is what
`Driver.kill()` and the cleanup kill. On a standalone cluster the python workers belong to the executor's
session instead: they are found through the pid files the copy's UDF leaves (`Driver.task_workers()`) and
their daemon, whose children are this application's workers (an executor serves one application).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support.clients import wait_for

_TESTS_DIR = Path(__file__).resolve().parent.parent
# The daemon's command line, which its forked workers keep (pylog's spark_session names pylog.spark.daemon).
_WORKER = ("-m pylog.spark.daemon pyspark.worker", "-m pyspark.daemon pyspark.worker")


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()  # fields after the command name (which may hold spaces)


def _parent(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[1]) if fields else 0


def _children(ppid: int) -> list[int]:
    """Live processes whose parent is `ppid`."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] != "Z" and int(fields[1]) == ppid:
                out.append(int(entry))
    return out


def session_pids(sid: int) -> list[int]:
    """Live processes of session `sid` (zombies excluded)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] != "Z" and int(fields[3]) == sid:
                out.append(int(entry))
    return out


def cmdline(pid: int) -> str:
    """The process's arguments joined by spaces ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _established_ports() -> dict[int, int]:
    """socket inode -> remote port of every established IPv4 TCP connection to 127.0.0.1."""
    ports = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        remote, state, inode = f[2], f[3], int(f[9])
        if state == "01" and remote.startswith("0100007F:"):
            ports[inode] = int(remote.split(":")[1], 16)
    return ports


def connected_to(pid: int, ports: set[int]) -> bool:
    """Whether the process holds an established connection to one of `ports` on 127.0.0.1."""
    remote = _established_ports()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:[") and remote.get(int(target[8:-1])) in ports:
                return True
    return False


class Driver:
    """`python -m support.spark_copy_driver MASTER BOOTSTRAP CHECKPOINT ...` in a session of its own."""

    def __init__(self, workdir: Path, master: str, bootstrap: str, *args: str) -> None:
        self.workdir, self.pids = workdir, workdir / "pids"
        self.pids.mkdir(parents=True, exist_ok=True)
        self.checkpoint = workdir / "ckpt"
        runs = len(list(workdir.glob("driver-*.out")))
        self.out, self.err = workdir / f"driver-{runs}.out", workdir / f"driver-{runs}.err"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", os.getcwd()),
                                                            str(_TESTS_DIR)])}
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "support.spark_copy_driver", master, bootstrap, str(self.checkpoint),
                 "--pids", str(self.pids), *args],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=workdir, env=env, start_new_session=True)

    def batches(self) -> list[int]:
        """The batch ids this run finished (its progress lines)."""
        return [json.loads(line)["batch"] for line in self.out.read_text().splitlines() if line.startswith("{")]

    def committed_batches(self) -> int:
        """How many batches the checkpoint's commit log holds (written by the driver once a batch is done)."""
        return len(list((self.checkpoint / "commits").glob("[0-9]*")))

    def task_workers(self) -> list[int]:
        """Live python workers that ran the UDF of this driver (it names them in `pids`; on a standalone cluster
        they belong to an executor, not to the driver's session)."""
        return [int(p.name) for p in self.pids.iterdir() if p.name.isdigit() and "pyspark" in cmdline(int(p.name))]

    def executor_workers(self) -> list[int]:
        """Live python workers of this application on a standalone cluster's executor: every worker forked by the
        daemon of a worker that ran the UDF (the sink's writers are its siblings, not in the pid files)."""
        daemons = {ppid for ppid in map(_parent, self.task_workers()) if cmdline(ppid).endswith(_WORKER)}
        return [pid for daemon in daemons for pid in _children(daemon) if cmdline(pid).endswith(_WORKER)]

    def python_workers(self) -> list[int]:
        """Live python workers of this driver: the processes a PySpark daemon forked to run tasks, in the driver's
        session (local mode) or on a standalone cluster's executor."""
        local = [pid for pid in session_pids(self.proc.pid)
                 if cmdline(pid).endswith(_WORKER) and cmdline(_parent(pid)).endswith(_WORKER)]
        return sorted({*local, *self.executor_workers()})

    def kill_writers_in_open_transaction(self, broker_ports: set[int], open_transaction,
                                         settle_s: float = 1.0) -> list[int]:
        """SIGKILL the python workers connected to the cluster while a transaction holds records that only an
        abort can end. The workers are stopped (SIGSTOP) first, so no writer can commit and no retry can fence;
        the transaction must still be open `settle_s` later, when a commit a writer asked for just before the
        stop has finished without it. Returns the killed pids ([] if none was open; the workers go on)."""
        stopped: list[int] = []
        try:
            for _ in range(5):  # a worker forked while stopping the others is stopped too
                fresh = [pid for pid in self.python_workers() if pid not in stopped]
                if not fresh:
                    break
                for pid in fresh:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGSTOP)
                stopped += fresh
            if not open_transaction():
                return []
            time.sleep(settle_s)
            if not open_transaction():
                return []  # a commit was under way: it ended without its (stopped) writer
            writers = [pid for pid in stopped if connected_to(pid, broker_ports)]
            for pid in writers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            return writers
        finally:
            for pid in stopped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def assert_running(self) -> None:
        """AssertionError with the driver's stderr tail if it exited."""
        if self.proc.poll() is not None:
            raise AssertionError(f"the driver exited {self.proc.returncode}:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        """The last lines of the driver's stderr."""
        return "\n".join(self.err.read_text(errors="replace").splitlines()[-lines:])

    def wait(self, timeout: float) -> int:
        """The driver's exit code once it finished (AssertionError with its stderr after `timeout`)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the driver did not finish within {timeout}s:\n{self.tail()}") from None

    def kill(self) -> None:
        """SIGKILL to every process of the driver's session: the driver, its JVM, its local python workers."""
        for pid in [self.proc.pid, *session_pids(self.proc.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(30)
        wait_for(lambda: not session_pids(self.proc.pid), 30, "the driver's processes to exit")

    def __enter__(self) -> "Driver":
        return self

    def __exit__(self, *exc: object) -> None:
        # Executors' workers on a standalone worker outlive their driver a while; their daemon is found through a
        # live UDF worker, so they are listed before the kill too.
        before = {*self.task_workers(), *self.executor_workers()}
        self.kill()
        for pid in before | {*self.task_workers(), *self.executor_workers()}:
            if "pyspark" in cmdline(pid):  # still the worker, not a reused pid
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def wait_event(cond, driver: Driver, timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll `cond` until true; fail at once if the driver exited first, or after `timeout`."""
    deadline = time.monotonic() + timeout
    while not cond():
        driver.assert_running()
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}:\n{driver.tail()}")
        time.sleep(interval)
