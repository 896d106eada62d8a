"""Run Debian's ZooKeeper as a plain Java process, and the bin/pylog-zookeeper-server-{start,stop}.sh logic.

`java -cp /usr/share/java/zookeeper.jar org.apache.zookeeper.server.ZooKeeperServerMain <cfg>`: the jar's
manifest carries the rest of the classpath. We add Debian's slf4j-simple binding when present, which
replaces SLF4J's "no binding" warnings with ZooKeeper's real log lines. The admin server (port 8080) is
off unless the config turns it on.

    python -m pylog.zk.server [-daemon] CONFIG     # start, like zookeeper-server-start.sh
    python -m pylog.zk.server --stop [CONFIG]      # stop, like zookeeper-server-stop.sh
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Mapping, Sequence

from pylog.common import properties
from pylog.zk import errors

ZOOKEEPER_JAR = "/usr/share/java/zookeeper.jar"
SLF4J_BINDING = "/usr/share/java/slf4j-simple.jar"
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
QUORUM_MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# System property marking our JVMs, so the stop script finds only ZooKeepers started by the start script.
LAUNCHER_PROPERTY = "pylog.zookeeper.launcher"
CONFIG_PROPERTY = "pylog.zookeeper.config"
_PR_SET_PDEATHSIG = 1


class ZooKeeperStartError(errors.ZkError):
    """ZooKeeper exited or did not start serving in time; the message ends with the tail of its log."""


def four_letter_word(host: str, port: int, word: str = "srvr", timeout: float = 1.0) -> str:
    """Send a four-letter command (srvr, ruok, ...) and return the reply ('' if nothing came back)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(word.encode("ascii"))
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _die_with_parent() -> None:
    """preexec_fn: have the kernel SIGTERM the JVM if the process that started it dies (no orphans)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def listens_on(pid: int, port: int) -> bool:
    """True if process pid holds a TCP socket listening on port (Linux /proc; IPv4 and IPv6)."""
    inodes = set()
    # the pid's own tables: it may run in another network namespace than ours
    for table in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    fields = line.split()
                    # local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is field 9
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    if not inodes:
        return False
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False


def tail(path: str, lines: int = 40) -> str:
    """Last lines of a text file ('' if unreadable)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(f.tell() - 64 * 1024, 0))
            return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", errors="replace")
    except OSError:
        return ""


