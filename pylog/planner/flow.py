"""A small max-flow with lower bounds (Dinic), for the planner's rack-level questions.

The rack-level graphs have a handful of nodes (replication-factor classes and racks), so exactness is cheap:
"can the racks hold balanced totals?" is a feasible-flow question.
"""
from __future__ import annotations

from collections import deque

__all__ = ["FlowNetwork", "INF"]

INF = 1 << 60


class FlowNetwork:
    """Nodes 0..n-1, edges with [lo, hi] bounds; `feasible()` finds a flow meeting every bound (a circulation)."""

    def __init__(self, n_nodes: int = 0) -> None:
        self.n = n_nodes
        self.edges: list[tuple[int, int, int, int]] = []  # (u, v, lo, hi)
        self._flow: list[int] = []

    def add_node(self) -> int:
        """A new node's index."""
        self.n += 1
        return self.n - 1

    def add_edge(self, u: int, v: int, lo: int, hi: int) -> int:
        """Add u -> v carrying between lo and hi units; returns the edge's index."""
        if not 0 <= lo <= hi:
            raise ValueError(f"bad bounds [{lo}, {hi}]")
        self.edges.append((u, v, lo, hi))
        return len(self.edges) - 1

    def feasible(self) -> bool:
        """True when a circulation meets every edge's bounds (add a t -> s edge for an s-t flow)."""
        n = self.n + 2
        s, t = self.n, self.n + 1
        graph: list[list[list[int]]] = [[] for _ in range(n)]  # arc = [to, cap, rev index]
        excess = [0] * self.n
        refs = []
        for u, v, lo, hi in self.edges:
            excess[v] += lo
            excess[u] -= lo
            refs.append((u, len(graph[u])))
            _arc(graph, u, v, hi - lo)
        need = 0
        for v, ex in enumerate(excess):
            if ex > 0:
                _arc(graph, s, v, ex)
                need += ex
            elif ex < 0:
                _arc(graph, v, t, -ex)
        got = _dinic(graph, s, t)
        self._flow = [lo + (hi - lo - graph[u][i][1]) for (u, i), (_, _, lo, hi) in zip(refs, self.edges)]
        return got == need

    def flow(self, edge: int) -> int:
        """Units on `edge` in the flow found by the last `feasible()`."""
        return self._flow[edge]


def _arc(graph: list[list[list[int]]], u: int, v: int, cap: int) -> None:
    graph[u].append([v, cap, len(graph[v])])
    graph[v].append([u, 0, len(graph[u]) - 1])


def _dinic(graph: list[list[list[int]]], s: int, t: int) -> int:
    total = 0
    n = len(graph)
    while True:
        level = [-1] * n
        level[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v, cap, _ in graph[u]:
                if cap > 0 and level[v] < 0:
                    level[v] = level[u] + 1
                    queue.append(v)
        if level[t] < 0:
            return total
        it = [0] * n

        def push(u: int, f: int) -> int:
            if u == t:
                return f
            while it[u] < len(graph[u]):
                arc = graph[u][it[u]]
                v, cap, rev = arc
                if cap > 0 and level[v] == level[u] + 1:
                    got = push(v, min(f, cap))
                    if got:
                        arc[1] -= got
                        graph[v][rev][1] += got
                        return got
                it[u] += 1
            return 0

        while True:
            f = push(s, INF)
            if not f:
                break
            total += f
