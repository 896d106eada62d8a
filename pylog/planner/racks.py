"""Overall rack totals: how many replicas each rack should hold.

The rack rule (a partition spans min(RF, #racks) racks) bounds each partition's replicas per rack: at most one
when RF <= #racks, at least one (and at most RF - #racks + 1, and the rack's size) when RF > #racks. Partitions
with the same RF are interchangeable at this level, so "which rack totals are possible" is a flow from RF
classes to racks with those per-cell bounds -- exact, and tiny (a few classes times the racks). That answers
whether per-broker balance within one is possible at all, names the racks that prevent it when it is not, and
picks the rack totals: balanced ones that keep the count lower bound lowest, or the most even ones the racks
allow. (How each group splits over the racks, and which replicas change rack, is shifts.py's flow.)
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from pylog.planner.flow import INF, FlowNetwork

__all__ = ["RackTotals", "cell_bounds", "overall_rack_totals"]

_EXPLAIN_SUBSETS_UP_TO = 12  # racks; beyond that only single racks and their complements are examined


@dataclass(slots=True)
class RackTotals:
    """Overall replicas per rack, and whether per-broker balance within one is possible (if not: why)."""

    totals: list[int]
    balanced: bool
    note: str | None = None


def cell_bounds(rf: int, sizes: Sequence[int]) -> list[tuple[int, int]]:
    """[min, max] replicas one partition of this RF may have in each rack."""
    m = len(sizes)
    if m == 1:
        return [(rf, rf)]
    if rf <= m:
        return [(0, 1)] * m
    return [(1, min(n, rf - m + 1)) for n in sizes]


def _rack_flow(classes: Mapping[int, int], sizes: Sequence[int], lo: Sequence[int],
               hi: Sequence[int]) -> tuple[bool, list[int]]:
    """Can racks hold totals within [lo, hi] (rack rule respected)? Returns (feasible, totals found)."""
    net = FlowNetwork()
    s, t = net.add_node(), net.add_node()
    racks = [net.add_node() for _ in sizes]
    for rf, count in sorted(classes.items()):
        c = net.add_node()
        net.add_edge(s, c, count * rf, count * rf)
        for k, (a, b) in enumerate(cell_bounds(rf, sizes)):
            net.add_edge(c, racks[k], count * a, count * b)
    out = [net.add_edge(racks[k], t, lo[k], hi[k]) for k in range(len(sizes))]
    net.add_edge(t, s, 0, INF)
    ok = net.feasible()
    return ok, [net.flow(e) for e in out]


def _exact(classes: Mapping[int, int], sizes: Sequence[int], totals: Sequence[int]) -> bool:
    return _rack_flow(classes, sizes, totals, totals)[0]


def _descend(x: list[int], classes: Mapping[int, int], sizes: Sequence[int], box_lo: Sequence[int],
             box_hi: Sequence[int], gain: Callable[[int, int], int]) -> list[int]:
    """Improve feasible totals by moving units between racks while the separable concave `gain` rises.

    The feasible totals form an M-convex set and the objective is separable concave, so a local optimum for
    such exchanges is a global one. Steps move a whole stretch where both marginal gains stay constant.
    """
    m = len(x)
    blocked: set[tuple[int, int]] = set()
    while True:
        best = None
        for k1 in range(m):
            if x[k1] <= box_lo[k1]:
                continue
            down = gain(k1, x[k1]) - gain(k1, x[k1] - 1)
            for k2 in range(m):
                if k2 == k1 or x[k2] >= box_hi[k2] or (k1, k2) in blocked:
                    continue
                delta = gain(k2, x[k2] + 1) - gain(k2, x[k2]) - down
                if delta > 0 and (best is None or delta > best[0]):
                    best = (delta, k1, k2)
        if best is None:
            return x
        _, k1, k2 = best
        step = min(_flat(gain, k1, x[k1], -1, x[k1] - box_lo[k1]), _flat(gain, k2, x[k2], 1, box_hi[k2] - x[k2]))
        while step >= 1:
            y = list(x)
            y[k1] -= step
            y[k2] += step
            if _exact(classes, sizes, y):
                x = y
                blocked.clear()
                break
            step //= 2
        else:
            blocked.add((k1, k2))


def _flat(gain: Callable[[int, int], int], k: int, x: int, direction: int, limit: int) -> int:
    """How many unit steps from x in `direction` keep the same marginal gain (at most `limit`)."""
    def marginal(at: int) -> int:
        return gain(k, at + direction) - gain(k, at)
    first = marginal(x)
    lo, hi = 1, max(1, limit)
    while lo < hi:  # largest j with marginal(x + (j-1)*direction) == first; marginals are monotone
        mid = (lo + hi + 1) // 2
        if marginal(x + (mid - 1) * direction) == first:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _subset_range(classes: Mapping[int, int], sizes: Sequence[int], subset: Sequence[int]) -> tuple[int, int]:
    """[min, max] replicas the racks in `subset` can hold together."""
    inside = set(subset)
    lo = hi = 0
    for rf, count in classes.items():
        cells = cell_bounds(rf, sizes)
        a_in = sum(a for k, (a, _) in enumerate(cells) if k in inside)
        b_in = sum(b for k, (_, b) in enumerate(cells) if k in inside)
        a_out = sum(a for k, (a, _) in enumerate(cells) if k not in inside)
        b_out = sum(b for k, (_, b) in enumerate(cells) if k not in inside)
        lo += count * max(a_in, rf - b_out)
        hi += count * min(b_in, rf - a_out)
    return lo, hi


def _explain(classes: Mapping[int, int], sizes: Sequence[int], names: Sequence[str],
             box_lo: Sequence[int], box_hi: Sequence[int]) -> str:
    m = len(sizes)
    if m <= _EXPLAIN_SUBSETS_UP_TO:
        subsets = [s for r in range(1, m) for s in combinations(range(m), r)]
    else:
        subsets = [(k,) for k in range(m)] + [tuple(j for j in range(m) if j != k) for k in range(m)]
    worst = None
    for subset in subsets:
        can_lo, can_hi = _subset_range(classes, sizes, subset)
        need_lo, need_hi = sum(box_lo[k] for k in subset), sum(box_hi[k] for k in subset)
        n = sum(sizes[k] for k in subset)
        for gap, kind, amount, need in ((can_lo - need_hi, "at least", can_lo, need_hi),
                                        (need_lo - can_hi, "at most", can_hi, need_lo)):
            if gap > 0 and (worst is None or gap / n > worst[0]):
                worst = (gap / n, subset, kind, amount, need, n)
    if worst is None:
        return ("replicas per broker cannot be balanced within one under the rack constraint "
                "(no single set of racks explains it)")
    _, subset, kind, amount, need, n = worst
    which = ", ".join(names[k] for k in subset)
    if kind == "at least":
        verb, limit = "must hold at least", f"more than the {need} that balance within one allows there"
    else:
        verb, limit = "can hold at most", f"fewer than the {need} that balance within one needs there"
    return (f"replicas per broker cannot be balanced within one under the rack constraint: rack(s) {which} "
            f"({n} broker(s)) {verb} {amount} replica(s) (each partition spans min(RF, #racks) racks), "
            f"{amount / n:.1f} per broker, {limit}")


def overall_rack_totals(classes: Mapping[int, int], sizes: Sequence[int], names: Sequence[str], total: int,
                        counts_by_rack: Sequence[Sequence[int]]) -> RackTotals:
    """Replicas per rack for the whole selection.

    Balanced when possible: rack k holds between size*L and size*(L+1), L = total // #brokers; among those
    totals, the ones letting the most currently-full brokers keep L+1 (lowest count lower bound), then the
    closest to the racks' current totals. Otherwise the most even totals the racks allow, with a note why.
    """
    m = len(sizes)
    if m == 1:
        return RackTotals([total], True)
    n_total = sum(sizes)
    level, extra = divmod(total, n_total)
    box_lo = [n * level for n in sizes]
    box_hi = [n * level + min(n, extra) for n in sizes]
    ok, x = _rack_flow(classes, sizes, box_lo, box_hi)
    if ok:
        full = [sum(1 for c in counts if c > level) for counts in counts_by_rack]
        cur = [sum(counts) for counts in counts_by_rack]
        weight = 2 * total + 1  # a lower-bound unit outweighs any closeness change

        def gain(k: int, v: int) -> int:
            return weight * min(v - box_lo[k], full[k]) - abs(v - cur[k])
        return RackTotals(_descend(x, classes, sizes, box_lo, box_hi, gain), True)
    note = _explain(classes, sizes, names, box_lo, box_hi)
    ok, x = _rack_flow(classes, sizes, [0] * m, [INF] * m)
    if not ok:  # cannot happen once RF <= #brokers was checked; keep the totals proportional
        return RackTotals(x, False, note)

    def evenness(k: int, v: int) -> int:
        q, r = divmod(v, sizes[k])
        return -(r * (q + 1) ** 2 + (sizes[k] - r) * q * q)
    return RackTotals(_descend(x, classes, sizes, [0] * m, [total] * m, evenness), False, note)
