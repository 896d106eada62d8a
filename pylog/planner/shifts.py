"""Rack level of a plan: each group's replicas per rack, and exactly which replicas change rack.

Within a rack, a replica can move from any broker above its group target to any broker below it (a broker above
holds more of the group than one below, so it holds a partition the other lacks, and the partition keeps its
racks). Across racks it can not always: a partition on racks {0,1,2} may move from 0 to 3 but not from 0 to 1.
So the cross-rack part is decided here and the rest is left to the per-rack dealing and the per-group mover.

It is a min-cost flow (rackflow.py) over classes of partitions (same group, same replicas per rack), bounded
by the rack rule (each partition on min(RF, #racks) racks: at most one replica per rack when RF <= #racks, at
least one when RF > #racks). Its cost is in moves: per rack, max(replicas above target there, replicas leaving)
-- rack changes are free while they come from brokers that must give replicas away anyway -- and the same per
group and rack. Each group's rack totals should stay in the range that keeps it balanced within one per broker
(a violation costs a large penalty, so groups give way only when the racks need it), and the racks must reach
overall totals balanced within one (which may move within the balanced ones when that saves moves).

The flow is then realised per class: which partitions drop a rack (those whose replica there sits on a broker
being removed or above its target, holding more than the group's level, smallest first) and which racks each
partition joins.
"""
from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pylog.planner.model import Partition
from pylog.planner.rackflow import FlowClass, RackFlow
from pylog.planner.racks import cell_bounds

__all__ = ["RackPlan", "group_range", "plan_racks"]


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


def plan_racks(parts: Sequence[Partition], groups: Mapping[str, Sequence[int]], rack_of: Mapping[int, int],
               targets: Mapping[int, int], current: Mapping[int, int], holders: dict[str, dict[int, int]],
               sizes: Sequence[int], rack_totals: Sequence[int], ranges: Mapping[str, tuple[list[int], list[int]]],
               levels: Mapping[str, int], balanced: bool = False) -> RackPlan:
    """Decide every group's rack totals and the replicas that change rack (`holders` become kept counts).

    With `balanced` (the overall totals are balanced within one), the racks' totals may move to any other
    balanced totals where that lets groups stay balanced or saves moves; RackPlan.rack_totals has the result.
    """
    m = len(sizes)
    classes: list[FlowClass] = []
    by_group: dict[str, list[FlowClass]] = {}
    bounds: dict[int, tuple[list[int], list[int]]] = {}
    for g, idx in groups.items():
        index: dict[tuple[int, tuple[int, ...]], FlowClass] = {}
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
                c = index[key] = FlowClass(len(classes), g, len(reps), key[1], *bounds[len(reps)])
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
    flow = RackFlow(classes, by_group, m, ranges, rack_totals, excess, held, sizes)
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


def _place_forced(flow: RackFlow) -> None:
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


def _realise(plan: RackPlan, classes: Sequence[FlowClass], parts: Sequence[Partition], rack_of: Mapping[int, int],
             targets: Mapping[int, int], current: Mapping[int, int], holders: dict[str, dict[int, int]],
             levels: Mapping[str, int]) -> None:
    """Per class: which partitions drop which racks and which racks each partition joins."""
    load = dict(current)
    for c in classes:
        if c.f == [len(c.parts) * min(v, h) for v, h in zip(c.cnt, c.hi)] and sum(c.cnt) == c.rf:
            continue
        step = _ClassShift(plan, c, parts, rack_of, targets, load, holders[c.group], levels[c.group])
        step.leave_forced()
        step.drop()
        step.join()
    for g in plan.departures:
        plan.departures[g].sort()


