"""Link faults: loss, duplication and slowness on chosen links, inside the nodes' namespaces.

A link is two nodes (two brokers, a broker and ZooKeeper, or a broker and the clients).
Loss is dropped on input at both ends with nftables `numgen random` (an output drop would hand
the sender EPERM, which no real network does); duplication copies packets on egress with
nftables' `dup to "eth0"` in a netdev table; a slow link is a token bucket (`tc qdisc tbf`) on a
node's eth0, which queues (delays) what exceeds its rate and drops past its latency bound.

`delay` and `reorder` use `tc netem` (delay 50 ms +-10 ms; 20% reordered) where the kernel has
it. This machine's kernel is built without netem (CONFIG_NET_SCH_NETEM unset, as are fq and the
other delaying qdiscs), so there they fall back to a slow link and the timeline says so
(`detail.netem: "absent"`).

    loss, duplicate   on one link, 5-30% of packets each way
    slow              every link of one node, 1-4 Mbit/s with up to 300 ms of queue
    delay, reorder    on every link of one node (netem; a slow link without it)
"""

from __future__ import annotations

import random

from pylog.chaos.nemesis.base import Context, Entry, hold
from pylog.chaos.nemesis.net import Node

KINDS = ("loss", "duplicate", "slow", "delay", "reorder")


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


def clear(nodes: list[Node]) -> None:
    """Remove every link fault from the nodes."""
    for n in nodes:
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
        clear(list(ctx.net.nodes.values()))
    return Entry(begin, ctx.now(), f"link:{kind}", targets, detail)
