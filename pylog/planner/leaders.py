"""Preferred-leader balance by reordering replicas only (moves no data), with the fewest leader changes.

Per group (a topic; the whole selection when per-topic balance is off) each target broker leads floor(P/n) or
ceil(P/n) of the group's P partitions; overall floor or ceil of all partitions over the n brokers. Changing a
partition's preferred leader (its first replica before the plan) costs one; a partition whose leader's replica
moves away costs one whatever it gets. Steps (`LeaderStage`):

1. `balance_group`, per group, largest first: a min-cost flow (costflow.py) from the partitions that must or may
   hand their leadership on (orphans, brokers above the group's ceil or with a ceil slot to spare) to brokers
   below the floor or with room under the ceil, through partitions whose replicas allow it. It is exact for the
   group; which brokers take the group's ceil slots leans towards brokers behind overall (ties only).
2. `repair_overall`: brokers above the overall ceil (or below the floor) hand leaderships along paths
   broker -> partition it leads -> another replica, each step moving a group's ceil slot, so groups stay within one
   (the search, with its per-pair cache, is leader_paths.py).
3. `restore`: partitions get their old leader back where the counts allow it, directly or by a swap.

Selections of up to EXACT_LIMIT replicas skip the steps: one flow over all groups at once (leader_exact.py) finds
the exact optimum, which the steps can miss when groups are small against the brokers.

`leader_bound` is the proven lower bound on changes the report shows beside the plan's count.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pylog.planner.costflow import CostFlow
from pylog.planner.leader_exact import EXACT_LIMIT, exact_leaders
from pylog.planner.leader_paths import PathSearch

__all__ = ["LeaderResult", "LeaderStage", "balance_leaders", "leader_bound", "plan_leader_bound"]


@dataclass(slots=True)
class LeaderResult:
    """What could not be balanced."""

    overall_left: int = 0                              # leaderships beyond the overall floor/ceil bounds
    topics_unbalanced: list[str] = field(default_factory=list)  # topics whose replicas allow no within-one spread
    changes: int = 0                                   # partitions whose preferred leader changes
    bound: int | None = 0                              # proven lower bound on `changes` (see leader_bound)


class _Topic:
    """One group's leaderships per broker and its within-one bounds."""

    __slots__ = ("lo", "r", "cnt", "loose", "free")

    def __init__(self, n_parts: int, n: int, free: bool = False) -> None:
        self.lo, self.r = divmod(n_parts, n)
        self.cnt: dict[int, int] = {}
        self.loose = False  # within one is impossible: any shift that does not widen the spread is allowed
        self.free = free    # no per-group bound (per-topic balance off): any shift is allowed

    @property
    def hi(self) -> int:
        """The group's ceil per broker."""
        return self.lo + (self.r > 0)

    def add(self, b: int, delta: int) -> None:
        """Count delta more leaderships on b."""
        self.cnt[b] = self.cnt.get(b, 0) + delta

    def within(self, counts: Mapping[int, int], n: int) -> bool:
        """Are all n target brokers within [lo, hi], given `counts` keyed by target brokers (absent: 0)?"""
        return (not self.lo or len(counts) == n) and all(self.lo <= c <= self.hi for c in counts.values())

    def may_shift(self, a: int, c: int) -> bool:
        """May one leadership move from a to c keeping the topic within one (or not wider, when loose)?"""
        if self.free:
            return True
        ca, cc = self.cnt.get(a, 0), self.cnt.get(c, 0)
        if self.loose:
            return ca > cc + 1
        return self.r > 0 and ca == self.lo + 1 and cc == self.lo


def balance_leaders(topic_parts: Mapping[str, Sequence[int]], replicas: Sequence[list[int]],
                    brokers: Sequence[int], old_leaders: Mapping[int, int] | None = None,
                    topic_balance: bool = True) -> LeaderResult:
    """Reorder `replicas` in place: balanced preferred leaders with the fewest changes from `old_leaders`.

    `old_leaders` maps partition index -> leader before the plan (default: each list's first replica now)."""
    stage = LeaderStage(topic_parts, replicas, brokers, old_leaders, topic_balance)
    if sum(len(replicas[i]) for i in stage.base) <= EXACT_LIMIT:
        for i, b in exact_leaders(stage.groups, replicas, stage.brokers, stage.old, topic_balance).items():
            stage.lead(i, b)
        return stage.result()
    stage.balance_all(_LeaderFlow.TIES)
    stage.repair_overall()
    if stage.off_overall():
        stage.balance_all(_LeaderFlow.STRONG)
        stage.repair_overall()
    stage.restore()
    return stage.result()


