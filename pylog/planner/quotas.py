"""Target replica counts: per broker overall and per (topic, broker), as even as the racks allow.

The targets decide the plan's move count, so they are chosen to minimise it:
* overall, each target broker gets floor or ceil of its rack level; the ceil slots go to the brokers that hold
  the most replicas now, which minimises sum(max(0, current - target)) -- the count lower bound;
* per topic, each broker gets the topic's level in its rack, plus at most one "extra"; extras are dealt so
  that every broker's topic targets add up to its overall target, preferring brokers that would otherwise
  have to give a replica of that topic away ("beneficial" extras save one move each).
Racks bound each topic's replicas per rack (one per partition when RF <= #racks, at least one per partition
when RF >= #racks); `level_fill` water-fills the levels within those bounds.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["RackLevel", "TopicQuota", "level_fill", "rack_bounds", "global_targets", "deal_extras"]


@dataclass(frozen=True, slots=True)
class RackLevel:
    """A rack's share: every broker gets `level`, plus one extra on `lo`..`hi` of its brokers."""

    level: int
    lo: int
    hi: int


@dataclass(slots=True)
class TopicQuota:
    """A topic's targets: level per rack index plus the brokers holding one extra replica."""

    levels: list[int]
    extras: list[int]

    def target(self, broker: int, rack_index: int, extras: set[int] | None = None) -> int:
        """Target count of this topic on `broker` (pass a prebuilt `extras` set when calling in a loop)."""
        return self.levels[rack_index] + (broker in (extras if extras is not None else set(self.extras)))


