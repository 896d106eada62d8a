"""--balance-by bytes: even out disk usage (bytes per broker, weighted by capacity) instead of counts.

Replicas on removed brokers move first, to the valid broker furthest below its byte share. Then, repeatedly,
the broker furthest above its share sends the largest partition that fits both its excess and the receiver's
deficit (so no move overshoots and bytes moved stay close to the bytes lower bound), or, when none fits, the
smallest one whose move still narrows the pair's gap. Each move lowers the sum of squared deviations, so the
loop ends; it stops when no move improves the balance.
"""
from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pylog.planner.mover import TopicStats, spread_ok

if TYPE_CHECKING:
    from pylog.planner.plan import Prepared

__all__ = ["plan_bytes"]


def plan_bytes(prep: "Prepared") -> tuple[list[list[int]], TopicStats]:
    """New replica lists for all of `prep.partitions`, balancing bytes per target broker."""
    parts = prep.partitions
    rack_index, n_racks = prep.ctx.rack_index, prep.ctx.n_racks
    sizes = [p.size_bytes or 0 for p in parts]
    new = [list(p.replicas) for p in parts]
    weight = {b.id: (b.capacity or 1.0) for b in prep.brokers}
    total_w = sum(weight.values())
    load: dict[int, int] = {b: 0 for b in weight}
    held: dict[int, list[tuple[int, int]]] = {b: [] for b in weight}
    for i, reps in enumerate(new):
        for b in reps:
            if b in weight:
                load[b] += sizes[i]
                held[b].append((sizes[i], i))
    for lst in held.values():
        lst.sort()
    total = sum(sizes[i] * len(r) for i, r in enumerate(new))
    share = {b: total * w / total_w for b, w in weight.items()}
    stats = TopicStats()

    def dev(b: int) -> float:
        return load[b] - share[b]

    def move(i: int, src: int, dst: int) -> None:
        reps = new[i]
        reps[reps.index(src)] = dst
        if src in weight:
            load[src] -= sizes[i]
            held[src].remove((sizes[i], i))
        load[dst] += sizes[i]
        bisect.insort(held[dst], (sizes[i], i))

    by_deficit = sorted(weight)
    for i, reps in enumerate(new):
        for src in [r for r in reps if r not in weight]:
            valid = [b for b in by_deficit
                     if b not in reps and spread_ok(reps, src, rack_index[b], rack_index, n_racks)]
            if not valid:
                stats.unbalanced += 1
                stats.details.append(f"partition {parts[i].topic}-{parts[i].partition}: no broker can take "
                                     f"the replica on {src}")
                continue
            move(i, src, min(valid, key=lambda b: (dev(b), b)))

    done: set[int] = set()
    heap = [(-dev(b), b) for b in weight]
    heapq.heapify(heap)
    budget = 20 * len(parts) + 100
    while heap and budget > 0:
        budget -= 1
        d, a = heapq.heappop(heap)
        if a in done or -d != dev(a):
            if a not in done:
                heapq.heappush(heap, (-dev(a), a))
            continue
        if dev(a) <= 0:
            break
        receivers = sorted((b for b in weight if dev(b) < 0), key=lambda b: (dev(b), b))[:16]
        chosen = _choose(a, receivers, held[a], new, load, dev, prep.ctx)
        if chosen is None:
            done.add(a)
            continue
        i, b = chosen
        move(i, a, b)
        heapq.heappush(heap, (-dev(a), a))
    return new, stats


def _choose(a: int, receivers: Sequence[int], lst: Sequence[tuple[int, int]], new: Sequence[list[int]],
            load: Mapping[int, int], dev: Callable[[int], float], ctx) -> tuple[int, int] | None:
    """(partition, receiver) for a's next move: the largest partition that fits the receiver's deficit (and a's
    excess), else a small one that narrows the gap; None when no receiver may take any of a's 64 candidates."""
    rack_index, n_racks = ctx.rack_index, ctx.n_racks
    for b in receivers:
        limit = min(dev(a), -dev(b))
        pos = bisect.bisect_right(lst, (limit, len(new)))
        for size, i in reversed(lst[max(0, pos - 64):pos]):
            if b not in new[i] and spread_ok(new[i], a, rack_index[b], rack_index, n_racks):
                return i, b
        gap = load[a] - load[b]
        for size, i in lst[:64]:
            if size >= gap or size == 0:
                break
            if b not in new[i] and spread_ok(new[i], a, rack_index[b], rack_index, n_racks):
                return i, b
    return None
