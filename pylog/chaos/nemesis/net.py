"""A private network per chaos run: one network namespace per node, joined by a bridge in a hub namespace.

Every node (each ZooKeeper, each broker, the clients) gets a namespace `pl<run>-<node>` whose only
interfaces are `lo` and `eth0`, a veth into the bridge of `pl<run>-hub`, with the address
10.77.0.<n>/24 and no default route: nothing in it can reach an address outside the run, and
since the bridge lives in its own namespace, two runs on one machine never see each other (they
may even use the same addresses). Processes start inside a node with `ip netns exec`, which execs
the command itself, so the pid we keep is the process's own.

Per-node namespaces were chosen over per-node 127.0.0.x addresses in one namespace because the
broker's outgoing connections (replica fetchers, the controller's channels, the ZooKeeper client)
would all have to bind their own source address for address-keyed rules to mean anything; with a
namespace per node the kernel gives every process its node's address and nothing in pylog changes.

Faults act inside a node's namespace: nftables rules in the table `inet pylog` (partitions drop
what a node receives from the nodes it holds a grudge against, as Jepsen's iptables rules do),
`netdev pylog` on eth0 (duplication), and qdiscs on eth0 (delay where the kernel has netem).
Teardown kills every process still in the run's namespaces by pid and deletes the namespaces;
namespaces left by a run whose creator died are removed by the next run (the registry in
/run/pylog-netns names each run's creator pid).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from pylog.zk.server import pid_alive

SUBNET = "10.77.0"
REGISTRY = Path("/run/pylog-netns")


class NetError(RuntimeError):
    """A namespace, link or rule could not be set up (the message carries the command's stderr)."""


def sh(*cmd: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    """Run a command; NetError with its stderr when it fails and `check` is set."""
    proc = subprocess.run(list(cmd), input=input, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise NetError(f"{' '.join(cmd)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def capability() -> str:
    """'' when this process can build a private network (root, ip, nft), else why not."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
    for tool in ("ip", "nft", "unshare"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (scripts/setup installs iproute2 and nftables)"
    probe = sh("unshare", "--net", "--mount", "true", check=False)  # root without CAP_SYS_ADMIN (a container)
    if probe.returncode != 0:
        return f"cannot create namespaces here: {probe.stderr.strip()}"
    return ""


@dataclass
class Node:
    """One node of the run's network."""

    name: str
    netns: str
    address: str

    @property
    def prefix(self) -> list[str]:
        """The command prefix that runs a process inside this node."""
        return ["ip", "netns", "exec", self.netns]

    def run(self, *cmd: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        """Run a command inside the node's namespace."""
        return sh(*self.prefix, *cmd, check=check, input=input)


@dataclass
class PrivateNet:
    """The run's namespaces: build with `up()`, always end with `down()`."""

    names: list[str]
    run_id: str = field(default_factory=lambda: secrets.token_hex(2))
    nodes: dict[str, Node] = field(default_factory=dict)

    @property
    def hub(self) -> str:
        """The namespace holding the bridge."""
        return f"pl{self.run_id}-hub"

    def up(self) -> "PrivateNet":
        """Create the hub, the bridge and one namespace per node with its address."""
        reap_stale()
        REGISTRY.mkdir(parents=True, exist_ok=True)
        (REGISTRY / self.run_id).write_text(f"{os.getpid()}\n")
        try:
            sh("ip", "netns", "add", self.hub)
            sh("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
            sh("ip", "-n", self.hub, "link", "set", "br0", "up")
            sh("ip", "-n", self.hub, "link", "set", "lo", "up")
            for i, name in enumerate(self.names):
                self._add_node(i, name)
        except BaseException:
            self.down()
            raise
        return self

    def _add_node(self, i: int, name: str) -> None:
        ns, addr = f"pl{self.run_id}-{name}", f"{SUBNET}.{10 + i}"
        host_end, node_end = f"v{self.run_id}h{i}", f"v{self.run_id}n{i}"
        sh("ip", "netns", "add", ns)
        self.nodes[name] = Node(name, ns, addr)
        sh("ip", "-n", self.hub, "link", "add", host_end, "type", "veth", "peer", "name", node_end, "netns", ns)
        sh("ip", "-n", self.hub, "link", "set", host_end, "master", "br0", "up")
        sh("ip", "-n", ns, "link", "set", node_end, "name", "eth0")
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.nodes[name].run("nft", "-f", "-", input=_BASE_RULES)

    def node(self, name: str) -> Node:
        """A node by name (b0, zk1, cl, ...)."""
        return self.nodes[name]

    def by_address(self) -> dict[str, str]:
        """Node name by address."""
        return {n.address: n.name for n in self.nodes.values()}

    def down(self) -> None:
        """Kill every process left in the run's namespaces (by pid) and delete the namespaces."""
        spaces = [n.netns for n in self.nodes.values()] + [self.hub]
        kill_namespace_pids(spaces)
        for ns in spaces:
            sh("ip", "netns", "del", ns, check=False)
        (REGISTRY / self.run_id).unlink(missing_ok=True)

    def to_json(self) -> dict:
        """What a process started inside the run needs to act on the namespaces."""
        return {"run_id": self.run_id, "names": self.names,
                "nodes": {n.name: [n.netns, n.address] for n in self.nodes.values()}}

    @classmethod
    def from_json(cls, data: dict) -> "PrivateNet":
        """The network a parent process built (no namespace is created)."""
        net = cls(list(data["names"]), data["run_id"])
        net.nodes = {name: Node(name, ns, addr) for name, (ns, addr) in data["nodes"].items()}
        return net


# Partitions: `grudge` holds the addresses a node does not hear from; links: loss on what it sends.
_BASE_RULES = """
table inet pylog {
    set grudge { type ipv4_addr; }
    chain input { type filter hook input priority 0; policy accept; ip saddr @grudge drop; }
    chain output { type filter hook output priority 0; policy accept; }
}
"""


def namespace_pids(netns: str) -> list[int]:
    """pids of the processes inside a namespace."""
    out = sh("ip", "netns", "pids", netns, check=False).stdout
    return [int(p) for p in out.split() if p.isdigit()]


def kill_namespace_pids(spaces: list[str], grace: float = 5.0) -> None:
    """SIGCONT + SIGTERM every process in the namespaces, SIGKILL what is left after `grace` seconds."""
    me = os.getpid()
    pids = [p for ns in spaces for p in namespace_pids(ns) if p != me]
    for sig in (signal.SIGCONT, signal.SIGTERM):  # a paused process would ignore SIGTERM
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if pid_alive(p)]
        time.sleep(0.1)
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def reap_stale() -> None:
    """Delete the namespaces of runs whose creating process is gone (a SIGKILLed run leaves them)."""
    if not REGISTRY.is_dir():
        return
    listed = sh("ip", "netns", "list", check=False).stdout.split()
    for entry in REGISTRY.iterdir():
        try:
            pid = int(entry.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pid = -1
        if pid > 0 and pid_alive(pid):
            continue
        spaces = [ns for ns in listed if ns.startswith(f"pl{entry.name}-")]
        kill_namespace_pids(spaces)
        for ns in spaces:
            sh("ip", "netns", "del", ns, check=False)
        entry.unlink(missing_ok=True)
