"""An exact oracle for small planner instances: min-cost flow with lower bounds (tests and `bench --oracle`).

Placing replicas is a network flow: partition p -> (p, rack k) [bounds from the rack rule] -> (group g, broker b)
[capacity 1: distinct brokers; cost 0 if b holds p now, else 1] -> broker b [per-group bounds] -> sink [overall
bounds]. Flows are integral, so the min-cost flow is the fewest replica moves over every assignment meeting the
bounds, and "no feasible flow" proves the bounds cannot be met. Bellman-Ford paths: a handful of partitions only.

Leaders, for given replica sets (`leader_optimum`): partition p -> (topic, broker b) for each replica b [cost 1
unless b led p before] -> broker b [the topic's floor/ceil] -> sink [the overall floor/ceil]: the min-cost flow is
the fewest preferred-leader changes of any leader choice balanced per topic and overall. `fewest_orphans` prices
the replica flow at (moves, then partitions whose leader's replica moves away): every such partition changes
leader, so it is a lower bound on leader changes over every plan with the fewest moves.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["MinCostFlow", "optimum", "balanced_bounds", "topic_bounds", "leader_optimum", "fewest_orphans"]

INF = 10**9


class MinCostFlow:
    """Successive shortest paths (Bellman-Ford) with lower bounds; fine for a few hundred edges."""

    def __init__(self) -> None:
        self.graph: list[list[list[int]]] = []
        self.excess: list[int] = []
        self.base_cost = 0

    def node(self) -> int:
        """A new node's index."""
        self.graph.append([])
        self.excess.append(0)
        return len(self.graph) - 1

    def edge(self, u: int, v: int, lo: int, hi: int, cost: int = 0) -> None:
        """u -> v carrying between lo and hi units at `cost` each."""
        if not 0 <= lo <= hi:
            raise ValueError(f"bad bounds [{lo}, {hi}]")
        self.excess[v] += lo
        self.excess[u] -= lo
        self.base_cost += lo * cost
        if hi > lo:
            self.graph[u].append([v, hi - lo, cost, len(self.graph[v])])
            self.graph[v].append([u, 0, -cost, len(self.graph[u]) - 1])

    def solve(self) -> int | None:
        """Min total cost of a flow meeting every bound, or None when none exists."""
        s, t = self.node(), self.node()
        need = 0
        for v, ex in enumerate(self.excess[:-2]):
            if ex > 0:
                self._arc(s, v, ex)
                need += ex
            elif ex < 0:
                self._arc(v, t, -ex)
        cost = self.base_cost
        n = len(self.graph)
        while need:
            dist = [INF] * n
            prev: list[tuple[int, int] | None] = [None] * n
            dist[s] = 0
            changed = True
            while changed:
                changed = False
                for u in range(n):
                    if dist[u] == INF:
                        continue
                    for i, (v, cap, c, _) in enumerate(self.graph[u]):
                        if cap > 0 and dist[u] + c < dist[v]:
                            dist[v] = dist[u] + c
                            prev[v] = (u, i)
                            changed = True
            if dist[t] == INF:
                return None
            push, v = need, t
            while v != s:
                u, i = prev[v]
                push = min(push, self.graph[u][i][1])
                v = u
            v = t
            while v != s:
                u, i = prev[v]
                arc = self.graph[u][i]
                arc[1] -= push
                self.graph[v][arc[3]][1] += push
                v = u
            need -= push
            cost += push * dist[t]
        return cost

    def _arc(self, u: int, v: int, cap: int) -> None:
        self.graph[u].append([v, cap, 0, len(self.graph[v])])
        self.graph[v].append([u, 0, 0, len(self.graph[u]) - 1])


