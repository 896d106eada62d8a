"""Network partitions: nodes stop hearing from the nodes they hold a grudge against (Jepsen's model).

A grudge is node -> the nodes whose packets it drops on input (nftables set `inet pylog grudge`
in its namespace); dropping on both sides cuts a link, on one side only is a one-way drop. The
clients' node is never cut unless the variant says so, so "the leader cut from ZooKeeper" leaves
it reachable by clients and followers, as in Jepsen's 2013 Kafka analysis.

    one            a random broker cut from every other node, clients included
    leader-zk      a partition leader cut from ZooKeeper only
    controller-zk  the controller cut from ZooKeeper only
    halves         brokers and ZooKeeper split into a majority and a minority (clients see both)
    bridge         two halves that only one node (the bridge) sees both of
    one-way        one broker stops hearing another broker or ZooKeeper (the other still hears it)

Each lasts 0.5-2.5 session timeouts, so some outlast ZooKeeper's session expiry and some do not.
"""

from __future__ import annotations

import random

from pylog.chaos.nemesis.base import Context, Entry, hold

KINDS = ("one", "leader-zk", "controller-zk", "halves", "bridge", "one-way")


def complete(a: list[str], b: list[str]) -> dict[str, set[str]]:
    """The grudge of a full cut between groups a and b."""
    g: dict[str, set[str]] = {}
    for x in a:
        g.setdefault(x, set()).update(b)
    for y in b:
        g.setdefault(y, set()).update(a)
    return g


def bridge(nodes: list[str]) -> dict[str, set[str]]:
    """Two halves cut from each other except the middle node, which sees both (Jepsen's bridge)."""
    mid = len(nodes) // 2
    return complete(nodes[:mid], nodes[mid + 1:])


def apply(ctx: Context, grudge: dict[str, set[str]]) -> None:
    """Install a grudge: each node drops what it receives from the nodes in its set."""
    for name, others in grudge.items():
        if others:
            addrs = ", ".join(ctx.net.node(o).address for o in sorted(others))
            ctx.net.node(name).run("nft", f"add element inet pylog grudge {{ {addrs} }}")


def heal(ctx: Context) -> None:
    """Every node hears everyone again."""
    for node in ctx.net.nodes.values():
        node.run("nft", "flush set inet pylog grudge", check=False)


def grudge_for(ctx: Context, kind: str, rng: random.Random) -> tuple[dict[str, set[str]], dict]:
    """The grudge of a variant and what it targeted."""
    zks = sorted(ctx.zookeepers)
    servers = ctx.server_nodes()
    if kind == "one":
        victim = f"b{rng.choice(sorted(ctx.cluster.brokers))}"
        return complete([victim], [n for n in ctx.net.names if n != victim]), {"isolated": victim}
    if kind == "leader-zk":
        bid = ctx.leader(rng)
        return complete([f"b{bid}"], zks), {"isolated": f"b{bid}", "role": "leader", "from": "zookeeper"}
    if kind == "controller-zk":
        bid = ctx.controller(rng)
        return complete([f"b{bid}"], zks), {"isolated": f"b{bid}", "role": "controller", "from": "zookeeper"}
    shuffled = servers[:]
    rng.shuffle(shuffled)
    if kind == "halves":
        cut = len(shuffled) // 2
        return complete(shuffled[:cut], shuffled[cut:]), {"minority": shuffled[:cut]}
    if kind == "bridge":
        return bridge(shuffled), {"bridge": shuffled[len(shuffled) // 2]}
    if kind == "one-way":
        deaf = f"b{rng.choice(sorted(ctx.cluster.brokers))}"
        source = rng.choice([n for n in servers if n != deaf])
        return {deaf: {source}}, {"drops_from": source}
    raise ValueError(f"unknown partition {kind!r}")


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """Partition, hold, heal."""
    grudge, detail = grudge_for(ctx, kind, rng)
    seconds = rng.uniform(0.5, 2.5) * ctx.session_timeout_ms / 1000
    targets = sorted(n for n, g in grudge.items() if g)
    ctx.log(f"partition {kind}: {', '.join(f'{n} drops {sorted(g)}' for n, g in sorted(grudge.items()) if g)} "
            f"for {seconds:.1f}s")
    start = ctx.now()
    try:
        apply(ctx, grudge)
        hold(seconds)
    finally:
        heal(ctx)
    return Entry(start, ctx.now(), f"partition:{kind}", targets, detail)
