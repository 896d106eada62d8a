"""Overall per-broker targets and the lower bounds on replica moves.

Overall: every target broker ends with floor or ceil of its rack's share. The rack totals come from the exact
rack-level flow (racks.py): balanced within one whenever the rack rule allows it, and among balanced totals the
ones letting the most currently-full brokers keep the ceil; inside a rack the fullest brokers get the ceil. That
minimises sum(max(0, current - target)) -- the issue's count lower bound -- over every rack-valid balanced plan.

Per topic, a plan balanced within one gives topic g L_g = R_g // n replicas on every broker plus one "extra" on
X_g = R_g - n * L_g brokers. Its moves are at least its excess over those targets, and an extra only lowers the
excess on a broker holding more than L_g of the topic ("beneficial"). Topic g has X_g extras and broker b has
t_b - sum(L_g) of them, so the extras that save a move are at most both sum_g min(X_g, ben_g) and
sum_b min(extras_b, ben_b): subtracting the smaller from the base excess is a lower bound valid for every plan
balanced overall and per topic, whichever brokers get the overall ceil.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from pylog.planner.racks import overall_rack_totals

__all__ = ["overall_targets", "count_lower_bound", "topic_lower_bound"]


def overall_targets(rfs: Mapping[int, int], rack_brokers: Sequence[Sequence[int]], rack_names: Sequence[str],
                    current: Mapping[int, int]) -> tuple[dict[int, int], list[int], str | None]:
    """(target per broker, replicas per rack, why balance within one is impossible or None)."""
    total = sum(rf * n for rf, n in rfs.items())
    sizes = [len(bs) for bs in rack_brokers]
    counts = [[current.get(b, 0) for b in bs] for bs in rack_brokers]
    totals = overall_rack_totals(rfs, sizes, rack_names, total, counts)
    targets: dict[int, int] = {}
    for bs, s in zip(rack_brokers, totals.totals):
        level, ceil = divmod(s, len(bs))
        ranked = sorted(bs, key=lambda b: (-current.get(b, 0), b))
        for j, b in enumerate(ranked):
            targets[b] = level + (j < ceil)
    return targets, list(totals.totals), totals.note


def count_lower_bound(current: Mapping[int, int], targets: Mapping[int, int]) -> int:
    """Replicas on non-target brokers plus every target broker's excess above its target."""
    return sum(c - targets.get(b, 0) for b, c in current.items() if c > targets.get(b, 0))


def topic_lower_bound(holders: Mapping[str, Mapping[int, int]], replicas: Mapping[str, int],
                      targets: Mapping[int, int], balanced: Sequence[str], overall_balanced: bool = True) -> int:
    """Fewest moves of any plan balanced within one for every group in `balanced` (and overall, if it can be).

    Groups not in `balanced` contribute only the replicas they have on non-target brokers.
    """
    n = len(targets)
    if not n:
        return 0
    total = sum(replicas.values())
    level_all = total // n
    ceil_all = total - n * level_all
    balanced_set = set(balanced)
    base = topic_side = 0
    sum_levels = 0
    ben_of: dict[int, int] = {}
    for g, held in holders.items():
        if g not in balanced_set:
            base += sum(c for b, c in held.items() if b not in targets)
            continue
        level = replicas[g] // n
        sum_levels += level
        ben = 0
        for b, c in held.items():
            if b not in targets:
                base += c
            elif c > level:
                base += c - level
                ben += 1
                ben_of[b] = ben_of.get(b, 0) + 1
        topic_side += min(replicas[g] - n * level, ben)
    # A broker holds level_all - sum_levels extras, one more if it gets the overall ceil (ceil_all brokers do).
    room = level_all - sum_levels
    if room < 0 or not overall_balanced:
        return base - topic_side
    broker_side = sum(min(room, v) for v in ben_of.values())
    broker_side += min(ceil_all, sum(1 for v in ben_of.values() if v > room))
    return base - min(topic_side, broker_side)
