"""The rack-level min-cost flow of a plan (set up and read by shifts.py).

Partitions of a group with the same replicas per rack form a class; a class's units per rack are bounded by the
rack rule. Moving one unit of a class from rack x to rack y is an "offer" whose cost (see `RackFlow`) is the
exact change of the objective; the cheapest offer per rack pair makes a graph of #racks nodes. Negative cycles
are cancelled, then successive shortest paths carry units from racks holding too many to racks holding too few.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence

__all__ = ["FlowClass", "RackFlow", "shortest_path", "negative_cycle"]

# Costs: a replica outside its group's balanced range outweighs any number of moves, a move outweighs any
# spreading preference (groups share the rack changes rather than a few groups taking them all). The spreading
# term is exact (a group's sum of squared deviations from its current rack totals), so every step's cost is the
# true change of the objective and cancelling negative cycles ends.
PENALTY = 1 << 80
MOVE = 1 << 40


class FlowClass:
    """Partitions of one group with the same RF and replicas per rack (and the same number on gone brokers)."""

    __slots__ = ("cid", "group", "rf", "cnt", "parts", "f", "free", "lo", "hi")

    def __init__(self, cid: int, group: str, rf: int, cnt: tuple[int, ...], p_lo: Sequence[int],
                 p_hi: Sequence[int]) -> None:
        self.cid, self.group, self.rf, self.cnt = cid, group, rf, cnt
        self.parts: list[int] = []
        self.lo, self.hi = p_lo, p_hi
        self.f: list[int] = []
        self.free: list[int] = []

    def start(self) -> None:
        """Initial units per rack: every replica that may stay, stays."""
        n = len(self.parts)
        self.free = [n * min(c, h) for c, h in zip(self.cnt, self.hi)]
        self.f = list(self.free)


class RackFlow:
    """The rack-level min-cost flow over classes (see the module doc).

    Cost of a rack: max(E, out) moves, where E is the replicas its brokers hold above their targets (they must
    move anyway: the count lower bound) and out the replicas leaving the rack -- rack changes are free while
    they come from those brokers. The same per group and rack: max(F, out) where F is the group's replicas
    above its per-broker targets there, which depends on the group's rack total T: every broker gets
    T // n and T % n of them one more, the extras going to brokers holding more than that level first.
    Plus a small preference for spreading rack changes over groups, and the penalty for a group outside its
    balanced range.
    """

    def __init__(self, classes: list[FlowClass], by_group: Mapping[str, list[FlowClass]], m: int,
                 ranges: Mapping[str, tuple[Sequence[int], Sequence[int]]], rack_totals: Sequence[int],
                 excess: Callable[[int, int], int], held: Mapping[str, Sequence[Sequence[int]]],
                 sizes: Sequence[int]) -> None:
        self.classes, self.by_group, self.m = classes, by_group, m
        self.sizes = sizes
        self.held = held                           # group -> rack -> its replicas per target broker, descending
        self.ranges = ranges
        self.rack_totals = list(rack_totals)
        self.excess = excess                       # (rack, its total) -> replicas above target there
        self.box: tuple[Sequence[int], Sequence[int]] | None = None
        self.totals = {g: [sum(c.f[k] for c in cs) for k in range(m)] for g, cs in by_group.items()}
        self.start = {g: list(t) for g, t in self.totals.items()}
        self.run = [sum(t[k] for t in self.totals.values()) for k in range(m)]
        self.out = [sum(len(c.parts) * c.cnt[k] - c.f[k] for c in classes) for k in range(m)]
        self.over = [excess(k, self.rack_totals[k]) for k in range(m)]
        self.pairs = [(x, y) for x in range(m) for y in range(m) if x != y]
        # A safety bound on steps: every unit of imbalance takes one path; cycles only lower a finite cost.
        self.budget = 4 * sum(len(c.parts) * c.rf for c in classes) + 1000
        self.g_out = {g: [sum(len(c.parts) * c.cnt[k] - c.f[k] for c in cs) for k in range(m)]
                      for g, cs in by_group.items()}
        self.g_over = {g: [self._group_excess(g, k, self.totals[g][k]) for k in range(m)] for g in by_group}
        # Offers of touched groups, in heaps per (pair, kind); untouched groups are scanned lazily in a fixed
        # order -- they never change, so their penalties are fixed: one list per (pair, penalty).
        self.touched: set[str] = set()
        self.heaps: dict[tuple[int, int], dict[tuple[bool, bool], list[tuple[int, int]]]] = \
            {p: {} for p in self.pairs}
        self.cost_of: dict[tuple[int, int, int], tuple[tuple[bool, bool], int]] = {}
        self.plain: dict[tuple[int, int, int], list[FlowClass]] = {}
        for g, cs in by_group.items():
            for x, y in self.pairs:
                cost = None
                for c in cs:
                    if c.cnt[x] and c.f[y] < len(c.parts) * c.hi[y]:
                        if cost is None:
                            cost = self._group_cost(g, x, y, (True, False))
                        self.plain.setdefault((x, y, cost), []).append(c)
        self.plain_costs = {p: sorted(cost for (x, y, cost) in self.plain if (x, y) == p) for p in self.pairs}
        self.cursor = {key: 0 for key in self.plain}

    def _viol(self, g: str, k: int, v: int) -> int:
        lo, hi = self.ranges[g]
        return max(0, v - hi[k]) + max(0, lo[k] - v)

    def _range_cost(self, g: str, t: Sequence[int], x: int, y: int) -> int:
        return (self._viol(g, x, t[x] - 1) - self._viol(g, x, t[x]) + self._viol(g, y, t[y] + 1)
                - self._viol(g, y, t[y]))

    def _ben(self, g: str, k: int, level: int) -> int:
        """Brokers of rack k holding more than `level` replicas of g."""
        held = self.held[g][k]
        lo, hi = 0, len(held)
        while lo < hi:
            mid = (lo + hi) // 2
            if held[mid] > level:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _group_excess(self, g: str, k: int, total: int) -> int:
        level, extra = divmod(total, self.sizes[k])
        return sum(c - level for c in self.held[g][k] if c > level) - min(extra, self._ben(g, k, level))

    def _group_cost(self, g: str, x: int, y: int, kind: tuple[bool, bool]) -> int:
        """Change of the group's cost (moves, spreading, penalty) when one unit goes from rack x to rack y."""
        t = self.totals[g]
        leaves, returns = kind
        over, out = self.g_over[g], self.g_out[g]
        tx, ty, nx, ny = t[x] - 1, t[y], self.sizes[x], self.sizes[y]
        fx = over[x] + (tx % nx < self._ben(g, x, tx // nx))      # one extra fewer in x
        fy = over[y] - (ty % ny < self._ben(g, y, ty // ny))      # one extra more in y
        moves = (max(fx, out[x] + leaves) - max(over[x], out[x]) + max(fy, out[y] - returns)
                 - max(over[y], out[y]))
        c0 = self.start[g]
        spread = 2 * (t[y] - c0[y]) - 2 * (t[x] - c0[x]) + 2
        return MOVE * moves + spread + PENALTY * self._range_cost(g, t, x, y)

    def offer(self, c: FlowClass, x: int, y: int) -> tuple[tuple[bool, bool], int] | None:
        """(kind, group cost) of moving one unit of c from rack x to rack y, None if the rack rule forbids it.
        kind = (the unit leaving x is one of the class's replicas there, the unit returns one to y)."""
        n = len(c.parts)
        if c.f[x] <= n * c.lo[x] or c.f[y] >= n * c.hi[y]:
            return None
        kind = (c.f[x] <= n * c.cnt[x], c.f[y] < n * c.cnt[y])
        return kind, self._group_cost(c.group, x, y, kind)

    def _rack_cost(self, x: int, y: int, kind: tuple[bool, bool]) -> int:
        leaves, returns = kind
        return MOVE * ((leaves and self.out[x] >= self.over[x]) - (returns and self.out[y] > self.over[y]))

    def touch(self, g: str) -> None:
        """(Re)compute the offers of every class of g (heaps per pair and kind; stale entries skipped later)."""
        self.touched.add(g)
        for c in self.by_group[g]:
            for p in self.pairs:
                key = (c.cid, p[0], p[1])
                found = self.offer(c, *p)
                if found is None:
                    self.cost_of.pop(key, None)
                elif self.cost_of.get(key) != found:
                    self.cost_of[key] = found
                    heapq.heappush(self.heaps[p].setdefault(found[0], []), (found[1], c.cid))

    def best(self, p: tuple[int, int]) -> tuple[int, FlowClass] | None:
        """The cheapest offer for rack pair p."""
        found = None
        for kind, heap in self.heaps[p].items():
            while heap:
                cost, cid = heap[0]
                if self.cost_of.get((cid, p[0], p[1])) == (kind, cost):
                    total = cost + self._rack_cost(p[0], p[1], kind)
                    if found is None or (total, cid) < (found[0], found[1].cid):
                        found = (total, self.classes[cid])
                    break
                heapq.heappop(heap)
        for pc in self.plain_costs[p]:
            key3 = (p[0], p[1], pc)
            lst = self.plain.get(key3)
            if not lst:
                continue
            i = self.cursor[key3]
            while i < len(lst):
                c = lst[i]
                if c.group not in self.touched:
                    o = self.offer(c, *p)
                    if o is not None:
                        cost = o[1] + self._rack_cost(p[0], p[1], o[0])
                        if found is None or cost < found[0]:
                            found = (cost, c)
                        break
                i += 1
            self.cursor[key3] = i
            if i < len(lst):
                break
        return found

    def apply(self, c: FlowClass, x: int, y: int) -> None:
        """Move one unit of c from rack x to rack y."""
        n = len(c.parts)
        g = c.group
        if c.f[x] <= n * c.cnt[x]:
            self.out[x] += 1
            self.g_out[g][x] += 1
        if c.f[y] < n * c.cnt[y]:
            self.out[y] -= 1
            self.g_out[g][y] -= 1
        c.f[x] -= 1
        c.f[y] += 1
        t = self.totals[g]
        t[x] -= 1
        t[y] += 1
        self.g_over[g][x] = self._group_excess(g, x, t[x])
        self.g_over[g][y] = self._group_excess(g, y, t[y])
        self.run[x] -= 1
        self.run[y] += 1
        self.touch(c.group)

    def retarget(self, box: tuple[Sequence[int], Sequence[int]]) -> None:
        """Let the racks' overall totals move within `box` (all balanced within one)."""
        self.box = box

    def _retotal_cost(self, x: int, y: int) -> int | None:
        """Cost of rack x's total +1 and rack y's total -1 (acts like a unit carried from x to y), or None."""
        if self.box is None:
            return None
        lo, hi = self.box
        sx, sy = self.rack_totals[x], self.rack_totals[y]
        if sx + 1 > hi[x] or sy - 1 < lo[y]:
            return None
        ex, ey = self.excess(x, sx + 1), self.excess(y, sy - 1)
        return MOVE * (max(ex, self.out[x]) - max(self.over[x], self.out[x])
                       + max(ey, self.out[y]) - max(self.over[y], self.out[y]))

    def _edge(self, p: tuple[int, int]) -> tuple[int, FlowClass | None] | None:
        b = self.best(p)
        r = self._retotal_cost(*p)
        if r is not None and (b is None or r < b[0]):
            return (r, None)
        return b

    def _graph(self) -> dict[tuple[int, int], int]:
        edges = {}
        for p in self.pairs:
            b = self._edge(p)
            if b is not None:
                edges[p] = b[0]
        return edges

    def _step(self, path: Sequence[int]) -> int | None:
        """Apply the cheapest offer along each edge of `path`; returns the total cost (None if one vanished)."""
        total = 0
        for x, y in zip(path, path[1:]):
            b = self._edge((x, y))
            if b is None:
                return None
            total += b[0]
            if b[1] is None:
                self.rack_totals[x] += 1
                self.rack_totals[y] -= 1
                self.over[x] = self.excess(x, self.rack_totals[x])
                self.over[y] = self.excess(y, self.rack_totals[y])
            else:
                self.apply(b[1], x, y)
        return total

    def cancel_cycles(self) -> None:
        """Apply negative-cost cycles of the rack graph until none is left (fixes ranges at no rack cost)."""
        for _ in range(self.budget):
            cycle = negative_cycle(self.m, self._graph())
            if cycle is None:
                return
            cost = self._step(cycle)
            if cost is None or cost >= 0:
                return

    def carry(self) -> None:
        """Successive shortest paths from racks holding too many units to racks holding too few.

        The costs are not exactly convex (max of two terms per group and rack), so a step can open a negative
        cycle: the graph is checked for one before each path. A direct path is repeated while its cheapest
        offer costs no more (the same shortest path, without rebuilding the graph).
        """
        for _ in range(self.budget):
            graph = self._graph()
            cycle = negative_cycle(self.m, graph)
            if cycle is not None:
                cost = self._step(cycle)
                if cost is not None and cost < 0:
                    continue
                graph = self._graph()
            sources = [k for k in range(self.m) if self.run[k] > self.rack_totals[k]]
            sinks = {k for k in range(self.m) if self.run[k] < self.rack_totals[k]}
            if not sources or not sinks:
                return
            path = shortest_path(self.m, graph, sources, sinks)
            if path is None:
                return
            cost = self._step(path)
            if cost is None:
                return
            if len(path) == 2:
                x, y = path
                while self.run[x] > self.rack_totals[x] and self.run[y] < self.rack_totals[y]:
                    b = self._edge((x, y))
                    if b is None or b[0] > cost:
                        break
                    self._step(path)


def negative_cycle(m: int, edges: Mapping[tuple[int, int], int]) -> list[int] | None:
    """A cycle of negative total cost in the rack graph (Bellman-Ford), or None."""
    dist = [0] * m
    pred = [-1] * m
    last = -1
    for _ in range(m):
        last = -1
        for (x, y), w in edges.items():
            if dist[x] + w < dist[y]:
                dist[y] = dist[x] + w
                pred[y] = x
                last = y
        if last < 0:
            return None
    for _ in range(m):
        last = pred[last]
    cycle = [last]
    node = pred[last]
    while node != last:
        cycle.append(node)
        node = pred[node]
    cycle.append(last)
    cycle.reverse()
    return cycle


def shortest_path(m: int, edges: Mapping[tuple[int, int], int], sources: Sequence[int],
                   sinks: set[int]) -> list[int] | None:
    """Cheapest walk of at most m - 1 edges from a source to a sink (hop-layered, so it ends even where the
    state-dependent costs leave a negative cycle)."""
    inf = 1 << 400  # above any cost (penalties are 2**80 per replica)
    layers = [{s: (0, None) for s in sources}]
    for _ in range(m - 1):
        prev = layers[-1]
        nxt: dict[int, tuple[int, int | None]] = {}
        for (x, y), w in edges.items():
            if x in prev and prev[x][0] + w < nxt.get(y, (inf, None))[0]:
                nxt[y] = (prev[x][0] + w, x)
        if not nxt:
            break
        layers.append(nxt)
    best = None
    for h, layer in enumerate(layers):
        for v, (d, _) in layer.items():
            if v in sinks and h and (best is None or (d, h, v) < best):
                best = (d, h, v)
    if best is None:
        return None
    _, h, v = best
    path = [v]
    while h:
        v = layers[h][v][1]
        h -= 1
        path.append(v)
    path.reverse()
    return path
