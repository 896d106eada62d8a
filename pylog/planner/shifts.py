"""Rack level of a plan: each group's replicas per rack, and exactly which replicas change rack.

Within a rack, a replica can move from any broker above its group target to any broker below it (a broker above
holds more of the group than one below, so it holds a partition the other lacks, and the partition keeps its
racks). Across racks it can not always: a partition on racks {0,1,2} may move from 0 to 3 but not from 0 to 1.
So the cross-rack part is decided here and the rest is left to the per-rack dealing and the per-group mover.

It is a min-cost flow. Partitions of a group with the same replicas per rack form a class; a class's units per
rack are bounded by the rack rule (each partition on min(RF, #racks) racks: at most one replica per rack when
RF <= #racks, at least one when RF > #racks). A unit in a rack where its partition has no replica to keep is a
replica changing rack: cost 1. Each group's rack totals should stay in the range that keeps it balanced within
one per broker (a violation costs a large penalty, so groups give way only when the racks need it), and the
racks must reach their overall totals (targets.py). Moving one unit of class c from rack x to rack y is an
"offer" of cost -1, 0 or 1 (plus penalties); the cheapest offer per rack pair makes a graph of #racks nodes.
Negative cycles are cancelled, then successive shortest paths carry units from racks with too many replicas to
racks with too few: each path is a shortest path of the class-level residual network, so the number of
replicas changing rack is the fewest for the rack totals the penalties allow.

The flow is then realised per class: which partitions drop a rack (those whose replica there sits on a broker
being removed or above its target, holding more than the group's level, smallest first) and which racks each
partition joins.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pylog.planner.model import Partition
from pylog.planner.racks import cell_bounds

__all__ = ["RackPlan", "group_range", "plan_racks"]

# Costs: a replica outside its group's balanced range outweighs any number of moves, a move outweighs any
# spreading preference (groups share the rack changes: a group giving many replicas away from a rack makes its
# brokers there give up extras they hold, which costs moves inside the rack that this flow does not see).
PENALTY = 1 << 48
MOVE = 1 << 16
SPREAD_CAP = 1 << 12


@dataclass(slots=True)
class RackPlan:
    """Each group's replicas per rack after the plan, and the replicas that change rack."""

    totals: dict[str, list[int]]
    departures: dict[str, list[tuple[int, int, int]]]  # group -> (partition index, source broker, dest rack)
    forced: int = 0               # replicas that had to change rack (removed brokers/racks, rack rule)
    rack_fix: int = 0             # of which only because the partition broke the rack rule
    extra: int = 0                # rack changes from brokers not above their target: each costs one more move
    widened: list[str] = field(default_factory=list)   # groups whose per-topic balance gave way to the racks
    residue: int = 0              # replicas the racks could not exchange to reach their overall totals
    rack_totals: list[int] = field(default_factory=list)  # replicas per rack after the plan


