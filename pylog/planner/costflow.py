"""Min-cost flow by the primal-dual method, for the leadership stage's per-group graphs.

Successive shortest paths, many at a time: Dijkstra with node potentials finds the shortest source -> sink
distance, then a blocking flow fills every path of exactly that length (arcs of zero reduced cost). Phases are
as many as distinct path lengths (a handful here), so a graph of thousands of arcs costs a few Dijkstra passes.
Negative costs are allowed on arcs out of the source and into the sink only (the start potentials then make
every reduced cost non-negative). `solve` stops when the shortest path costs 0 or more: it minimises cost, it does not maximise
flow, so arcs out of the source cost < 0 for units that must be placed and >= 0 for units that may be.
"""
from __future__ import annotations

import heapq

__all__ = ["CostFlow"]

INF = float("inf")


class CostFlow:
    """A directed graph of arcs with capacity and integer cost; arc i and i ^ 1 are each other's reverse."""

    def __init__(self) -> None:
        self.out: list[list[int]] = []    # node -> arc ids
        self.head: list[int] = []         # arc -> node it enters
        self.cap: list[int] = []
        self.cost: list[int] = []

    def node(self) -> int:
        """A new node's index."""
        self.out.append([])
        return len(self.out) - 1

    def arc(self, u: int, v: int, cap: int, cost: int) -> int:
        """Add u -> v with `cap` units at `cost` each; returns the arc id (for `flow`)."""
        a = len(self.head)
        head, caps, costs = self.head, self.cap, self.cost
        head.append(v)
        head.append(u)
        caps.append(cap)
        caps.append(0)
        costs.append(cost)
        costs.append(-cost)
        self.out[u].append(a)
        self.out[v].append(a + 1)
        return a

    def fan(self, u: int, vs: list[int], cost: int) -> int:
        """A new node p with one unit in from u (cost 0) and out to each of `vs` at `cost` (a -1 in `vs` becomes a
        new node, made after p, in place); returns the id of the arc to vs[0] (the arc to vs[k] is that + 2k).
        The same graph as node() and arc() calls in that order, built faster."""
        out, head, caps, costs = self.out, self.head, self.cap, self.cost
        p = len(out)
        a = len(head)
        out[u].append(a)
        mine = [a + 1]
        out.append(mine)
        head += (p, u)
        caps += (1, 0)
        costs += (0, 0)
        first = a + 2
        for k, v in enumerate(vs):
            if v < 0:
                v = vs[k] = len(out)
                out.append([])
            a += 2
            head += (v, p)
            caps += (1, 0)
            costs += (cost, -cost)
            mine.append(a)
            out[v].append(a + 1)
        return first

    def flow(self, a: int) -> int:
        """Units the solution sends over arc `a`."""
        return self.cap[a ^ 1]

    def solve(self, s: int, t: int) -> int:
        """Send flow s -> t along negative-cost paths until none is left; returns the total cost."""
        pot = self._start_potentials(s, t)
        total = 0
        while True:
            found = self._dijkstra(s, t, pot)
            if found is None:
                return total
            dist, pred = found
            d_t = dist[t]
            pot = [p + (d if d < d_t else d_t) for p, d in zip(pot, dist)]
            length = pot[t] - pot[s]
            if length >= 0:
                return total
            # Every zero-reduced-cost path is a shortest one under the new potentials, also through nodes the
            # search stopped short of (they sit at t's distance): pruning those left one path per phase.
            pushed = self._blocking(s, t, pot, [False] * len(dist)) or self._augment(s, t, pred)
            total += pushed * length

    def _start_potentials(self, s: int, t: int) -> list[int]:
        """Potentials making every arc's reduced cost >= 0 (only arcs out of s and into t may cost < 0)."""
        low = min([0] + [self.cost[a] for a in self.out[s] if not a & 1])
        pot = [low] * len(self.out)
        pot[s] = 0
        into_t = [self.cost[a ^ 1] for a in self.out[t] if a & 1]
        pot[t] = low + min([0] + into_t)
        return pot

    def _dijkstra(self, s: int, t: int, pot: list[int]) -> tuple[list[float], list[int]] | None:
        """Reduced distances from s (exact up to t's; farther nodes keep a larger label or INF) and the arc into
        each node on a shortest path; None when t is unreachable."""
        n = len(self.out)
        dist = [INF] * n
        pred = [-1] * n
        dist[s] = 0
        heap = [(0, s)]
        head, cap, cost, out = self.head, self.cap, self.cost, self.out
        done = [False] * n
        while heap:
            d, u = heapq.heappop(heap)
            if done[u]:
                continue
            done[u] = True
            if u == t:
                return dist, pred
            pu = pot[u] + d
            for a in out[u]:
                if cap[a]:
                    v = head[a]
                    nd = pu + cost[a] - pot[v]
                    if nd < dist[v]:
                        dist[v] = nd
                        pred[v] = a
                        heapq.heappush(heap, (nd, v))
        return None

    def _augment(self, s: int, t: int, pred: list[int]) -> int:
        """Push along the shortest-path tree's path to t (when the blocking search found none)."""
        path = []
        v = t
        while v != s:
            a = pred[v]
            path.append(a)
            v = self.head[a ^ 1]
        bottleneck = min(self.cap[a] for a in path)
        for a in path:
            self.cap[a] -= bottleneck
            self.cap[a ^ 1] += bottleneck
        return bottleneck

    def _blocking(self, s: int, t: int, pot: list[int], dead: list[bool]) -> int:
        """Push unit paths over zero-reduced-cost arcs avoiding `dead` nodes (those found to lead nowhere; the
        list is used up) until none is left; returns the units pushed."""
        head, cap, cost, out = self.head, self.cap, self.cost, self.out
        it = [0] * len(out)
        pushed = 0
        while True:
            path: list[int] = []
            on_path = {s}
            u = s
            while u != t:
                arcs = out[u]
                i = it[u]
                m = len(arcs)
                pu = pot[u]
                while i < m:
                    a = arcs[i]
                    if cap[a]:
                        v = head[a]
                        if pu + cost[a] == pot[v] and not dead[v] and v not in on_path:
                            break
                    i += 1
                it[u] = i
                if i == m:
                    if u == s:
                        return pushed
                    dead[u] = True
                    on_path.discard(u)
                    a = path.pop()
                    u = head[a ^ 1]
                    it[u] += 1
                    continue
                path.append(arcs[i])
                on_path.add(v)
                u = v
            bottleneck = min(cap[a] for a in path)
            for a in path:
                cap[a] -= bottleneck
                cap[a ^ 1] += bottleneck
            pushed += bottleneck
