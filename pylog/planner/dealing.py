"""Per-rack dealing of the groups' "extra" replicas: which brokers hold level + 1 of a group.

Inside rack k a group g with T replicas there gives every broker level = T // n_k and one extra to x = T % n_k
brokers. Broker b can take t_b - sum(levels) extras in all, so the rack is a bipartite degree problem: groups with
x_g extras, brokers with budgets, at most one extra of a group per broker. The group's moves inside the rack are
its excess over these targets, and an extra lowers that excess by one exactly on a broker that holds more than the
level ("beneficial"), so the dealing maximises the beneficial extras:

1. a group with more beneficial brokers than extras keeps them on the brokers least over-subscribed (beneficial
   extras wanted there minus budget), dropping the others where a drop is due anyway;
2. a broker still over-subscribed drops beneficial extras of the groups with the fewest extras left to place
   (so the completion stays feasible), the smallest unit to move first (fewest bytes);
3. the remaining extras go to the brokers with the most budget left (the Gale-Ryser greedy, which completes
   whenever budgets are even), with a one-step exchange when a group finds no broker left, and an overdraft
   (reported as imbalance) when even that fails.
   The completion deals the brokers going without the overall ceil before the groups; when that leaves a group's
   extra on a broker blocked for it (it holds a partition whose replica must land there), the greedy is redone
   with those brokers chosen among the blocked ones, and kept when it blocks fewer extras with as many beneficial.

The greedy can miss the optimum: step 1 ranks over-subscription by beneficial extras only, so a group that must
put non-beneficial extras on nearly every broker (it competes for the same budgets) is not seen, and the exchange
then trades a beneficial extra away. When the greedy leaves beneficial extras short of the obvious bound (each
group: min(extras, beneficial brokers)) or overdraws, and the rack is small enough, `_exact` solves the same degree
problem as a min-cost flow (source -> group [its extras] -> broker [one per group; cost 0 where beneficial] ->
sink [the budget], plus one unit per broker through a node of `floating` units: the overall ceil) and its dealing
replaces the greedy's when it places every extra with more beneficial ones.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pylog.planner.costflow import CostFlow

__all__ = ["DealInput", "DealResult", "deal_rack"]


@dataclass(slots=True)
class DealInput:
    """One group in one rack: extras to deal, its level there, and what each broker of the rack keeps of it."""

    group: str
    extras: int
    level: int
    kept: dict[int, int]            # broker (of this rack) -> replicas of the group it keeps
    blocked: dict[int, int] | None = None  # broker -> replicas landing in the rack it cannot take (holds them)


@dataclass(slots=True)
class DealResult:
    """Brokers given an extra, per group, and how the dealing went."""

    extras: dict[str, list[int]]
    ceil: list[int] = field(default_factory=list)   # brokers given the overall ceil
    beneficial: int = 0             # extras on brokers holding more than the level (each saves a move)
    overdrawn: int = 0              # extras given beyond a broker's budget (overall imbalance)


EXACT_ARCS = 20_000  # group-broker arcs up to which a short greedy dealing is re-solved exactly (a few ms)

_NO_CEIL = "\0no-ceil"  # the virtual group of brokers that do not get the overall ceil (no topic has a NUL)


def deal_rack(brokers: Sequence[int], budget: Mapping[int, int], groups: Sequence[DealInput], floating: int = 0,
              fullness: Mapping[int, int] | None = None,
              unit_size: Callable[[str, int], int] | None = None) -> DealResult:
    """Deal every group's extras over the rack's brokers within their budgets (see the module doc)."""
    ben = {d.group: {b for b, c in d.kept.items() if c > d.level} for d in groups}
    result = _greedy(brokers, budget, groups, floating, fullness, unit_size)
    result.beneficial = sum(len(ben[g] & set(bs)) for g, bs in result.extras.items())
    if _blocked_extras(result, groups):
        # The completion deals the brokers without the overall ceil before the groups, blind to the blocked
        # brokers: dealt the other way, those brokers go without the ceil, if that blocks fewer extras.
        other = _greedy(brokers, budget, groups, floating, fullness, unit_size, ceil_aside=True)
        other.beneficial = sum(len(ben[g] & set(bs)) for g, bs in other.extras.items())
        if _rank(other, groups) < _rank(result, groups):
            result = other
    reachable = sum(min(d.extras, len(ben[d.group] & set(brokers))) for d in groups)
    if (result.overdrawn or result.beneficial < reachable) and len(groups) * len(brokers) <= EXACT_ARCS:
        exact = _exact(brokers, budget, groups, floating, ben)
        if exact is not None and (result.overdrawn or exact.beneficial > result.beneficial):
            return exact
    return result


def _blocked_extras(result: DealResult, groups: Sequence[DealInput]) -> int:
    """Extras dealt to brokers that cannot take some replica landing there for the group (see DealInput)."""
    return sum(sum((d.blocked or {}).get(b, 0) > 0 for b in result.extras.get(d.group, ())) for d in groups)


def _rank(result: DealResult, groups: Sequence[DealInput]) -> tuple[int, int, int]:
    """Lower is better: overdrafts, then beneficial extras missed, then blocked extras."""
    return result.overdrawn, -result.beneficial, _blocked_extras(result, groups)


def _exact(brokers: Sequence[int], budget: Mapping[int, int], groups: Sequence[DealInput], floating: int,
           ben: Mapping[str, set[int]]) -> DealResult | None:
    """The dealing with the most beneficial extras (min-cost flow, see the module doc); None if not every extra
    fits the budgets. Among equal ones it avoids brokers blocked for the group (the mover must fill the extra)."""
    placed = sum(d.extras for d in groups)
    weight = placed + 1            # one beneficial extra outweighs every blocked one
    f = CostFlow()
    s, t, ceil = f.node(), f.node(), f.node()
    node = {b: f.node() for b in brokers}
    ceil_arc = {}
    for b in brokers:
        f.arc(node[b], t, max(0, budget[b]), 0)
        ceil_arc[b] = f.arc(node[b], ceil, 1, 0)
    f.arc(ceil, t, max(0, floating), 0)
    arcs: list[tuple[str, int, int]] = []
    for d in groups:
        g = f.node()
        f.arc(s, g, d.extras, -(weight + 1) * (len(brokers) + 1))   # every extra must be placed
        block = d.blocked or {}
        for b in brokers:
            cost = (0 if b in ben[d.group] else weight) + (block.get(b, 0) > 0)
            arcs.append((d.group, b, f.arc(g, node[b], 1, cost)))
    f.solve(s, t)
    result = DealResult({d.group: [] for d in groups})
    for g, b, a in arcs:
        if f.flow(a):
            result.extras[g].append(b)
            result.beneficial += b in ben[g]
    if sum(map(len, result.extras.values())) < placed:
        return None
    result.ceil = sorted(b for b in brokers if f.flow(ceil_arc[b]))
    return result


def _greedy(brokers: Sequence[int], budget: Mapping[int, int], groups: Sequence[DealInput], floating: int = 0,
            fullness: Mapping[int, int] | None = None, unit_size: Callable[[str, int], int] | None = None,
            ceil_aside: bool = False) -> DealResult:
    """The greedy dealing of the module doc (steps 1-3); `ceil_aside`: see `_complete`.

    `floating` brokers of the rack may take one extra more (the overall ceil). It goes first to brokers that
    would otherwise drop a beneficial extra (the fullest of them first: `fullness` = replicas held now); the
    rest is dealt with the extras: every other broker gets the ceil tentatively, and a virtual group takes one
    unit from each broker that ends without it, so the completion decides where the ceil helps most.
    """
    ben: dict[str, list[int]] = {}
    ben_at: dict[int, list[str]] = {b: [] for b in brokers}
    need: dict[str, int] = {}
    for d in groups:
        need[d.group] = d.extras
        bl = sorted(b for b, c in d.kept.items() if c > d.level and b in ben_at)
        ben[d.group] = bl
        for b in bl:
            ben_at[b].append(d.group)
    pressure = {b: len(ben_at[b]) - budget[b] for b in brokers}
    full = fullness or {}
    keep: dict[str, set[int]] = {}
    # 1. Groups with more beneficial brokers than extras drop where brokers are over-subscribed (the least
    # full of them: the fullest keep the overall ceil, as the count lower bound assumes).
    for g in sorted(ben, key=lambda g: (-(len(ben[g]) - need[g]), g)):
        bl = ben[g]
        if len(bl) > need[g]:
            ranked = sorted(bl, key=lambda b: (-pressure[b], full.get(b, 0), b))
            for b in ranked[:len(bl) - need[g]]:
                pressure[b] -= 1
            keep[g] = set(ranked[len(bl) - need[g]:])
        else:
            keep[g] = set(bl)
    # The overall ceil where it saves a drop.
    budget = dict(budget)
    pinned = sorted((b for b in brokers if pressure[b] > 0), key=lambda b: (-full.get(b, 0), b))[:floating]
    for b in pinned:
        budget[b] += 1
        pressure[b] -= 1
    # 2. Brokers still over-subscribed drop the extras whose unit is smallest.
    for b in brokers:
        if pressure[b] <= 0:
            continue
        # Drop where the group has the fewest extras still to place (the others must still find brokers for
        # theirs, which gets harder the more they need), then the smallest unit to move (fewest bytes).
        held = [g for g in ben_at[b] if b in keep[g]]
        held.sort(key=lambda g: (need[g] - len(keep[g]), unit_size(g, b) if unit_size else 0, g))
        for g in held[:pressure[b]]:
            keep[g].discard(b)
    result = DealResult({})
    result.beneficial = sum(len(v) for v in keep.values())
    # 3. The rest of the ceil goes with the completion (see the doc), then the extras.
    pinned_set = set(pinned)
    unpinned = [b for b in brokers if b not in pinned_set]
    for b in unpinned:
        budget[b] += 1
    need[_NO_CEIL] = len(unpinned) - (floating - len(pinned))
    keep[_NO_CEIL] = set(pinned)     # never "no ceil" for those; removed from the result below
    ben[_NO_CEIL] = []
    blocked = {d.group: d.blocked for d in groups if d.blocked}
    result.overdrawn = _complete(brokers, budget, need, keep, ben, blocked, ceil_aside)
    no_ceil = keep.pop(_NO_CEIL) - pinned_set
    del need[_NO_CEIL]
    result.ceil = sorted(b for b in brokers if b not in no_ceil)
    result.extras = {g: sorted(keep.get(g, ())) for g in need}
    return result


def _complete(brokers: Sequence[int], budget: Mapping[int, int], need: Mapping[str, int],
              keep: dict[str, set[int]], ben: Mapping[str, Sequence[int]],
              blocked: Mapping[str, Mapping[int, int]], ceil_aside: bool = False) -> int:
    """Give every group its missing extras on brokers with budget left (Gale-Ryser greedy); returns overdrafts.

    Among brokers with as much budget left, a group prefers those that can take the replicas landing in the
    rack (the others already hold some of those partitions), so the mover can fill every extra. With
    `ceil_aside`, the brokers going without the overall ceil are, among as much budget left, those blocked
    most for the groups."""
    left = dict(budget)
    ex = _Extras(brokers, {g: set(bl) for g, bl in ben.items()})
    for g, chosen in keep.items():
        if g == _NO_CEIL:
            continue
        for b in chosen:
            left[b] -= 1
            ex.add(g, b)
    buckets: dict[int, dict[int, None]] = {}
    for b in brokers:
        buckets.setdefault(left[b], {})[b] = None
    overdrawn = 0
    top = max(buckets, default=0)
    n_pinned = len(keep.get(_NO_CEIL, ()))
    if ceil_aside and blocked:
        blocked = {**blocked, _NO_CEIL: {b: -sum(bl.get(b, 0) for bl in blocked.values()) for b in brokers}}
    for g in sorted(need, key=lambda g: (-(need[g] - len(keep.get(g, ())) + (n_pinned if g == _NO_CEIL else 0)),
                                         g)):
        chosen_set = keep.setdefault(g, set())
        missing = need[g] - len(chosen_set) + (n_pinned if g == _NO_CEIL else 0)
        picked: list[int] = []
        level = top
        block = blocked.get(g)
        while missing > 0 and level > 0:
            bucket = buckets.get(level, ())
            if block and bucket:
                bucket = sorted(bucket, key=lambda b: block.get(b, 0))
            for b in bucket:
                if b not in chosen_set:
                    picked.append(b)
                    missing -= 1
                    if not missing:
                        break
            level -= 1
        for b in picked:
            _take(b, left, buckets)
            chosen_set.add(b)
            ex.add(g, b)
        while missing > 0:
            if not ex.exchange(g, chosen_set, left, buckets, keep):
                # Overdraft: the broker with the most budget left that lacks the group.
                b = max((b for b in brokers if b not in chosen_set), key=lambda b: (left[b], -b))
                overdrawn += 1
                _take(b, left, buckets)
                chosen_set.add(b)
                ex.add(g, b)
            missing -= 1
        while top > 0 and not buckets.get(top):  # budgets only go down
            top -= 1
    return overdrawn


def _take(b: int, left: dict[int, int], buckets: dict[int, dict[int, None]]) -> None:
    v = left[b]
    del buckets[v][b]
    left[b] = v - 1
    buckets.setdefault(v - 1, {})[b] = None


class _Extras:
    """Which groups have an extra on each broker, beneficial ones apart (exchanges move the others first)."""

    def __init__(self, brokers: Sequence[int], ben: Mapping[str, set[int]]) -> None:
        self.brokers = brokers
        self.ben = ben
        self.at = {b: ({}, {}) for b in brokers}   # broker -> (plain groups, beneficial groups), ordered

    def add(self, g: str, b: int) -> None:
        self.at[b][b in self.ben.get(g, ())][g] = None

    def remove(self, g: str, b: int) -> None:
        del self.at[b][b in self.ben.get(g, ())][g]

    def exchange(self, g: str, chosen: set[int], left: dict[int, int], buckets: dict[int, dict[int, None]],
                 keep: dict[str, set[int]]) -> bool:
        """g needs one more broker but every broker with budget has g's extra already: some group h hands its
        extra on a broker a (without g's) over to a broker b with budget (without h's), and g takes a."""
        with_budget = [b for b in self.brokers if left[b] > 0]
        for beneficial in (0, 1):
            for a in self.brokers:
                if a in chosen:
                    continue
                for h in self.at[a][beneficial]:
                    for b in with_budget:
                        if b not in keep[h]:
                            keep[h].discard(a)
                            keep[h].add(b)
                            self.remove(h, a)
                            self.add(h, b)
                            _take(b, left, buckets)
                            chosen.add(a)
                            self.add(g, a)
                            return True
        return False