class LeaderStage:
    """The leadership counts while the steps of `balance_leaders` change them (see the module doc)."""

    def __init__(self, topic_parts: Mapping[str, Sequence[int]], replicas: Sequence[list[int]],
                 brokers: Sequence[int], old_leaders: Mapping[int, int] | None, topic_balance: bool) -> None:
        self.replicas = replicas
        self.brokers = list(brokers)
        self.targets = set(brokers)
        self.n = len(brokers)
        self.topic_balance = topic_balance
        self.groups = dict(topic_parts)
        self.total = sum(len(idx) for idx in self.groups.values())
        self.floor, extra = divmod(self.total, self.n)
        self.cap = self.floor + (extra > 0)
        self.base = {i: list(replicas[i]) for idx in self.groups.values() for i in idx}  # follower order kept
        self.old = {i: (old_leaders[i] if old_leaders is not None else replicas[i][0]) for i in self.base}
        self.overall = {b: 0 for b in brokers}
        self.group_of = {i: g for g, idx in self.groups.items() for i in idx}
        self.state = {g: _Topic(len(idx), self.n, free=not topic_balance) for g, idx in self.groups.items()}
        # Per target broker b, per other target c: the partitions b leads now that c replicates (dicts as ordered
        # sets), and those of them whose leader changed: the repair's searches step b -> c through these.
        self.pairs: dict[int, dict[int, dict[int, None]]] = {b: {} for b in brokers}
        self.changed_pairs: dict[int, dict[int, dict[int, None]]] = {b: {} for b in brokers}
        self.kept = {g: self._kept(idx) for g, idx in self.groups.items()}
        # Each group's leaderships per broker: the flow's result once balanced, an estimate before.
        self.share = {g: self._estimate(g) for g in self.groups}
        self.expected = {b: 0 for b in brokers}
        for counts in self.share.values():
            for b, c in counts.items():
                self.expected[b] += c
        self.balanced: set[str] = set()
        # Leaderships gained or lost per broker, and the brokers in the order they did: the repair's path search
        # (leader_paths.py) rescans only what these say changed.
        self.version = {b: 0 for b in brokers}
        self.touched: list[int] = []

    def _kept(self, idx: Sequence[int]) -> dict[int, int]:
        kept: dict[int, int] = {}
        for i in idx:
            o = self.old[i]
            if o in self.targets and o in self.replicas[i]:
                kept[o] = kept.get(o, 0) + 1
        return kept

    def _estimate(self, g: str) -> dict[int, int]:
        """What the group would lead per broker keeping all it can (within its bounds)."""
        kept = self.kept[g]
        if not self.topic_balance:
            return dict(kept)
        ts = self.state[g]
        if not ts.lo:  # brokers keeping nothing count 0: only the others need an entry
            return {b: min(c, ts.hi) for b, c in kept.items()}
        return {b: min(max(kept.get(b, 0), ts.lo), ts.hi) for b in self.brokers}

    def order(self) -> list[str]:
        """Groups largest first (the big ones settle the overall counts the small ones then even out)."""
        return sorted(self.groups, key=lambda g: (-len(self.groups[g]), g))

    def lead(self, i: int, b: int) -> None:
        """Make b partition i's preferred leader (followers keep their order) and count it."""
        reps = self.replicas[i]
        if reps[0] != b:
            reps[:] = [b] + [x for x in self.base[i] if x != b]
        changed = self.old[i] != b
        pairs, changed_pairs, targets = self.pairs[b], self.changed_pairs[b], self.targets
        for c in reps:
            if c != b and c in targets:
                pairs.setdefault(c, {})[i] = None
                if changed:
                    changed_pairs.setdefault(c, {})[i] = None
        self.overall[b] += 1
        self.state[self.group_of[i]].add(b, 1)
        self.version[b] += 1
        self.touched.append(b)

    def unlead(self, i: int) -> None:
        """Uncount partition i's current leader."""
        b = self.replicas[i][0]
        for c in self.replicas[i]:
            if c != b and c in self.targets:
                self.pairs[b][c].pop(i, None)
                self.changed_pairs[b].get(c, {}).pop(i, None)
        self.overall[b] -= 1
        self.state[self.group_of[i]].add(b, -1)
        self.version[b] += 1
        self.touched.append(b)

    def balance_all(self, overall: int) -> None:
        """Step 1: every group's flow, largest first, weighing overall balance by `overall` (see _LeaderFlow)."""
        for group in self.order():
            self.balance_group(group, overall)

    def off_overall(self) -> bool:
        """Is some broker outside the overall floor/ceil?"""
        return any(not self.floor <= c <= self.cap for c in self.overall.values())

    def balance_group(self, group: str, overall: int = 1) -> None:
        """Step 1 for one group: leaders from the group's min-cost flow, given every other group's counts."""
        idx = self.groups[group]
        ts = self.state[group]
        if group in self.balanced:
            for i in idx:
                if self.replicas[i][0] in self.targets:
                    self.unlead(i)
        others = dict(self.expected)
        for b, c in self.share[group].items():
            others[b] -= c
        if overall <= _LeaderFlow.TIES and self._settled(group):
            # Nothing to place and every count within bounds: any change costs more than ties can pay back.
            leaders = {i: self.old[i] for i in idx if self.old[i] in self.targets and self.old[i] in self.replicas[i]}
        else:
            leaders = _LeaderFlow(self, group, others, overall).solve()
        for i, b in leaders.items():
            self.lead(i, b)
        self.balanced.add(group)
        self.share[group] = dict(ts.cnt)
        self.expected = others
        for b, c in ts.cnt.items():
            self.expected[b] = self.expected.get(b, 0) + c
        ts.loose = not ts.free and not ts.within(ts.cnt, self.n)

    def _settled(self, group: str) -> bool:
        """Does every partition of the group keep its leader, with every broker's count within the group's bounds?"""
        idx, ts, kept = self.groups[group], self.state[group], self.kept[group]
        if sum(kept.values()) != len(idx):
            return False
        return ts.free or ts.within(kept, self.n)

    def repair_overall(self) -> None:
        """Step 2: brokers above the overall ceil give leaderships away, then brokers below the floor take some."""
        overall, floor, cap = self.overall, self.floor, self.cap
        search = PathSearch(self)
        phases = ((lambda b: overall[b] > cap, lambda b: overall[b] < cap),
                  (lambda b: overall[b] >= cap and overall[b] > floor, lambda b: overall[b] < floor))
        for is_source, is_sink in phases:
            # A path changes the counts of its two ends only: the lists are kept up to date, not rebuilt.
            sources = [b for b in self.brokers if is_source(b)]
            source_set = set(sources)
            sinks = sorted((overall[b], b) for b in self.brokers if is_sink(b))
            sink_set = {b for _, b in sinks}
            while sources and sinks:
                path = search.overall_path(sources, source_set, sinks, sink_set)
                if path is None:
                    break
                ends = {self.replicas[path[-1][0]][0], path[0][1]}
                for b in ends:
                    if b in sink_set:
                        sinks.pop(bisect.bisect_left(sinks, (overall[b], b)))
                        sink_set.discard(b)
                for j, b in path:
                    self.unlead(j)
                    self.lead(j, b)
                for b in ends:
                    if b in source_set and not is_source(b):
                        sources.remove(b)
                        source_set.discard(b)
                    elif b not in source_set and is_source(b):
                        bisect.insort(sources, b)
                        source_set.add(b)
                    if is_sink(b):
                        bisect.insort(sinks, (overall[b], b))
                        sink_set.add(b)

    def restore(self) -> None:
        """Step 3: give a partition its old leader back where the counts allow it, directly or by swapping with a
        partition of the same group its old leader now leads and the new leader replicates (counts unchanged)."""
        replicas, old = self.replicas, self.old
        by_pair: dict[tuple[str, int, int], list[int]] = {}
        for group, idx in self.groups.items():
            for q in idx:
                reps = replicas[q]
                if reps[0] != old[q]:  # only partitions whose leader changed may be swapped at no cost
                    for f in reps[1:]:
                        by_pair.setdefault((group, reps[0], f), []).append(q)
        for group, idx in self.groups.items():
            for i in idx:
                self._restore_one(group, i, by_pair)

    def _restore_one(self, group: str, i: int, by_pair: dict[tuple[str, int, int], list[int]]) -> None:
        a, b = self.old[i], self.replicas[i][0]
        if a == b or a not in self.targets or a not in self.replicas[i]:
            return
        if self.state[group].may_shift(b, a) and self.overall[a] < self.cap and self.overall[b] > self.floor:
            self.unlead(i)
            self.lead(i, a)
            return
        for q in by_pair.get((group, a, b), ()):
            if self.replicas[q][0] != a or q == i or b not in self.replicas[q]:
                continue
            self.unlead(i)
            self.unlead(q)
            self.lead(i, a)
            self.lead(q, b)
            if self.old[q] != b:
                for f in self.replicas[q][1:]:
                    by_pair.setdefault((group, b, f), []).append(q)
            break

    def result(self) -> LeaderResult:
        """Changes, the lower bound, and what could not be balanced."""
        res = LeaderResult()
        res.overall_left = sum(max(0, c - self.cap, self.floor - c) for c in self.overall.values())
        res.topics_unbalanced = sorted(  # judged on the final counts: the repair may have moved a loose group's
            g for g, ts in self.state.items()  # leaderships back within one, or not
            if not ts.free and not ts.within(ts.cnt, self.n))
        res.changes = sum(1 for i, b in self.old.items() if self.replicas[i][0] != b)
        loose = set(res.topics_unbalanced) if self.topic_balance else set(self.groups)
        res.bound = leader_bound(self.groups, self.kept, self.n, loose, not res.overall_left)
        return res


