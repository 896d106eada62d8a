"""pylog-zookeeper-shell: kafka-zookeeper-shell.sh (ZooKeeperMain of ZooKeeper 3.8, which Kafka 3.9 ships).

`pylog-zookeeper-shell.sh HOST:PORT[/chroot] [COMMAND ARGS...]` runs one command; without a command it
reads commands from stdin, one per line (ZooKeeperMain without JLine). Commands and texts are
ZooKeeperMain's: ls [-s] [-R], get [-s], stat, set [-s] [-v version], create [-s] [-e] [-c], delete
[-v version], deleteall; `Created /path` and errors such as `Node does not exist: /path` on stderr,
exit 1 after a failed command. Paths are under the chroot, as Kafka's brokers see them. A login from
KAFKA_OPTS (java.security.auth.login.config) is used as Kafka's tools use it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

from kazoo.client import KazooClient
from kazoo.exceptions import (BadArgumentsError, BadVersionError, KazooException, NoAuthError, NodeExistsError,
                              NoNodeError, NotEmptyError)
from kazoo.security import OPEN_ACL_UNSAFE

USAGE = "USAGE: pylog-zookeeper-shell.sh zookeeper_host:port[/path] [args...]"
COMMANDS = {"ls": "[-s] [-w] [-R] path", "get": "[-s] [-w] path", "stat": "[-w] path",
            "set": "[-s] [-v version] path data", "create": "[-s] [-e] [-c] [-t ttl] path [data] [acl]",
            "delete": "[-v version] path", "deleteall": "path [-b batch size]", "quit": ""}
_ERRORS = ((NoNodeError, "Node does not exist: "), (NodeExistsError, "Node already exists: "),
           (NotEmptyError, "Node not empty: "), (NoAuthError, "Insufficient permission : "),
           (BadArgumentsError, "Arguments are not valid : "), (BadVersionError, "version No is not valid : "))


class CliError(Exception):
    """A command that failed: ZooKeeperMain prints the message on stderr and exits 1."""


def java_date(ms: int) -> str:
    """java.util.Date.toString: `Sun Nov 29 00:21:03 UTC 2026`."""
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(ms / 1000))


def stat_lines(stat: Any) -> list[str]:
    """ZooKeeper's StatPrinter."""
    return [f"cZxid = {hex(stat.czxid)}", f"ctime = {java_date(stat.ctime)}", f"mZxid = {hex(stat.mzxid)}",
            f"mtime = {java_date(stat.mtime)}", f"pZxid = {hex(stat.pzxid)}", f"cversion = {stat.cversion}",
            f"dataVersion = {stat.version}", f"aclVersion = {stat.aversion}",
            f"ephemeralOwner = {hex(stat.ephemeralOwner)}", f"dataLength = {stat.dataLength}",
            f"numChildren = {stat.numChildren}"]


def _split_options(args: list[str], with_value: set[str]) -> tuple[dict[str, str | bool], list[str]]:
    opts: dict[str, str | bool] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) == 2 and not rest[1:]:
            if a[1] in with_value:
                if i + 1 >= len(args):
                    raise CliError(f"Missing argument for option: {a[1]}")
                opts[a[1]] = args[i + 1]
                i += 2
                continue
            opts[a[1]] = True
        else:
            rest.append(a)
        i += 1
    return opts, rest


