"""A local cluster of real processes: ZooKeeper plus N pylog brokers on loopback.

Used by ./scripts/quickstart, the integration and chaos tests and the benchmarks. Every process
is started by pid and stopped by pid; nothing is left behind when `stop()` runs, even after a
failed start.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from pylog.zk.testing import free_port


class ClusterError(RuntimeError):
    """A process did not come up (the message carries the tail of its log)."""


def wait_until(cond: Callable[[], object], timeout: float, what: str, interval: float = 0.05) -> object:
    """Poll `cond` until it returns something truthy; ClusterError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            result = cond()
            if result:
                return result
        except Exception as exc:  # the condition may fail while things start
            last_exc = exc
        time.sleep(interval)
    raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}" + (f" (last error: {last_exc})" if last_exc else ""))


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


@dataclass
class BrokerProcess:
    """One broker process with its own config file, log dir and console log."""

    broker_id: int
    port: int
    config_path: Path
    log_path: Path
    data_dir: Path
    proc: subprocess.Popen | None = None
    env: dict[str, str] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)  # extra listeners' ports, by listener name
    metrics_port: int | None = None  # prometheus.listener's port, when the cluster serves metrics
    host: str = "127.0.0.1"  # the address it listens on (a node's own address in a chaos run's network)
    launcher: list[str] = field(default_factory=list)  # a command prefix, e.g. `ip netns exec NODE`

    @property
    def pid(self) -> int | None:
        """The process id while it runs."""
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    @property
    def address(self) -> str:
        """host:port of its listener."""
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        """Launch `python -m pylog.broker.main CONFIG` in the background."""
        if self.pid is not None:
            return
        out = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen([*self.launcher, sys.executable, "-m", "pylog.broker.main",
                                          str(self.config_path)],
                                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, **self.env}, start_new_session=True)
        finally:
            out.close()

    def wait_ready(self, timeout: float = 60) -> None:
        """Wait until the listener accepts connections (or fail with the log's tail)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise ClusterError(f"broker {self.broker_id} exited:\n{_tail(self.log_path)}")
            if _port_open(self.port, self.host):
                return
            time.sleep(0.05)
        raise ClusterError(f"broker {self.broker_id} not listening after {timeout}s:\n{_tail(self.log_path)}")

    def signal(self, sig: int) -> None:
        """Send a signal to the broker process."""
        if self.pid is not None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        """kill -9: no shutdown, no flush."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM (controlled shutdown), then SIGKILL if it does not exit in time."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class LocalCluster:
    """ZooKeeper (own process, or an existing one via `zk_connect`) and N brokers."""

    def __init__(self, base_dir: str | os.PathLike[str], n_brokers: int = 1, *, zk_connect: str | None = None,
                 overrides: dict[str, str] | None = None, broker_overrides: dict[int, dict[str, str]] | None = None,
                 first_id: int = 0, zk_port: int | None = None, broker_ports: dict[int, int] | None = None,
                 extra_listeners: dict[str, str] | None = None, env: dict[str, str] | None = None,
                 prometheus: bool = False, metrics_ports: dict[int, int] | None = None,
                 placement: Callable[[int], tuple[str, list[str]]] | None = None) -> None:
        self.base = Path(base_dir)
        # Each broker serves /metrics on a port of its own (prometheus.listener): metrics_ports' or a free one.
        self.prometheus = prometheus or bool(metrics_ports)
        self._metrics_ports = dict(metrics_ports or {})
        # broker id -> (host, command prefix): where a broker runs when not on loopback (pylog/chaos/nemesis)
        self.placement = placement
        self.env = dict(env or {})  # extra environment of every broker process (KAFKA_OPTS' ZooKeeper login)
        # Listeners besides PLAINTEXT (which stays first: readiness checks and tools use it), name -> protocol.
        self.extra_listeners = dict(extra_listeners or {})
        self.base.mkdir(parents=True, exist_ok=True)
        self.overrides = dict(overrides or {})
        self.broker_overrides = dict(broker_overrides or {})
        self.zk_process = None
        self._zk_connect = zk_connect
        self.brokers: dict[int, BrokerProcess] = {}
        self._next_id = first_id
        self._initial = n_brokers
        self._zk_port = zk_port
        self._broker_ports = dict(broker_ports or {})

    @property
    def zk_connect(self) -> str:
        """The connect string brokers use (with chroot if one was given)."""
        assert self._zk_connect is not None, "ZooKeeper not started"
        return self._zk_connect

    @property
    def bootstrap(self) -> str:
        """Comma-separated addresses of the running brokers."""
        return ",".join(b.address for b in self.brokers.values() if b.pid is not None)

    def bootstrap_on(self, listener: str) -> str:
        """Comma-separated addresses of the running brokers on one of the extra listeners."""
        return ",".join(f"{b.host}:{b.ports[listener]}" for b in self.brokers.values() if b.pid is not None)

    def start(self, timeout: float = 90) -> "LocalCluster":
        """Start ZooKeeper if needed and the initial brokers; wait until each listens."""
        try:
            if self._zk_connect is None:
                from pylog.zk.server import ZooKeeperProcess
                self.zk_process = ZooKeeperProcess(str(self.base / "zookeeper"), self._zk_port or free_port())
                self.zk_process.start()
                self._zk_connect = self.zk_process.connect_string
            ids = [self.add_broker(start=False) for _ in range(self._initial)]
            for bid in ids:
                self.brokers[bid].start()
            for bid in ids:
                self.brokers[bid].wait_ready(timeout)
            self.wait_formed(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_formed(self, timeout: float = 60) -> None:
        """Wait until every running broker's metadata lists every running broker and a controller."""
        from pylog.client.sync import KafkaClient

        running = {bid for bid, b in self.brokers.items() if b.pid is not None}

        def formed() -> bool:
            for bid in running:
                with KafkaClient(self.brokers[bid].address, timeout=5) as k:
                    k.refresh_metadata(topics=[])
                    if set(k.brokers) != running or k.controller_id is None:
                        return False
            return True

        wait_until(formed, timeout, f"brokers {sorted(running)} to see each other")

    def add_broker(self, start: bool = True, broker_id: int | None = None, rack: str | None = None) -> int:
        """Configure (and by default start) one more broker; returns its id."""
        bid = self._next_id if broker_id is None else broker_id
        self._next_id = max(self._next_id, bid + 1)
        port = self._broker_ports.get(bid) or free_port()
        data = self.base / f"broker-{bid}"
        data.mkdir(parents=True, exist_ok=True)
        extra = {name: free_port() for name in self.extra_listeners}
        metrics_port = (self._metrics_ports.get(bid) or free_port()) if self.prometheus else None
        host, launcher = self.placement(bid) if self.placement else ("127.0.0.1", [])
        props = {
            "broker.id": str(bid),
            "listeners": ",".join([f"PLAINTEXT://{host}:{port}"] + [f"{n}://{host}:{p}" for n, p in extra.items()]),
            "log.dirs": str(data / "logs"),
            "zookeeper.connect": self.zk_connect,
            "zookeeper.session.timeout.ms": "6000",
            "offsets.topic.replication.factor": "1",
            "group.initial.rebalance.delay.ms": "0",
            "controlled.shutdown.retry.backoff.ms": "500",
            "replica.fetch.backoff.ms": "200",
            "replica.lag.time.max.ms": "10000",
            **({"prometheus.listener": f"http://127.0.0.1:{metrics_port}"} if metrics_port else {}),
            **self.overrides,
            **self.broker_overrides.get(bid, {}),
        }
        if extra:
            props.setdefault("listener.security.protocol.map", ",".join(
                ["PLAINTEXT:PLAINTEXT"] + [f"{n}:{proto}" for n, proto in self.extra_listeners.items()]))
        if rack is not None:
            props["broker.rack"] = rack
        config = data / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        b = BrokerProcess(bid, port, config, data / "console.log", data, env=self.env, ports=extra,
                          metrics_port=metrics_port, host=host, launcher=launcher)
        self.brokers[bid] = b
        if start:
            b.start()
            b.wait_ready()
            self.wait_formed()
        return bid

    def restart(self, broker_id: int, timeout: float = 60) -> None:
        """Start a stopped or killed broker again with the same config and data."""
        b = self.brokers[broker_id]
        b.start()
        b.wait_ready(timeout)
        self.wait_formed(timeout)

    def stop(self, brokers: Iterable[int] | None = None) -> None:
        """Stop brokers (all by default; then ZooKeeper too). Safe to call twice."""
        ids = list(self.brokers) if brokers is None else list(brokers)
        for bid in ids:
            b = self.brokers[bid]
            if b.proc is not None and b.proc.poll() is None:
                b.proc.terminate()
        for bid in ids:
            self.brokers[bid].stop(timeout=30)
        if brokers is None and self.zk_process is not None:
            self.zk_process.stop()

    def kill_all(self) -> None:
        """kill -9 every broker (for teardown after a failed test)."""
        for b in self.brokers.values():
            b.kill()
        if self.zk_process is not None:
            self.zk_process.stop()

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def terminate_pids(pids: Iterable[int], timeout: float = 30) -> None:
    """SIGTERM then SIGKILL a set of pids (for scripts that only kept pid files)."""
    pids = [p for p in pids if p > 0]
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    for p in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(p, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