class _ClassShift:
    """One class's rack changes, in steps: replicas that must leave, drops per rack, then the racks joined."""

    def __init__(self, plan: RackPlan, c: FlowClass, parts: Sequence[Partition], rack_of: Mapping[int, int],
                 targets: Mapping[int, int], load: dict[int, int], held: dict[int, int], level: int) -> None:
        self.plan, self.c, self.parts, self.rack_of = plan, c, parts, rack_of
        self.targets, self.load, self.held, self.level = targets, load, held, level
        m = self.m = len(c.f)
        n = len(c.parts)
        self.keep = [min(v, h) for v, h in zip(c.cnt, c.hi)]        # per partition, per rack, before drops
        self.drops = [n * self.keep[k] - c.f[k] if c.f[k] < n * self.keep[k] else 0 for k in range(m)]
        self.adds = [c.f[k] - n * self.keep[k] if c.f[k] > n * self.keep[k] else 0 for k in range(m)]
        self.leaving: dict[int, list[int]] = {i: [] for i in c.parts}      # partition -> slots that leave
        self.kept_in: dict[int, list[int]] = {i: list(self.keep) for i in c.parts}

    def rank(self, b: int) -> tuple:
        """Leave from removed brokers first, then brokers above target holding more than the level."""
        over = self.load.get(b, 0) - self.targets.get(b, 0) > 0
        return (b in self.targets, not over, self.held.get(b, 0) <= self.level, -self.load.get(b, 0), b)

    def leave(self, i: int, s: int) -> None:
        """Slot s of partition i leaves its rack."""
        b = self.parts[i].replicas[s]
        self.leaving[i].append(s)
        self.load[b] = self.load.get(b, 0) - 1
        self.held[b] = self.held.get(b, 0) - 1

    def leave_forced(self) -> None:
        """Replicas on brokers of no target rack, and a rack's replicas beyond what the rack rule allows."""
        c, rack_of = self.c, self.rack_of
        gone = sum(c.cnt) < c.rf
        dups = [k for k in range(self.m) if c.cnt[k] > self.keep[k]]
        for i in c.parts if gone or dups else ():
            reps = self.parts[i].replicas
            for s, b in enumerate(reps):
                if gone and rack_of.get(b, -1) < 0:
                    self.leave(i, s)
            for k in dups:
                slots = sorted((s for s, b in enumerate(reps) if rack_of.get(b, -1) == k),
                               key=lambda s: self.rank(reps[s]))
                for s in slots[:c.cnt[k] - self.keep[k]]:
                    self.leave(i, s)
                    self.plan.rack_fix += 1

    def drop(self) -> None:
        """Drops: one at a time from the best broker now (rank changes as its replicas leave), its smallest
        partition first. A partition joins at most one new rack per rack with additions (RF <= #racks), so a
        partition already dropping as many racks as there are racks to join is skipped."""
        join_racks = sum(1 for k in range(self.m) if self.adds[k])
        for k in range(self.m):
            if self.drops[k]:
                self._drop_rack(k, join_racks)

    def _drop_rack(self, k: int, join_racks: int) -> None:
        c, rank = self.c, self.rank
        by_broker: dict[int, list[tuple[int, int, int]]] = {}
        for i in c.parts:
            for s, b in enumerate(self.parts[i].replicas):
                if self.rack_of.get(b, -1) == k and s not in self.leaving[i]:
                    by_broker.setdefault(b, []).append((self.parts[i].size_bytes or 0, i, s))
        heap = []
        for b, lst in by_broker.items():
            lst.sort(reverse=True)
            heap.append((rank(b), b))
        heapq.heapify(heap)
        taken: dict[int, int] = {}
        while self.drops[k] and heap:
            r, b = heapq.heappop(heap)
            if r != rank(b):
                heapq.heappush(heap, (rank(b), b))
                continue
            lst = by_broker[b]
            while lst:
                _, i, s = lst.pop()
                if taken.get(i, 0) >= self.kept_in[i][k] - c.lo[k]:
                    continue
                if c.hi[k] == 1 and len(self.leaving[i]) >= join_racks:
                    continue
                taken[i] = taken.get(i, 0) + 1
                self.plan.extra += r[0] and r[1]
                self.leave(i, s)
                self.drops[k] -= 1
                break
            if lst:
                heapq.heappush(heap, (rank(b), b))

    def join(self) -> None:
        """Joining racks: partitions with the most units to place first, into the racks with the most left."""
        c, m, adds, parts, rack_of, plan = self.c, self.m, self.adds, self.parts, self.rack_of, self.plan
        in_rack = {i: [0] * m for i in c.parts}
        for i in c.parts:
            for s, b in enumerate(parts[i].replicas):
                k = rack_of.get(b, -1)
                if k >= 0 and s not in self.leaving[i]:
                    in_rack[i][k] += 1
        single = [k for k in range(m) if adds[k]]
        for i in sorted(c.parts, key=lambda i: (-len(self.leaving[i]), i)):
            for s in sorted(self.leaving[i]):
                if len(single) == 1 and adds[single[0]] and in_rack[i][single[0]] < c.hi[single[0]]:
                    k = single[0]  # the only rack taking replicas (e.g. a removed rack's, RF = #racks)
                    adds[k] -= 1
                else:
                    room = [k for k in range(m) if adds[k] and in_rack[i][k] < c.hi[k]]
                    if not room:
                        room = [k for k in range(m) if in_rack[i][k] < c.hi[k]]
                    k = max(room, key=lambda k: (adds[k], -k))
                    adds[k] = max(0, adds[k] - 1)
                in_rack[i][k] += 1
                plan.departures[c.group].append((i, parts[i].replicas[s], k))
                plan.forced += rack_of.get(parts[i].replicas[s], -1) < 0
