"""Link faults: loss, duplication and slowness on chosen links, inside the nodes' namespaces.

A link is two nodes (two brokers, a broker and ZooKeeper, or a broker and the clients).
Loss is dropped on input at both ends with nftables `numgen random` (an output drop would hand
the sender EPERM, which no real network does); duplication copies packets on egress with
nftables' `dup to "eth0"` in a netdev table; a slow link is a token bucket (`tc qdisc tbf`) on a
node's eth0, which queues (delays) what exceeds its rate and drops past its latency bound.

`delay` and `reorder` use `tc netem` (delay 50 ms +-10 ms; 20% reordered) where the kernel has
it. This machine's kernel is built without netem (CONFIG_NET_SCH_NETEM unset, as are fq and the
other delaying qdiscs), so there a user-space delayer does it (nfqdelay.py): the node's outgoing
packets go to a netfilter queue (`iptables-legacy ... -j NFQUEUE`) and come out after their delay,
in the order their delays end (`detail.delayer: "nfqueue"`). Without iptables either, they fall
back to a slow link and the timeline says so (`detail.netem: "absent"`).

    loss, duplicate   on one link, 5-30% of packets each way
    slow              every link of one node, 1-4 Mbit/s with up to 300 ms of queue
    delay, reorder    everything one node sends (netem, or the nfqueue delayer): 50 ms +-10 ms;
                      20 ms with 20% of packets sent at once, ahead of the held ones
"""

from __future__ import annotations

import random
import select
import shutil
import subprocess
import sys

from pylog.chaos.nemesis.base import Context, Entry, hold
from pylog.chaos.nemesis.net import Node

KINDS = ("loss", "duplicate", "slow", "delay", "reorder")
QUEUE = 7  # the netfilter queue of the delayer (one per namespace)
DELAYS = {"delay": (50, 10, 0), "reorder": (20, 0, 20)}  # ms, +- ms, % sent at once: netem's settings below
_delayers: dict[str, subprocess.Popen] = {}  # node name -> its running delayer


def pick_link(ctx: Context, rng: random.Random) -> tuple[str, str]:
    """A broker and one of: another broker, a ZooKeeper server, the clients."""
    brokers = [f"b{b}" for b in sorted(ctx.cluster.brokers)]
    a = rng.choice(brokers)
    b = rng.choice([n for n in ctx.net.names if n != a])
    return a, b


def lose(a: Node, b: Node, percent: int) -> None:
    """Each end drops `percent`% of what it receives from the other."""
    for x, y in ((a, b), (b, a)):
        x.run("nft", f"add rule inet pylog input ip saddr {y.address} numgen random mod 100 < {percent} drop")


def duplicate(a: Node, b: Node, percent: int) -> None:
    """Each end sends `percent`% of its packets to the other twice."""
    for x, y in ((a, b), (b, a)):
        x.run("nft", "-f", "-", input=f"""table netdev pylogdev {{
    chain egress {{ type filter hook egress device "eth0" priority 0; policy accept;
        ip daddr {y.address} numgen random mod 100 < {percent} dup to "eth0"; }}
}}
""")


def qdisc(node: Node, *spec: str) -> bool:
    """Put a root qdisc on the node's eth0; False when the kernel lacks it."""
    return node.run("tc", "qdisc", "add", "dev", "eth0", "root", *spec, check=False).returncode == 0


def delayer(node: Node, kind: str) -> dict | None:
    """Start the user-space delayer on the node's outgoing packets; its detail, or None where it cannot run."""
    if shutil.which("iptables-legacy") is None:
        return None
    ms, jitter, reorder = DELAYS[kind]
    proc = subprocess.Popen([*node.prefix, sys.executable, "-m", "pylog.chaos.nemesis.nfqdelay", str(QUEUE), str(ms),
                             str(jitter), str(reorder)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    _delayers[node.name] = proc
    ready = select.select([proc.stdout], [], [], 15)[0] and proc.stdout.readline().strip() == "ready"
    # --queue-bypass: should the delayer die, packets pass instead of being dropped.
    if not ready or node.run("iptables-legacy", "-A", "OUTPUT", "-o", "eth0", "-j", "NFQUEUE", "--queue-num",
                             str(QUEUE), "--queue-bypass", check=False).returncode != 0:
        stop_delayer(node)
        return None
    return {"delayer": "nfqueue", "delay_ms": ms, "jitter_ms": jitter, "reorder_percent": reorder}


def stop_delayer(node: Node) -> dict:
    """Take the node's packets off the queue, let the delayer send what it holds and exit; what it delayed."""
    proc = _delayers.pop(node.name, None)
    if proc is None:
        return {}
    node.run("iptables-legacy", "-F", "OUTPUT", check=False)
    proc.terminate()
    try:
        out = proc.communicate(timeout=10)[0].split()
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        return {}
    # "packets N ahead M" is the delayer's last line
    return {"packets": int(out[-3]), "sent_ahead": int(out[-1])} if len(out) >= 4 and out[-4] == "packets" else {}


def clear(nodes: list[Node]) -> None:
    """Remove every link fault from the nodes."""
    for n in nodes:
        stop_delayer(n)
        n.run("nft", "flush chain inet pylog input", check=False)
        n.run("nft", "add rule inet pylog input ip saddr @grudge drop", check=False)
        n.run("nft", "delete table netdev pylogdev", check=False)
        n.run("tc", "qdisc", "del", "dev", "eth0", "root", check=False)


def start(ctx: Context, kind: str, rng: random.Random) -> tuple[list[str], dict]:
    """Install a link fault; (targets, detail)."""
    if kind in ("loss", "duplicate"):
        a, b = pick_link(ctx, rng)
        percent = rng.randint(5, 30)
        (lose if kind == "loss" else duplicate)(ctx.net.node(a), ctx.net.node(b), percent)
        return [a, b], {"percent": percent}
    name = rng.choice([f"b{b}" for b in sorted(ctx.cluster.brokers)] + sorted(ctx.zookeepers))
    node = ctx.net.node(name)
    if kind == "delay" and qdisc(node, "netem", "delay", "50ms", "10ms", "25%", "distribution", "normal"):
        return [name], {"netem": "delay 50ms 10ms"}
    if kind == "reorder" and qdisc(node, "netem", "delay", "20ms", "reorder", "20%", "50%"):
        return [name], {"netem": "reorder 20%"}
    if kind in DELAYS and (detail := delayer(node, kind)) is not None:
        return [name], detail
    mbit = rng.randint(1, 4)
    if not qdisc(node, "tbf", "rate", f"{mbit}mbit", "burst", "32kb", "latency", "300ms"):
        return [name], {"skipped": "no tbf qdisc in this kernel"}
    detail = {"rate_mbit": mbit}
    if kind != "slow":
        detail.update(wanted=kind, netem="absent")
    return [name], detail


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """Degrade a link, hold, restore it."""
    seconds = rng.uniform(0.5, 2.0) * ctx.session_timeout_ms / 1000
    begin = ctx.now()
    targets: list[str] = []
    try:
        targets, detail = start(ctx, kind, rng)
        ctx.log(f"link {kind}: {'<->'.join(targets)} {detail} for {seconds:.1f}s")
        hold(seconds)
    finally:
        counted = stop_delayer(ctx.net.node(targets[0])) if targets else {}
        clear(list(ctx.net.nodes.values()))
    return Entry(begin, ctx.now(), f"link:{kind}", targets, {**detail, **counted})