def _partition_bounds(rf: int, sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    cells = cell_bounds(rf, sizes)
    return [lo for lo, _ in cells], [hi for _, hi in cells]


def group_range(total: int, rfs: Mapping[int, int], sizes: Sequence[int], n_brokers: int,
                balanced: bool) -> tuple[list[int], list[int], bool]:
    """Per-rack [lo, hi] of a group's replicas: within one per broker if the rack rule allows (flag True),
    else only what the rule allows (the group then balances per rack only)."""
    m = len(sizes)
    rule_lo, rule_hi = [0] * m, [0] * m
    for rf, count in rfs.items():
        lo, hi = _partition_bounds(rf, sizes)
        for k in range(m):
            rule_lo[k] += count * lo[k]
            rule_hi[k] += count * min(hi[k], rf)
    if balanced:
        level = total // n_brokers
        lo = [max(a, n * level) for a, n in zip(rule_lo, sizes)]
        hi = [min(b, n * (level + 1)) for b, n in zip(rule_hi, sizes)]
        if all(a <= b for a, b in zip(lo, hi)) and sum(lo) <= total <= sum(hi):
            return lo, hi, True
    return rule_lo, rule_hi, not balanced


class _Class:
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


class _Flow:
    """The rack-level min-cost flow over classes (see the module doc).

    Cost of a rack: max(E, out) moves, where E is the replicas its brokers hold above their targets (they must
    move anyway: the count lower bound) and out the replicas leaving the rack -- rack changes are free while
    they come from those brokers. The same per group and rack: max(F, out) where F is the group's replicas
    above its per-broker targets there, which depends on the group's rack total T: every broker gets
    T // n and T % n of them one more, the extras going to brokers holding more than that level first.
    Plus a small preference for spreading rack changes over groups, and the penalty for a group outside its
    balanced range.
    """

    def __init__(self, classes: list[_Class], by_group: Mapping[str, list[_Class]], m: int,
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
        self.g_out = {g: [sum(len(c.parts) * c.cnt[k] - c.f[k] for c in cs) for k in range(m)]
                      for g, cs in by_group.items()}
        self.g_over = {g: [self._group_excess(g, k, self.totals[g][k]) for k in range(m)] for g in by_group}
        # Offers of touched groups, bucketed by (kind, cost); untouched groups are scanned lazily in a fixed
        # order -- they never change, so their penalties are fixed: one list per (pair, penalty).
        self.touched: set[str] = set()
        self.bucket: dict[tuple[int, int], dict[tuple[tuple[bool, bool], int], dict[int, None]]] = \
            {p: {} for p in self.pairs}
        self.cost_of: dict[tuple[int, int, int], tuple[tuple[bool, bool], int]] = {}
        self.plain: dict[tuple[int, int, int], list[_Class]] = {}
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
        spread = min(SPREAD_CAP, max(-SPREAD_CAP, 2 * (t[y] - c0[y]) - 2 * (t[x] - c0[x]) + 2))
        return MOVE * moves + spread + PENALTY * self._range_cost(g, t, x, y)

    def offer(self, c: _Class, x: int, y: int) -> tuple[tuple[bool, bool], int] | None:
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
        """(Re)compute the offers of every class of g into the buckets."""
        self.touched.add(g)
        for c in self.by_group[g]:
            for p in self.pairs:
                key = (c.cid, p[0], p[1])
                old = self.cost_of.pop(key, None)
                if old is not None:
                    del self.bucket[p][old][c.cid]
                found = self.offer(c, *p)
                if found is not None:
                    self.cost_of[key] = found
                    self.bucket[p].setdefault(found, {})[c.cid] = None

    def best(self, p: tuple[int, int]) -> tuple[int, _Class] | None:
        """The cheapest offer for rack pair p."""
        found = None
        for key, cids in list(self.bucket[p].items()):
            if not cids:
                del self.bucket[p][key]
                continue
            cost = key[1] + self._rack_cost(p[0], p[1], key[0])
            if found is None or cost < found[0]:
                found = (cost, self.classes[next(iter(cids))])
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

    def apply(self, c: _Class, x: int, y: int) -> None:
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

    def _edge(self, p: tuple[int, int]) -> tuple[int, _Class | None] | None:
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
        while True:
            cycle = _negative_cycle(self.m, self._graph())
            if cycle is None:
                return
            cost = self._step(cycle)
            if cost is None or cost >= 0:
                return

    def carry(self) -> None:
        """Successive shortest paths from racks holding too many units to racks holding too few.

        The costs are not exactly convex (max of two terms per group and rack), so a step can open a negative
        cycle: cycles are cancelled again before each path.
        """
        while True:
            self.cancel_cycles()
            sources = [k for k in range(self.m) if self.run[k] > self.rack_totals[k]]
            sinks = {k for k in range(self.m) if self.run[k] < self.rack_totals[k]}
            if not sources or not sinks:
                return
            path = _shortest_path(self.m, self._graph(), sources, sinks)
            if path is None or self._step(path) is None:
                return


def _negative_cycle(m: int, edges: Mapping[tuple[int, int], int]) -> list[int] | None:
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


def _shortest_path(m: int, edges: Mapping[tuple[int, int], int], sources: Sequence[int],
                   sinks: set[int]) -> list[int] | None:
    """Cheapest walk of at most m - 1 edges from a source to a sink (hop-layered, so it ends even where the
    state-dependent costs leave a negative cycle)."""
    inf = 1 << 62
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


def plan_racks(parts: Sequence[Partition], groups: Mapping[str, Sequence[int]], rack_of: Mapping[int, int],
               targets: Mapping[int, int], current: Mapping[int, int], holders: dict[str, dict[int, int]],
               sizes: Sequence[int], rack_totals: Sequence[int], ranges: Mapping[str, tuple[list[int], list[int]]],
               levels: Mapping[str, int], balanced: bool = False) -> RackPlan:
    """Decide every group's rack totals and the replicas that change rack (`holders` become kept counts).

    With `balanced` (the overall totals are balanced within one), the racks' totals may move to any other
    balanced totals where that lets groups stay balanced or saves moves; RackPlan.rack_totals has the result.
    """
    m = len(sizes)
    classes: list[_Class] = []
    by_group: dict[str, list[_Class]] = {}
    bounds: dict[int, tuple[list[int], list[int]]] = {}
    for g, idx in groups.items():
        index: dict[tuple[int, tuple[int, ...]], _Class] = {}
        for i in idx:
            reps = parts[i].replicas
            cnt = [0] * m
            for b in reps:
                k = rack_of.get(b, -1)
                if k >= 0:
                    cnt[k] += 1
            key = (len(reps), tuple(cnt))
            c = index.get(key)
            if c is None:
                if len(reps) not in bounds:
                    bounds[len(reps)] = _partition_bounds(len(reps), sizes)
                c = index[key] = _Class(len(classes), g, len(reps), key[1], *bounds[len(reps)])
                classes.append(c)
            c.parts.append(i)
        by_group[g] = list(index.values())
    for c in classes:
        c.start()
    # Replicas above target per rack for a given rack total: the fullest brokers get the ceil.
    by_rack: list[list[int]] = [[] for _ in sizes]
    for b, k in rack_of.items():
        by_rack[k].append(current.get(b, 0) if b in targets else -current.get(b, 0) - 1)
    for counts in by_rack:
        counts.sort(reverse=True)

    memo: dict[tuple[int, int], int] = {}

    def excess(k: int, total: int) -> int:
        if (k, total) in memo:
            return memo[(k, total)]
        level, ceil = divmod(total, sizes[k])
        over = 0
        for j, c in enumerate(by_rack[k]):
            if c < 0:   # a removed broker of the rack: everything it holds is above target
                over += -c - 1
            else:
                over += max(0, c - level - (j < ceil))
        memo[(k, total)] = over
        return over
    held: dict[str, list[list[int]]] = {}
    for g in groups:
        per_rack: list[list[int]] = [[] for _ in sizes]
        for b, c in holders[g].items():
            if b in targets and c:
                per_rack[rack_of[b]].append(c)
        for counts in per_rack:
            counts.sort(reverse=True)
        held[g] = per_rack
    flow = _Flow(classes, by_group, m, ranges, rack_totals, excess, held, sizes)
    if balanced:
        n = sum(sizes)
        level, extra = divmod(sum(rack_totals), n)
        flow.retarget(([k * level for k in sizes], [k * level + min(k, extra) for k in sizes]))
    _place_forced(flow)
    flow.cancel_cycles()
    flow.carry()
    plan = RackPlan(flow.totals, {g: [] for g in groups}, rack_totals=flow.rack_totals)
    plan.residue = sum(max(0, s - r) for s, r in zip(flow.rack_totals, flow.run))
    plan.widened = [g for g in groups if any(not lo <= v <= hi for v, lo, hi in zip(flow.totals[g], *ranges[g]))]
    _realise(plan, classes, parts, rack_of, targets, current, holders, levels)
    return plan


def _place_forced(flow: _Flow) -> None:
    """Units a class cannot keep (gone replicas, rack-rule breakers) go where the group and racks need them."""
    m = flow.m
    for c in flow.classes:
        n = len(c.parts)
        t = flow.totals[c.group]
        lo_g, hi_g = flow.ranges[c.group]
        for k in range(m):  # RF > #racks: every rack needs a replica of each partition
            while c.f[k] < n * c.lo[k]:
                c.f[k] += 1
                t[k] += 1
                flow.run[k] += 1
        while sum(c.f) > n * c.rf:
            k = max((k for k in range(m) if c.f[k] > n * c.lo[k]), key=lambda k: (c.f[k] - c.free[k], k))
            c.f[k] -= 1
            t[k] -= 1
            flow.run[k] -= 1
        missing = n * c.rf - sum(c.f)
        while missing > 0:
            room = [k for k in range(m) if c.f[k] < n * c.hi[k]]
            k = max(room, key=lambda k: (t[k] < lo_g[k], t[k] < hi_g[k],
                                         flow.rack_totals[k] - flow.run[k], -k))
            step = min(missing, n * c.hi[k] - c.f[k]) if len(room) == 1 else 1
            c.f[k] += step
            t[k] += step
            flow.run[k] += step
            missing -= step
        if c.f != c.free:
            flow.touch(c.group)


def _realise(plan: RackPlan, classes: Sequence[_Class], parts: Sequence[Partition], rack_of: Mapping[int, int],
             targets: Mapping[int, int], current: Mapping[int, int], holders: dict[str, dict[int, int]],
             levels: Mapping[str, int]) -> None:
    """Per class: which partitions drop which racks and which racks each partition joins."""
    load = dict(current)
    for c in classes:
        if c.f == [len(c.parts) * min(v, h) for v, h in zip(c.cnt, c.hi)] and sum(c.cnt) == c.rf:
            continue
        g = c.group
        level = levels[g]
        held = holders[g]
        m = len(c.f)

        def rank(b: int) -> tuple:
            # Leave from removed brokers first, then brokers above target holding more than the level.
            over = load.get(b, 0) - targets.get(b, 0) > 0
            return (b in targets, not over, held.get(b, 0) <= level, -load.get(b, 0), b)
        n = len(c.parts)
        keep = [min(v, h) for v, h in zip(c.cnt, c.hi)]        # per partition, per rack, before drops
        drops = [n * keep[k] - c.f[k] if c.f[k] < n * keep[k] else 0 for k in range(m)]
        adds = [c.f[k] - n * keep[k] if c.f[k] > n * keep[k] else 0 for k in range(m)]
        leaving: dict[int, list[int]] = {i: [] for i in c.parts}      # partition -> slots that leave
        kept_in: dict[int, list[int]] = {i: list(keep) for i in c.parts}
        def leave(i: int, s: int) -> None:
            b = parts[i].replicas[s]
            leaving[i].append(s)
            load[b] = load.get(b, 0) - 1
            held[b] = held.get(b, 0) - 1

        gone = sum(c.cnt) < c.rf
        dups = [k for k in range(m) if c.cnt[k] > keep[k]]
        for i in c.parts if gone or dups else ():
            reps = parts[i].replicas
            for s, b in enumerate(reps):
                if gone and rack_of.get(b, -1) < 0:
                    leave(i, s)
            for k in dups:
                    slots = sorted((s for s, b in enumerate(reps) if rack_of.get(b, -1) == k),
                                   key=lambda s: rank(reps[s]))
                    for s in slots[:c.cnt[k] - keep[k]]:
                        leave(i, s)
                        plan.rack_fix += 1
        # Drops: one at a time from the best broker now (rank changes as its replicas leave), its smallest
        # partition first. A partition joins at most one new rack per rack with additions (RF <= #racks), so
        # a partition already dropping as many racks as there are racks to join is skipped.
        join_racks = sum(1 for k in range(m) if adds[k])
        for k in range(m):
            if not drops[k]:
                continue
            by_broker: dict[int, list[tuple[int, int, int]]] = {}
            for i in c.parts:
                for s, b in enumerate(parts[i].replicas):
                    if rack_of.get(b, -1) == k and s not in leaving[i]:
                        by_broker.setdefault(b, []).append((parts[i].size_bytes or 0, i, s))
            heap = []
            for b, lst in by_broker.items():
                lst.sort(reverse=True)
                heap.append((rank(b), b))
            heapq.heapify(heap)
            taken: dict[int, int] = {}
            while drops[k] and heap:
                r, b = heapq.heappop(heap)
                if r != rank(b):
                    heapq.heappush(heap, (rank(b), b))
                    continue
                lst = by_broker[b]
                while lst:
                    _, i, s = lst.pop()
                    if taken.get(i, 0) >= kept_in[i][k] - c.lo[k]:
                        continue
                    if c.hi[k] == 1 and len(leaving[i]) >= join_racks:
                        continue
                    taken[i] = taken.get(i, 0) + 1
                    plan.extra += r[0] and r[1]
                    leave(i, s)
                    drops[k] -= 1
                    break
                if lst:
                    heapq.heappush(heap, (rank(b), b))
        # Joining racks: partitions with the most units to place first, into the racks with the most left.
        in_rack = {i: [0] * m for i in c.parts}
        for i in c.parts:
            for s, b in enumerate(parts[i].replicas):
                k = rack_of.get(b, -1)
                if k >= 0 and s not in leaving[i]:
                    in_rack[i][k] += 1
        single = [k for k in range(m) if adds[k]]
        for i in sorted(c.parts, key=lambda i: (-len(leaving[i]), i)):
            for s in sorted(leaving[i]):
                if len(single) == 1 and adds[single[0]] and in_rack[i][single[0]] < c.hi[single[0]]:
                    k = single[0]  # the only rack taking replicas (e.g. a removed rack's, RF = #racks)
                    adds[k] -= 1
                    in_rack[i][k] += 1
                    plan.departures[c.group].append((i, parts[i].replicas[s], k))
                    plan.forced += rack_of.get(parts[i].replicas[s], -1) < 0
                    continue
                room = [k for k in range(m) if adds[k] and in_rack[i][k] < c.hi[k]]
                if not room:
                    room = [k for k in range(m) if in_rack[i][k] < c.hi[k]]
                k = max(room, key=lambda k: (adds[k], -k))
                adds[k] = max(0, adds[k] - 1)
                in_rack[i][k] += 1
                plan.departures[c.group].append((i, parts[i].replicas[s], k))
                plan.forced += rack_of.get(parts[i].replicas[s], -1) < 0
    for g in plan.departures:
        plan.departures[g].sort()