def level_fill(total: int, sizes: Sequence[int], lo: Sequence[int], hi: Sequence[int]) -> list[RackLevel]:
    """Spread `total` units over racks of `sizes` brokers as evenly per broker as the [lo, hi] rack bounds allow.

    Racks whose bounds bind are pinned at the bound; the others share one per-broker level L (L or L+1 each).
    """
    clamped: dict[int, int] = {}
    while True:
        free = [k for k in range(len(sizes)) if k not in clamped]
        n_free = sum(sizes[k] for k in free)
        if not n_free:
            break
        level = (total - sum(clamped.values())) // n_free
        over = [k for k in free if sizes[k] * level > hi[k]]
        under = [k for k in free if sizes[k] * (level + 1) < lo[k]]
        if over:
            clamped.update((k, hi[k]) for k in over)
        elif under:
            clamped.update((k, lo[k]) for k in under)
        else:
            break
    result = []
    for k, n in enumerate(sizes):
        if k in clamped:
            q = clamped[k]
            result.append(RackLevel(q // n, q % n, q % n))
        else:
            result.append(RackLevel(level, max(0, lo[k] - n * level), min(n, hi[k] - n * level)))
    return result


def rack_bounds(rfs: Sequence[int], n_racks: int) -> tuple[int, int]:
    """(min, max) replicas of a group of partitions (given their RFs) that any one rack may hold."""
    lo = sum(1 for rf in rfs if rf >= n_racks)
    hi = sum(1 if rf <= n_racks else rf - n_racks + 1 for rf in rfs)
    return lo, hi


def global_targets(total: int, rack_brokers: Sequence[Sequence[int]], levels: Sequence[RackLevel],
                   current: Mapping[int, int]) -> dict[int, int]:
    """Per-broker overall targets: rack level plus one extra, extras to the fullest brokers (minimises moves)."""
    extras_left = total - sum(lv.level * len(bs) for lv, bs in zip(levels, rack_brokers))
    targets: dict[int, int] = {}
    given = [0] * len(levels)
    # Mandatory extras first (racks that must exceed their level), fullest brokers first.
    ranked_by_rack = [sorted(bs, key=lambda b: (-current.get(b, 0), b)) for bs in rack_brokers]
    for k, ranked in enumerate(ranked_by_rack):
        for b in ranked[:levels[k].lo]:
            targets[b] = levels[k].level + 1
        given[k] = min(levels[k].lo, len(ranked))
        extras_left -= given[k]
    rack_of = {b: k for k, bs in enumerate(rack_brokers) for b in bs}
    for b in sorted(rack_of, key=lambda b: (-current.get(b, 0), b)):
        if b in targets:
            continue
        k = rack_of[b]
        if extras_left > 0 and given[k] < levels[k].hi:
            targets[b] = levels[k].level + 1
            given[k] += 1
            extras_left -= 1
        else:
            targets[b] = levels[k].level
    return targets


class _Budgets:
    """Remaining extra budget per broker, bucketed by (rack, budget) so picks touch few brokers.

    Floating units model the overall "floor or ceil" freedom: `pool` brokers overall (at most `rack_cap[k]` in
    rack k) may end one above their level. Each eligible broker starts with one floating unit on top of its
    budget; spending it claims one of the pool, and once the pool (or a rack's cap) is used up the other
    brokers' floating units are withdrawn. So the dealing, not a fixed tie-break, decides which brokers get
    the overall ceil, and it gives it where the topics save moves.
    """

    def __init__(self, budget: dict[int, int], rack_of: Mapping[int, int], n_racks: int,
                 floating: set[int], pool: int, rack_cap: Sequence[int]) -> None:
        self.budget = budget
        self.rack_of = rack_of
        self.floating = {b for b in floating if rack_cap[rack_of[b]] > 0} if pool > 0 else set()
        self.pool = pool
        self.rack_left = list(rack_cap)
        self.claimed: set[int] = set()
        self.buckets: list[dict[int, dict[int, None]]] = [{} for _ in range(n_racks)]
        for b in sorted(budget):
            budget[b] += b in self.floating
            self.buckets[rack_of[b]].setdefault(budget[b], {})[b] = None

    def levels(self) -> list[int]:
        """Distinct budget values present, highest first."""
        return sorted({v for rack in self.buckets for v, bs in rack.items() if bs}, reverse=True)

    def _shift(self, b: int, delta: int) -> None:
        v = self.budget[b]
        rack = self.buckets[self.rack_of[b]]
        del rack[v][b]
        self.budget[b] = v + delta
        rack.setdefault(v + delta, {})[b] = None

    def take(self, b: int) -> None:
        """Spend one unit of b's budget (claiming a floating unit if it was b's last)."""
        self._shift(b, -1)
        if b in self.floating and self.budget[b] == 0:
            self.floating.discard(b)
            self.claimed.add(b)
            self.pool -= 1
            k = self.rack_of[b]
            self.rack_left[k] -= 1
            if self.pool == 0:
                self._withdraw(lambda x: True)
            elif self.rack_left[k] == 0:
                self._withdraw(lambda x: self.rack_of[x] == k)

    def _withdraw(self, which) -> None:
        for x in sorted(self.floating):
            if which(x):
                self.floating.discard(x)
                if self.budget[x] > 0:
                    self._shift(x, -1)


def deal_extras(topic_order: Sequence[str], demands: Mapping[str, int], rack_ranges: Mapping[str, Sequence[tuple[int, int]]],
                holders: Mapping[str, Mapping[int, int]], levels: Mapping[str, Sequence[int]],
                budget: dict[int, int], rack_of: Mapping[int, int], n_racks: int,
                floating: set[int] | None = None, pool: int = 0,
                rack_cap: Sequence[int] | None = None, bonus: bool = True) -> tuple[dict[str, list[int]], set[int]]:
    """Give each topic its `demands[t]` extras on distinct brokers, spending the brokers' budgets exactly.

    Highest remaining budget first (the Gale-Ryser greedy, which always completes when the budgets are even),
    with a one-level bonus for beneficial brokers (holding more of the topic than its level), so the extras
    land where they save a move. Per-rack [lo, hi] ranges keep the targets rack-feasible. A topic that finds no
    broker with budget left overdraws the fullest one; the report shows the resulting imbalance.
    Returns the extras per topic and the brokers that claimed a floating unit (see `_Budgets`), or None
    instead of the latter when some budget was overdrawn or left over (the overall targets are then missed).
    """
    budgets = _Budgets(budget, rack_of, n_racks, floating or set(), pool, rack_cap or [0] * n_racks)
    result: dict[str, list[int]] = {}
    # wanted[b]: topics not dealt yet for which b is beneficial.
    wanted: dict[int, int] = {}
    for topic in topic_order:
        lv = levels[topic]
        for b, c in holders[topic].items():
            if b in rack_of and c > lv[rack_of[b]]:
                wanted[b] = wanted.get(b, 0) + 1
    for ti, topic in enumerate(topic_order):
        need = demands[topic]
        if need <= 0:
            result[topic] = []
            continue
        ranges = rack_ranges[topic]
        lv = levels[topic]
        held = holders[topic]
        beneficial = {b for b, c in held.items() if b in rack_of and c > lv[rack_of[b]]}
        for b in beneficial:
            wanted[b] -= 1
        per_rack = [0] * n_racks
        chosen: list[int] = []
        chosen_set: set[int] = set()

        def pick(count: int, allowed_racks: Sequence[int], cap: Sequence[int]) -> None:
            if count <= 0:
                return
            # Rotate the rack order per topic so ties do not always favour the same rack.
            order = [allowed_racks[(i + ti) % len(allowed_racks)] for i in range(len(allowed_racks))]
            ben_by_budget: dict[int, list[int]] = {}
            for b in sorted(beneficial, key=lambda b: (-held[b], b)):
                if rack_of[b] in allowed_racks and b not in chosen_set:
                    ben_by_budget.setdefault(budgets.budget[b], []).append(b)
            got = 0
            levels_desc = budgets.levels()
            top = levels_desc[0] if levels_desc else 0
            bottom = min(levels_desc[-1] if levels_desc else 0, 0)

            def add(b: int) -> None:
                nonlocal got
                chosen.append(b); chosen_set.add(b); per_rack[rack_of[b]] += 1; got += 1

            # Positive budgets first; a beneficial broker ranks one level above its budget.
            shift = 1 if bonus else 0
            for eff in range(top + shift, 0, -1):
                for b in ben_by_budget.get(eff - shift, ()) if eff - shift > 0 else ():
                    if got < count and per_rack[rack_of[b]] < cap[rack_of[b]]:
                        add(b)
                # Non-beneficial picks avoid brokers where a later topic would save a move, if they can.
                for spare_only in (True, False):
                    for k in order:
                        for b in budgets.buckets[k].get(eff, ()):
                            if got >= count or per_rack[k] >= cap[k]:
                                break
                            if b not in chosen_set and b not in beneficial and not (spare_only and wanted.get(b)):
                                add(b)
                if got >= count:
                    return
            # Overdraw: no broker with budget left fits; take the least overdrawn.
            for eff in range(0, bottom - 1, -1):
                for b in ben_by_budget.get(eff, ()):
                    if got < count and b not in chosen_set and per_rack[rack_of[b]] < cap[rack_of[b]]:
                        add(b)
                for k in order:
                    for b in budgets.buckets[k].get(eff, ()):
                        if got >= count or per_rack[k] >= cap[k]:
                            break
                        if b not in chosen_set and b not in beneficial:
                            add(b)
                if got >= count:
                    return

        for k, (lo, _) in enumerate(ranges):
            if lo > 0:
                pick(lo, [k], [lo if i == k else 0 for i in range(n_racks)])
        all_racks = list(range(n_racks))
        pick(need - len(chosen), all_racks, [hi for _, hi in ranges])
        if len(chosen) < need:
            # Rack ranges could not be met with the remaining budgets: ignore them rather than fail.
            pick(need - len(chosen), all_racks, [10**9] * n_racks)
        for b in chosen:
            budgets.take(b)
        result[topic] = sorted(chosen)
    exact = all(v == 0 for v in budgets.budget.values())
    return result, (budgets.claimed if exact else None)