class _LeaderFlow:
    """One group's leadership choice as a min-cost flow (see the module doc, step 1).

    Nodes: source, sink, each group's orphan pool, (group, broker) nodes, and one node per partition that may
    change leader: its unit enters from the broker that keeps it (or the pool) and leaves to the broker leading
    it after. Costs: CHANGE to hand a kept leadership on. Counts move along convex costs: a group unit per
    leadership outside the group's floor/ceil, an overall unit per leadership outside the overall floor/ceil.
    The (group, broker) nodes take from the source and give to the sink, with the other groups' counts given:
    `overall` = TIES only picks among equally cheap choices the one nearer overall balance, STRONG evens the
    brokers out at up to STRONG / CHANGE - 1 changes a leadership. Only arcs out of the source and into the sink
    cost < 0, so the kept state is a valid start (costflow.py)."""

    CHANGE = 2
    TIES = 1
    STRONG = 16

    def __init__(self, stage: LeaderStage, group: str, others: Mapping[int, int], overall: int) -> None:
        self.stage = stage
        size = len(stage.groups[group])
        scale = self.CHANGE * (size + 2)
        self.overall_unit = overall
        self.group_unit = 4 * self.STRONG + scale if stage.topic_balance else 0
        self.f = CostFlow()
        self.src, self.sink = self.f.node(), self.f.node()
        self.group = group
        self.node: dict[int, int] = {}           # broker -> the (group, broker) node
        self.fixed: dict[int, int] = {}          # partition -> leader when it has no choice to make
        self.choices: dict[int, list[tuple[int, int]]] = {}  # partition -> (arc, broker) it may leave by
        pool = self.f.node()
        orphans = self._partition_arcs(group, pool)
        self.f.arc(self.src, pool, orphans, -(2 * self.group_unit + 2 * self.STRONG + scale))
        self._count_arcs(others)

    def _partition_arcs(self, g: str, pool: int) -> int:
        f, stage, orphans, node = self.f, self.stage, 0, self.node
        targets, old, replicas, change = stage.targets, stage.old, stage.replicas, self.CHANGE
        for i in stage.groups[g]:
            o = old[i]
            options = [b for b in replicas[i] if b in targets]
            if not options:
                continue
            if o in options:
                u = node.get(o)
                if u is None:
                    u = node[o] = f.node()
                if len(options) == 1:
                    self.fixed[i] = o
                    continue
                cost = change
            else:
                u, cost = pool, 0
                orphans += 1
            others = [c for c in options if c != o]
            vs = [node.get(c, -1) for c in others]
            first = f.fan(u, vs, cost)
            for c, v in zip(others, vs):
                node[c] = v
            self.choices[i] = list(zip(range(first, first + 2 * len(others), 2), others))
        return orphans

    def _count_arcs(self, others: Mapping[int, int]) -> None:
        f, stage, g = self.f, self.stage, self.group
        ts, kept_g, size = stage.state[g], stage.kept[g], len(stage.groups[g])
        g_lo, g_hi, g_unit = ts.lo, ts.hi, self.group_unit
        unit, floor, cap = self.overall_unit, stage.floor, stage.cap
        src, sink = self.src, self.sink
        # The arcs depend on (kept, other) only, which most brokers share (with 1000 brokers a group's counts are
        # 0 or 1 and the others' near the floor): each pair's steps are worked out once.
        memo: dict[tuple[int, int], tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
        for b, v in sorted(self.node.items()):
            key = (kept_g.get(b, 0), others.get(b, 0))
            steps = memo.get(key)
            if steps is None:
                kept, other = key

                def both(x: int, other: int = other) -> int:
                    return ((-g_unit if x < g_lo else (g_unit if x >= g_hi else 0))
                            + (-unit if other + x < floor else (unit if other + x >= cap else 0)))
                cuts = (g_lo, g_hi, floor - other, cap - other)
                steps = memo[key] = (_steps(kept, size, False, both, cuts) if kept else [],
                                     _steps(kept, size, True, both, cuts))
            for n, cost in steps[0]:
                f.arc(src, v, n, cost)
            for n, cost in steps[1]:
                f.arc(v, sink, n, cost)

    def solve(self) -> dict[int, int]:
        """Partition index -> its leader in the min-cost solution."""
        self.f.solve(self.src, self.sink)
        leaders = dict(self.fixed)
        for i, arcs in self.choices.items():
            moved = [c for a, c in arcs if self.f.flow(a)]
            leaders[i] = moved[0] if moved else self.stage.old[i]
        return leaders


def _steps(start: int, size: int, up: bool, marginal: Callable[[int], int], cuts: Iterable[int]
           ) -> list[tuple[int, int]]:
    """(capacity, cost) arcs raising (up, to `size`) or lowering (to 0) a count from `start` whose step x -> x+1
    costs marginal(x), convex and constant between the `cuts`."""
    lo_end, hi_end = (start, size) if up else (0, start)
    points = sorted({lo_end, hi_end} | {c for c in cuts if lo_end < c < hi_end})
    steps = []
    for x0, x1 in zip(points, points[1:]):
        m = marginal(x0)
        steps.append((x1 - x0, m if up else -m))
    return steps


def leader_bound(groups: Mapping[str, Sequence[int]], kept: Mapping[str, Mapping[int, int]], n: int,
                 loose: set[str], overall_balanced: bool) -> int:
    """Fewest preferred-leader changes of any leader choice balanced within one per group and overall.

    A group of P partitions whose brokers keep k_b of their leaderships ends with floor(P/n) on every broker and
    one more on P mod n of them, so at most sum min(floor, k_b) + min(P mod n, #{k_b > floor}) keep their leader:
    the rest change. The same holds overall. A group that cannot be within one counts its orphans only."""
    per_group = 0
    overall_kept: dict[int, int] = {}
    total = 0
    for g, idx in groups.items():
        held = kept.get(g, {})
        total += len(idx)
        for b, c in held.items():
            overall_kept[b] = overall_kept.get(b, 0) + c
        if g in loose:
            per_group += len(idx) - sum(held.values())
        else:
            per_group += _kept_bound(len(idx), held, n)
    if not overall_balanced:
        return per_group
    return max(per_group, _kept_bound(total, overall_kept, n))


def plan_leader_bound(topics: Sequence[str], old_leaders: Sequence[int], proposed: Sequence[Sequence[int]],
                      brokers: Sequence[int], topic_balance: bool) -> int:
    """`leader_bound` for any plan (e.g. Kafka's): groups and the whole count as balanced where the plan is."""
    targets = set(brokers)
    groups: dict[str, list[int]] = {}
    kept: dict[str, dict[int, int]] = {}
    led: dict[str, dict[int, int]] = {}
    for i, (t, o, reps) in enumerate(zip(topics, old_leaders, proposed)):
        groups.setdefault(t, []).append(i)
        if o in targets and o in reps:
            kept.setdefault(t, {})[o] = kept.setdefault(t, {}).get(o, 0) + 1
        led.setdefault(t, {})[reps[0]] = led.setdefault(t, {}).get(reps[0], 0) + 1
    overall: dict[int, int] = {}
    loose = set()
    for t, counts in led.items():
        for b, c in counts.items():
            overall[b] = overall.get(b, 0) + c
        on_targets = [counts.get(b, 0) for b in brokers]
        if not topic_balance or max(on_targets) - min(on_targets) > 1:
            loose.add(t)
    on_targets = [overall.get(b, 0) for b in brokers]
    return leader_bound(groups, kept, len(brokers), loose, max(on_targets) - min(on_targets) <= 1)


def _kept_bound(size: int, kept: Mapping[int, int], n: int) -> int:
    lo, r = divmod(size, n)
    return size - sum(min(lo, c) for c in kept.values()) - min(r, sum(1 for c in kept.values() if c > lo))
