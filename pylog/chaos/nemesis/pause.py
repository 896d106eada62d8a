"""Process pauses: SIGSTOP then SIGCONT of a broker by role, or of a ZooKeeper server.

Short pauses (0.3-0.7 session timeouts) keep the ZooKeeper session, like a GC pause; long ones
(1.5-2.5) outlast it, so the broker comes back as a zombie whose registration and leaderships
are gone. Pausing ZooKeeper freezes every session's clock on the server side: when it resumes,
clients that could not reach it meanwhile may all be expired at once.

    leader, controller, coordinator, random   a broker with that role (the group coordinator
                                              of the chaos consumer group)
    zk                                        a ZooKeeper server
"""

from __future__ import annotations

import random

from pylog.chaos.nemesis.base import Context, Entry, hold

ROLES = ("leader", "controller", "coordinator", "random", "zk")
KINDS = tuple(f"{role}-{length}" for role in ROLES for length in ("short", "long"))


def coordinator(ctx: Context, rng: random.Random) -> int:
    """The broker coordinating the chaos consumer group (pylog/chaos/groups.py's), or a random broker."""
    from pylog.chaos.groups import coordinator as group_coordinator
    try:
        return group_coordinator(ctx.cluster.bootstrap, timeout=10)
    except Exception:
        return rng.choice(sorted(ctx.cluster.brokers))


def victim(ctx: Context, role: str, rng: random.Random) -> tuple[str, int]:
    """(node name, pid) of the process a variant pauses."""
    if role == "zk":
        name = rng.choice(sorted(ctx.zookeepers))
        return name, ctx.zookeepers[name].pid
    if role == "leader":
        bid = ctx.leader(rng)
    elif role == "controller":
        bid = ctx.controller(rng)
    elif role == "coordinator":
        bid = coordinator(ctx, rng)
    else:
        bid = rng.choice(sorted(ctx.cluster.brokers))
    return f"b{bid}", ctx.cluster.brokers[bid].pid


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """Pause, hold, resume."""
    role, length = kind.rsplit("-", 1)
    factor = rng.uniform(0.3, 0.7) if length == "short" else rng.uniform(1.5, 2.5)
    seconds = factor * ctx.session_timeout_ms / 1000
    name, pid = victim(ctx, role, rng)
    ctx.log(f"pause {kind}: {name} (pid {pid}) for {seconds:.1f}s")
    start = ctx.now()
    ctx.stop(pid)
    try:
        hold(seconds)
    finally:
        ctx.cont(pid)
    return Entry(start, ctx.now(), f"pause:{kind}", [name], {"session_timeouts": round(factor, 2)})