class ZooKeeperProcess:
    """A standalone ZooKeeper JVM: writes zoo.cfg, starts, waits until it serves, stops by pid."""

    def __init__(self, data_dir: str, client_port: int, *, host: str | None = "127.0.0.1",
                 tick_time_ms: int = 2000, config: Mapping[str, str] | None = None,
                 config_file: str | None = None, log_file: str | None = None,
                 jvm_opts: Sequence[str] = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
                 java: str = "java", log_level: str = "info", launcher: str = "library",
                 start_timeout: float = 30.0, die_with_parent: bool = False, exec_prefix: Sequence[str] = ()):
        self.data_dir = os.path.abspath(data_dir)
        self.client_port = client_port
        self.host = host
        self.tick_time_ms = tick_time_ms
        self.extra_config = dict(config or {})
        self.config_file = os.path.abspath(config_file or os.path.join(self.data_dir, "zoo.cfg"))
        self.log_file = os.path.abspath(log_file or os.path.join(self.data_dir, "zookeeper.log"))
        self.jvm_opts = list(jvm_opts)
        self.java = java
        self.log_level = log_level
        self.launcher = launcher
        self.start_timeout = start_timeout
        self.die_with_parent = die_with_parent
        self.exec_prefix = list(exec_prefix)  # e.g. `ip netns exec NODE` (a chaos run's private network)
        self.main_class = MAIN_CLASS  # QUORUM_MAIN_CLASS for a member of an ensemble (server.N keys)
        self.source_config: str | None = None  # the user's properties file, recorded in the command line
        self.process: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------------ configuration

    @property
    def connect_string(self) -> str:
        """host:port to give clients."""
        return f"{self.host or '127.0.0.1'}:{self.client_port}"

    def config_entries(self) -> dict[str, str]:
        """zoo.cfg contents: our defaults, then the caller's keys (which win)."""
        entries = {
            "dataDir": self.data_dir,
            "clientPort": str(self.client_port),
            "tickTime": str(self.tick_time_ms),
            "maxClientCnxns": "0",
            "admin.enableServer": "false",
            # srvr is what we poll; the rest help when debugging sessions (cons, dump) and load (mntr).
            "4lw.commands.whitelist": "srvr,ruok,stat,mntr,cons,dump,wchs,conf,envi",
        }
        if self.host:
            entries["clientPortAddress"] = self.host
        entries.update(self.extra_config)
        return entries

    def write_config(self) -> str:
        """Write zoo.cfg (Java properties; ZooKeeper reads it with java.util.Properties)."""
        os.makedirs(self.data_dir, exist_ok=True)
        os.makedirs(os.path.dirname(self.config_file), exist_ok=True)
        with open(self.config_file, "w", encoding="utf-8") as f:
            f.write(properties.dumps(self.config_entries(), comments="Generated by pylog.zk.server"))
        return self.config_file

    def command(self) -> list[str]:
        """The java command line."""
        classpath = ZOOKEEPER_JAR + (f":{SLF4J_BINDING}" if os.path.exists(SLF4J_BINDING) else "")
        props = [f"-D{LAUNCHER_PROPERTY}={self.launcher}",
                 "-Dzookeeper.jmx.log4j.disable=true",
                 f"-Dorg.slf4j.simpleLogger.defaultLogLevel={self.log_level}",
                 "-Dorg.slf4j.simpleLogger.logFile=System.out",
                 "-Dorg.slf4j.simpleLogger.showDateTime=true",
                 "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss,SSS"]
        if self.source_config:
            props.append(f"-D{CONFIG_PROPERTY}={self.source_config}")
        return [*self.exec_prefix, self.java, *self.jvm_opts, *props, "-cp", classpath, self.main_class,
                self.config_file]

    # ------------------------------------------------------------------ lifecycle

    @property
    def pid(self) -> int | None:
        """pid of the JVM (None before start)."""
        return self.process.pid if self.process else None

    def is_running(self) -> bool:
        """True if the JVM is alive."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> "ZooKeeperProcess":
        """Start the JVM (output appended to log_file) and wait until it serves clients."""
        if self.is_running():
            raise ZooKeeperStartError(f"ZooKeeper already running with pid {self.pid}")
        self.launch()
        try:
            self.wait_until_serving(self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def launch(self) -> None:
        """Write zoo.cfg and start the JVM without waiting (an ensemble's members must all start first)."""
        self.write_config()
        os.makedirs(os.path.dirname(self.log_file), exist_ok=True)
        with open(self.log_file, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=_die_with_parent if self.die_with_parent else None)

    def probe(self) -> bool:
        """True if our JVM listens on the port and serves requests (srvr, or a client handshake if disabled).

        The listening check matters: another server already on the port would answer srvr too.
        """
        if self.process is not None and not listens_on(self.process.pid, self.client_port):
            return False
        host = self.host if self.host and self.host != "0.0.0.0" else "127.0.0.1"
        try:
            reply = four_letter_word(host, self.client_port, "srvr", timeout=1.0)
        except OSError:
            return False
        if "Zookeeper version:" in reply:
            return True
        if "not in the whitelist" in reply:
            return _client_handshake(host, self.client_port)
        return False

    def wait_until_serving(self, timeout: float) -> None:
        """Poll until it serves; ZooKeeperStartError (with the log tail) if it exits or times out."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise ZooKeeperStartError(
                    f"ZooKeeper exited with code {self.process.returncode} during startup on port "
                    f"{self.client_port}. Last lines of {self.log_file}:\n{tail(self.log_file)}")
            if self.probe():
                return
            if time.monotonic() >= deadline:
                raise ZooKeeperStartError(
                    f"ZooKeeper did not start serving on port {self.client_port} within {timeout:g}s. "
                    f"Last lines of {self.log_file}:\n{tail(self.log_file)}")
            time.sleep(0.1)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM by pid, SIGKILL after timeout; returns the exit code (None if never started)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGTERM)
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        return self.process.returncode

    def __enter__(self) -> "ZooKeeperProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _client_handshake(host: str, port: int) -> bool:
    """Connect with kazoo and close: proves the server serves when four-letter words are disabled."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=f"{host}:{port}", timeout=5.0)
    try:
        client.start(timeout=2.0)
        return True
    except Exception:
        return False
    finally:
        client.stop()
        client.close()


# ---------------------------------------------------------------------- command line (bin/ scripts)

def _home() -> str:
    """The repo (PYLOG_HOME from the bin scripts, else the checkout this package lives in)."""
    return os.environ.get("PYLOG_HOME") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def process_from_properties(config_path: str, props: Mapping[str, str], *, log_file: str | None = None,
                            jvm_opts: Sequence[str] = ()) -> ZooKeeperProcess:
    """Build the ZooKeeperProcess a zookeeper.properties describes (every other key passes through)."""
    rest = dict(props)
    if "dataDir" not in rest:
        raise ValueError(f"{config_path}: dataDir is not set")
    try:
        port = int(rest.pop("clientPort"))
        tick = int(rest.pop("tickTime", "3000"))  # ZooKeeper's own default tick
    except KeyError:
        raise ValueError(f"{config_path}: clientPort is not set") from None
    except ValueError as e:
        raise ValueError(f"{config_path}: {e}") from None
    data_dir = rest.pop("dataDir")
    proc = ZooKeeperProcess(data_dir, port, host=rest.pop("clientPortAddress", None), tick_time_ms=tick,
                            config=rest, log_file=log_file, jvm_opts=jvm_opts, launcher="script",
                            start_timeout=float(os.environ.get("PYLOG_ZK_START_TIMEOUT", "60")))
    proc.source_config = os.path.abspath(config_path)
    return proc


def main(argv: Sequence[str] | None = None) -> int:
    """bin/pylog-zookeeper-server-start.sh [-daemon] CONFIG (and --stop [CONFIG] for the stop script)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--stop"]:
        return stop_main(args[1:])
    script = os.environ.get("PYLOG_SCRIPT", "pylog-zookeeper-server-start.sh")
    daemon = "-daemon" in args
    rest = [a for a in args if a not in ("-daemon", "-loggc")]
    if len(rest) != 1:
        print(f"USAGE: {script} [-daemon] zookeeper.properties", file=sys.stderr)
        return 1
    try:
        props = properties.load(rest[0])
    except OSError as e:
        print(f"Cannot read {rest[0]}: {e.strerror}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"Cannot parse {rest[0]}: {e}", file=sys.stderr)
        return 1
    # Same environment knobs as Kafka's kafka-run-class.sh.
    jvm_opts = (os.environ.get("KAFKA_HEAP_OPTS", "-Xmx512M -Xms512M").split()
                + os.environ.get("KAFKA_OPTS", "").split())
    log_dir = os.environ.get("LOG_DIR", os.path.join(_home(), "logs"))
    try:
        proc = process_from_properties(rest[0], props, log_file=os.path.join(log_dir, "zookeeper.out"),
                                       jvm_opts=jvm_opts)
    except ValueError as e:
        print(str(e), file=sys.stderr)
        return 1
    if not daemon:
        proc.write_config()
        sys.stdout.flush()
        os.execvp(proc.java, proc.command())  # foreground: the JVM replaces us and logs to the terminal
    os.makedirs(log_dir, exist_ok=True)
    open(proc.log_file, "wb").close()  # like Kafka's nohup > zookeeper.out: a fresh file per start
    try:
        proc.start()
    except ZooKeeperStartError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


def find_zookeeper_pids(config_path: str | None = None) -> list[int]:
    """pids of ZooKeepers started by the start script (optionally only the one started with config_path)."""
    wanted = [MAIN_CLASS, f"-D{LAUNCHER_PROPERTY}=script"]
    if config_path:
        wanted.append(f"-D{CONFIG_PROPERTY}={os.path.abspath(config_path)}")
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().decode("utf-8", errors="replace").split("\0")
        except OSError:
            continue
        if all(w in args for w in wanted) and pid_alive(int(entry)):
            pids.append(int(entry))
    return sorted(pids)


def pid_alive(pid: int) -> bool:
    """True if pid exists and is not a zombie (an exited JVM nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop_main(argv: Sequence[str]) -> int:
    """bin/pylog-zookeeper-server-stop.sh [CONFIG]: SIGTERM our ZooKeepers, wait for them to exit."""
    pids = find_zookeeper_pids(argv[0] if argv else None)
    if not pids:
        print("No zookeeper server to stop")
        return 1
    signame = os.environ.get("SIGNAL", "TERM")  # Kafka's stop script honours $SIGNAL too
    signum = getattr(signal, f"SIG{signame.upper().removeprefix('SIG')}", None)
    if not isinstance(signum, signal.Signals):
        print(f"Unknown signal {signame}", file=sys.stderr)
        return 1
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + float(os.environ.get("PYLOG_ZK_STOP_TIMEOUT", "30"))
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