def optimum(partitions: Sequence, targets: Sequence[int], racks: Mapping[int, str | None],
            broker_bounds: Mapping[int, tuple[int, int]] | None,
            group_bounds: Mapping[tuple[str, int], tuple[int, int]] | None = None,
            per_topic: bool = True, keep_leader_bonus: int = 0) -> int | None:
    """Fewest moves over valid assignments with per-broker (and per (topic, broker)) counts within bounds.

    `partitions` are planner Partitions; racks of target brokers (None = rack-unaware).
    Returns None when no valid assignment meets the bounds. With `keep_leader_bonus` = w, a move costs w and
    keeping a partition's leader broker among its replicas earns 1 (see `fewest_orphans`).
    """
    targets = sorted(targets)
    rack_names = sorted({racks[b] for b in targets if racks.get(b) is not None})
    m = max(1, len(rack_names))
    rack_of = {b: (rack_names.index(racks[b]) if rack_names else 0) for b in targets}
    size = {k: sum(1 for b in targets if rack_of[b] == k) for k in range(m)}
    f = MinCostFlow()
    src, sink = f.node(), f.node()
    total = sum(len(p.replicas) for p in partitions)
    f.edge(sink, src, total, total)
    broker_node = {b: f.node() for b in targets}
    for b in targets:
        lo, hi = broker_bounds[b] if broker_bounds else (0, total)
        f.edge(broker_node[b], sink, lo, hi)
    gb_node: dict[tuple[str, int], int] = {}
    for p in partitions:
        g = p.topic if per_topic else ""
        for b in targets:
            if (g, b) not in gb_node:
                gb_node[(g, b)] = f.node()
                lo, hi = group_bounds.get((g, b), (0, total)) if group_bounds else (0, total)
                f.edge(gb_node[(g, b)], broker_node[b], lo, hi)
    for p in partitions:
        g = p.topic if per_topic else ""
        rf = len(p.replicas)
        pn = f.node()
        f.edge(src, pn, rf, rf)
        for k in range(m):
            if m == 1:
                lo, hi = 0, rf
            elif rf <= m:
                lo, hi = 0, 1
            else:
                lo, hi = 1, min(size[k], rf - m + 1)
            kn = f.node()
            f.edge(pn, kn, lo, hi)
            for b in targets:
                if rack_of[b] == k:
                    if keep_leader_bonus:
                        cost = -(b == p.replicas[0]) if b in p.replicas else keep_leader_bonus
                    else:
                        cost = 0 if b in p.replicas else 1
                    f.edge(kn, gb_node[(g, b)], 0, 1, cost)
    return f.solve()


def balanced_bounds(partitions: Sequence, targets: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Per-broker bounds for "within one": floor/ceil of the average."""
    total = sum(len(p.replicas) for p in partitions)
    lo = total // len(targets)
    return {b: (lo, lo + (total % len(targets) > 0)) for b in targets}


def topic_bounds(partitions: Sequence, targets: Sequence[int]) -> dict[tuple[str, int], tuple[int, int]]:
    """Per-(topic, broker) bounds for "within one per topic"."""
    totals: dict[str, int] = {}
    for p in partitions:
        totals[p.topic] = totals.get(p.topic, 0) + len(p.replicas)
    n = len(targets)
    return {(t, b): (r // n, r // n + (r % n > 0)) for t, r in totals.items() for b in targets}


def leader_optimum(topics: Sequence[str], old_leaders: Sequence[int], proposed: Sequence[Sequence[int]],
                   targets: Sequence[int], per_topic: bool | set[str] = True, overall: bool = True) -> int | None:
    """Fewest preferred-leader changes over leader choices among `proposed` replicas (target brokers only)
    with leaders within one per topic (every topic if `per_topic` is True, else those in it) and overall (if
    `overall`); None when none exists."""
    n = len(targets)
    f = MinCostFlow()
    src, sink = f.node(), f.node()
    total = len(proposed)
    f.edge(sink, src, total, total)
    lo, r = divmod(total, n)
    broker_node = {b: f.node() for b in targets}
    for b in targets:
        f.edge(broker_node[b], sink, *((lo, lo + (r > 0)) if overall else (0, total)))
    sizes: dict[str, int] = {}
    for t in topics:
        sizes[t] = sizes.get(t, 0) + 1
    tb_node: dict[tuple[str, int], int] = {}
    for t, size in sizes.items():
        t_lo, t_r = divmod(size, n)
        for b in targets:
            tb_node[(t, b)] = f.node()
            bounded = per_topic is True or (per_topic and t in per_topic)
            f.edge(tb_node[(t, b)], broker_node[b], *((t_lo, t_lo + (t_r > 0)) if bounded else (0, size)))
    for t, old, reps in zip(topics, old_leaders, proposed):
        pn = f.node()
        f.edge(src, pn, 1, 1)
        for b in reps:
            if b in broker_node:
                f.edge(pn, tb_node[(t, b)], 0, 1, 0 if b == old else 1)
    return f.solve()


def fewest_orphans(partitions: Sequence, targets: Sequence[int], racks: Mapping[int, str | None],
                   broker_bounds: Mapping[int, tuple[int, int]] | None,
                   group_bounds: Mapping[tuple[str, int], tuple[int, int]] | None = None,
                   per_topic: bool = True) -> int | None:
    """Among the assignments `optimum` minimises moves over, the fewest partitions whose leader's replica moves."""
    weight = 4 * sum(len(p.replicas) for p in partitions) + 4
    best = optimum(partitions, targets, racks, broker_bounds, group_bounds, per_topic, keep_leader_bonus=weight)
    if best is None:
        return None
    moves = -(-best // weight)           # best = moves * weight - leaders kept
    return len(partitions) - (moves * weight - best)
