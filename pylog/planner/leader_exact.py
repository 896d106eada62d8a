"""Preferred leaders for every group at once by one min-cost flow: exact, for selections small enough.

The staged leadership pass (leaders.py) solves each group alone and repairs the overall counts with paths, which
scales to millions of partitions but can miss the optimum when the groups are small against the brokers. Here
the whole choice is one flow: source -> partition -> (group, broker) -> broker -> sink. A partition's unit costs
one on the arc to a broker other than its leader before the plan; a (group, broker) count outside the group's
floor/ceil costs GROUP a leadership, a broker's total outside the overall floor/ceil OVERALL, with
GROUP >> OVERALL >> every change together. So the flow finds, in order: every group as near within one as its
replicas allow, then the whole, then the fewest changes for that balance: the optimum the oracle checks.
Every arc's cost is shifted by a constant per unit (each partition crosses exactly one arc of each layer), so
only the arcs out of the source cost < 0, as costflow.py requires.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from pylog.planner.costflow import CostFlow

__all__ = ["EXACT_LIMIT", "exact_leaders"]

EXACT_LIMIT = 4000  # replicas (partitions x RF) up to which balance_leaders takes the exact flow: its time grows
# faster than the staged pass's (0.1 s at 1,000 partitions on 100 brokers, 39 s at 10,000)


def exact_leaders(groups: Mapping[str, Sequence[int]], replicas: Sequence[Sequence[int]], brokers: Sequence[int],
                  old: Mapping[int, int], topic_balance: bool) -> dict[int, int]:
    """Partition index -> its preferred leader: groups, then the whole, balanced as far as the replicas allow,
    with the fewest changes from `old` for that balance (partitions without a target replica are left out).

    Where a group (or the whole) cannot be within one, evening it out further is not worth a change: a second
    flow keeps it within the spread the first found and spends changes only where they buy balance within one."""
    leaders = _solve(groups, replicas, brokers, old, topic_balance, {})
    wide: dict[str | None, tuple[int, int]] = {}
    overall: dict[int, int] = dict.fromkeys(brokers, 0)
    for g, idx in groups.items():
        counts = dict.fromkeys(brokers, 0)
        for i in idx:
            if i in leaders:
                counts[leaders[i]] += 1
                overall[leaders[i]] += 1
        if topic_balance and max(counts.values()) - min(counts.values()) > 1:
            wide[g] = (min(counts.values()), max(counts.values()))
    if max(overall.values()) - min(overall.values()) > 1:
        wide[None] = (min(overall.values()), max(overall.values()))
    return _solve(groups, replicas, brokers, old, topic_balance, wide) if wide else leaders


def _solve(groups: Mapping[str, Sequence[int]], replicas: Sequence[Sequence[int]], brokers: Sequence[int],
           old: Mapping[int, int], topic_balance: bool, wide: Mapping[str | None, tuple[int, int]]
           ) -> dict[int, int]:
    """The flow with each group's (and the whole's, key None) floor/ceil, or the range `wide` gives it."""
    targets = set(brokers)
    n = len(brokers)
    options = {i: [b for b in replicas[i] if b in targets] for idx in groups.values() for i in idx}
    total = sum(1 for opts in options.values() if opts)
    overall_unit = total + 1
    group_unit = (2 * total + 2) * overall_unit
    f = CostFlow()
    src, sink = f.node(), f.node()
    broker_node = {b: f.node() for b in brokers}
    lo, r = divmod(sum(len(idx) for idx in groups.values()), n)  # the bounds LeaderStage judges by
    lo, hi = wide.get(None, (lo, lo + (r > 0)))
    for b in brokers:
        _convex(f, broker_node[b], sink, lo, hi, total, overall_unit)
    start = -(2 * group_unit + 2 * overall_unit + 2)
    arcs: dict[int, list[tuple[int, int]]] = {}
    for g, idx in groups.items():
        g_lo, g_r = divmod(len(idx), n)
        g_lo, g_hi = wide.get(g, (g_lo, g_lo + (g_r > 0)))
        at: dict[int, int] = {}
        for i in idx:
            opts = options[i]
            if not opts:
                continue
            p = f.node()
            f.arc(src, p, 1, start)
            arcs[i] = []
            for b in opts:
                v = at.get(b)
                if v is None:
                    v = at[b] = f.node()
                arcs[i].append((f.arc(p, v, 1, 0 if b == old[i] else 1), b))
        for b, v in sorted(at.items()):
            if topic_balance:
                _convex(f, v, broker_node[b], g_lo, g_hi, len(idx), group_unit)
            else:
                f.arc(v, broker_node[b], len(idx), 0)
    f.solve(src, sink)
    return {i: next(b for a, b in out if f.flow(a)) for i, out in arcs.items()}


def _convex(f: CostFlow, u: int, v: int, lo: int, hi: int, most: int, unit: int) -> None:
    """Arcs u -> v whose k-th unit costs 0 up to `lo`, `unit` up to `hi`, 2 * `unit` beyond: a count outside
    [lo, hi] costs `unit` a leadership (plus `unit` a unit, the same for every choice: each partition's unit
    crosses one arc of the layer), so only the source's arcs cost < 0."""
    if lo:
        f.arc(u, v, lo, 0)
    if hi > lo:
        f.arc(u, v, hi - lo, unit)
    if most > hi:
        f.arc(u, v, most - hi, 2 * unit)