class Shell:
    """The commands over one kazoo session; `out` and `err` take whole lines."""

    def __init__(self, zk: KazooClient, out: Callable[[str], None], err: Callable[[str], None]) -> None:
        self.zk, self.out, self.err = zk, out, err

    def run(self, words: list[str]) -> None:
        """One command line, split into words; CliError when it fails."""
        cmd, args = words[0], words
        if cmd not in COMMANDS:
            self.usage()
            raise CliError(f"Command not found {cmd}")
        opts, rest = _split_options(args[1:], {"v", "t", "b"})
        path_needed = {"ls": 1, "get": 1, "stat": 1, "set": 2, "create": 1, "delete": 1, "deleteall": 1}
        if cmd != "quit" and len(rest) < path_needed[cmd]:
            raise CliError(f"{cmd} {COMMANDS[cmd]}")
        try:
            getattr(self, f"cmd_{cmd}")(opts, rest)
        except KazooException as exc:
            for kind, text in _ERRORS:
                if isinstance(exc, kind):
                    raise CliError(text + rest[0]) from None
            raise CliError(f"{type(exc).__name__}: {exc}") from None
        except ValueError as exc:  # kazoo's path validation
            raise CliError(str(exc)) from None

    def usage(self) -> None:
        """ZooKeeperMain.usage on stderr."""
        self.err("ZooKeeper -server host:port -client-configuration properties-file cmd args")
        for name in sorted(COMMANDS):
            self.err(f"\t{name} {COMMANDS[name]}")

    def cmd_ls(self, opts: dict, rest: list[str]) -> None:
        path = rest[0]
        if opts.get("R"):
            self._walk(path)
            return
        children, stat = self.zk.get_children(path, include_data=True)
        self.out("[" + ", ".join(sorted(children)) + "]")
        if opts.get("s"):
            for line in stat_lines(stat):
                self.out(line)

    def _walk(self, path: str) -> None:
        self.zk.exists(path) or self.zk.get(path)  # NoNodeError for a missing root, like ZKUtil
        queue = [path]
        while queue:  # ZKUtil.visitSubTreeDFS prints in breadth-first order of listSubTreeBFS
            node = queue.pop(0)
            self.out(node)
            for child in sorted(self.zk.get_children(node)):
                queue.append(f"{node.rstrip('/')}/{child}")

    def cmd_get(self, opts: dict, rest: list[str]) -> None:
        data, stat = self.zk.get(rest[0])
        self.out("null" if data is None else data.decode("utf-8", "replace"))
        if opts.get("s"):
            for line in stat_lines(stat):
                self.out(line)

    def cmd_stat(self, opts: dict, rest: list[str]) -> None:
        stat = self.zk.exists(rest[0])
        if stat is None:
            raise NoNodeError()
        for line in stat_lines(stat):
            self.out(line)

    def cmd_set(self, opts: dict, rest: list[str]) -> None:
        stat = self.zk.set(rest[0], rest[1].encode(), version=int(opts.get("v", -1)))
        if opts.get("s"):
            for line in stat_lines(stat):
                self.out(line)

    def cmd_create(self, opts: dict, rest: list[str]) -> None:
        if opts.get("c") and (opts.get("e") or opts.get("s")):
            raise CliError("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
        data = rest[1].encode() if len(rest) > 1 else b""
        created = self.zk.create(rest[0], data, acl=self.zk.default_acl or OPEN_ACL_UNSAFE,
                                 ephemeral=bool(opts.get("e")), sequence=bool(opts.get("s")))
        self.err(f"Created {created}")

    def cmd_delete(self, opts: dict, rest: list[str]) -> None:
        self.zk.delete(rest[0], version=int(opts.get("v", -1)))

    def cmd_deleteall(self, opts: dict, rest: list[str]) -> None:
        self.zk.delete(rest[0], recursive=True)

    def cmd_quit(self, opts: dict, rest: list[str]) -> None:
        raise SystemExit(0)


def _connect(server: str, timeout_s: float) -> KazooClient:
    from pylog.security.zk_login import zk_login
    login = zk_login(None)
    zk = KazooClient(hosts=server, timeout=timeout_s, auth_data=list(login.auth_data) if login else None)
    zk.start(timeout=timeout_s)
    return zk


def main(argv: list[str] | None = None) -> int:
    """Console entry point (bin/pylog-zookeeper-shell.sh, `pylog-zookeeper-shell`)."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(USAGE + "\n\n" + (__doc__ or "").strip(), file=sys.stderr if not args else sys.stdout)
        return 1 if not args else 0
    server, command = args[0], args[1:]

    def out(line: str) -> None:
        print(line, flush=True)

    def err(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    out(f"Connecting to {server}")
    try:
        zk = _connect(server, 30.0)
    except Exception as exc:  # kazoo's timeout: ZooKeeperMain says CONNECTIONLOSS and gives up
        err(f"KeeperErrorCode = ConnectionLoss (could not connect to {server} in 30 s: {exc})")
        return 1
    out("\nWATCHER::")
    out("\nWatchedEvent state:SyncConnected type:None path:null")
    shell, status = Shell(zk, out, err), 0
    try:
        lines = [command] if command else (line.split() for line in sys.stdin)
        if not command:
            out("Welcome to ZooKeeper!")
            out("JLine support is disabled")
        for words in lines:
            if not words:
                continue
            try:
                shell.run(words)
                status = 0
            except CliError as exc:
                err(str(exc))
                status = 1  # ZooKeeperMain's exit status after a failed command
    except SystemExit:
        pass
    finally:
        zk.stop()
        zk.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
