"""Per-topic replica moves that bring a topic to its target counts (phase B; runs per topic, e.g. on Spark).

Every move takes a replica from a broker above its target (or being removed) to a broker below its target, so
each move removes one unit of excess and no replica moves twice: the number of moves is the topic's excess,
the lower bound for these targets. The count argument that such a move always exists without racks: a broker
above target holds more of the topic's replicas than one below it, so it holds a partition the other lacks.
Racks restrict the destinations (a replica may not join a rack its partition already uses unless the partition
still spans min(RF, #racks) racks); a partition that spans too few racks is fixed first, and a unit that has
no valid direct destination goes through the least loaded valid broker -- those cost extra moves, counted in
`TopicStats` so the report can explain the gap to the lower bound.
"""
from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["TopicContext", "TopicStats", "plan_topic", "spread_ok"]


def spread_ok(reps: Sequence[int], src: int, rack: int, rack_index: Mapping[int, int], n_racks: int) -> bool:
    """May `src`'s replica of a partition with `reps` move to a broker in `rack` without hurting the rack spread?

    Joining a new rack never lowers the spread; joining a used one is fine only if the spread stays full.
    """
    if n_racks == 1:
        return True
    others = {rack_index[r] for r in reps if r != src and r in rack_index}
    return rack not in others or len(others) >= min(len(reps), n_racks)


@dataclass(frozen=True, slots=True)
class TopicContext:
    """What every topic's planning needs about the target brokers (picklable, shipped to Spark workers)."""

    rack_index: Mapping[int, int]           # target broker -> rack index
    rack_brokers: Sequence[Sequence[int]]   # rack index -> its target brokers, ascending

    @property
    def n_racks(self) -> int:
        """Number of racks among the target brokers (1 when rack-unaware)."""
        return len(self.rack_brokers)


@dataclass(slots=True)
class TopicStats:
    """How a topic's plan deviates from the ideal: extra moves and units left unbalanced."""

    rack_fix_moves: int = 0       # moves made only to spread a partition over more racks
    detour_moves: int = 0         # replicas sent to an at-target broker because no below-target one was valid
    unbalanced: int = 0           # units of excess left (no valid move found)
    details: list[str] = field(default_factory=list)


class _Deficits:
    """Brokers below target, by rack, largest deficit first (lazy heaps)."""

    def __init__(self, n_racks: int) -> None:
        self.heaps: list[list[tuple[int, int]]] = [[] for _ in range(n_racks)]
        self.deficit: dict[int, int] = {}

    def set(self, broker: int, rack: int, deficit: int) -> None:
        self.deficit[broker] = deficit
        if deficit > 0:
            heapq.heappush(self.heaps[rack], (-deficit, broker))

    def best(self, rack: int, exclude: Sequence[int]) -> tuple[int, int] | None:
        """(deficit, broker) of the neediest broker in `rack` not in `exclude`."""
        heap = self.heaps[rack]
        held: list[tuple[int, int]] = []
        found = None
        while heap:
            d, b = heap[0]
            if self.deficit.get(b, 0) != -d:
                heapq.heappop(heap)  # stale entry
                continue
            if b in exclude:
                held.append(heapq.heappop(heap))
                continue
            found = (-d, b)
            break
        for entry in held:
            heapq.heappush(heap, entry)
        return found


def plan_topic(parts: Sequence[tuple[int, Sequence[int], int]], levels: Sequence[int], extras: Sequence[int],
               ctx: TopicContext) -> tuple[list[list[int]], TopicStats]:
    """New replica lists (same order as `parts` = (partition, replicas, size)) meeting the topic's targets.

    A moved replica keeps its position in the list (the leader pass reorders later).
    """
    rack_index = ctx.rack_index
    n_racks = ctx.n_racks
    extras_set = set(extras)
    stats = TopicStats()
    new = [list(reps) for _, reps, _ in parts]
    sizes = [size for _, _, size in parts]
    count: dict[int, int] = {}
    on_broker: dict[int, list[int]] = {}
    for i, reps in enumerate(new):
        for b in reps:
            count[b] = count.get(b, 0) + 1
            on_broker.setdefault(b, []).append(i)

    def target(b: int) -> int:
        k = rack_index.get(b)
        return 0 if k is None else levels[k] + (b in extras_set)

    deficits = _Deficits(n_racks)
    candidates = [b for bs in ctx.rack_brokers for b in bs] if any(levels) else sorted(extras_set)
    for b in candidates:
        deficits.set(b, rack_index[b], target(b) - count.get(b, 0))

    def racks_of(reps: Sequence[int], skip: int) -> set[int]:
        return {rack_index[r] for r in reps if r != skip and r in rack_index}

    def rack_ok(reps: Sequence[int], src: int, rack: int) -> bool:
        return spread_ok(reps, src, rack, rack_index, n_racks)

    def best_dest(i: int, src: int, racks: Sequence[int] | None = None) -> int | None:
        reps = new[i]
        best: tuple[int, int, int] | None = None
        src_rack = rack_index.get(src, -1)
        for k in (range(n_racks) if racks is None else racks):
            if not rack_ok(reps, src, k):
                continue
            top = deficits.best(k, reps)
            if top is not None:
                # Largest deficit; on ties stay in the source's rack, then lowest id.
                key = (-top[0], 0 if k == src_rack else 1, top[1])
                if best is None or key < best:
                    best = key
        return None if best is None else best[2]

    def fallback_dest(i: int, src: int, racks: Sequence[int] | None = None) -> int | None:
        # No below-target broker fits: the valid broker furthest below (or least above) its target.
        reps = new[i]
        best: tuple[int, int] | None = None
        for k in (range(n_racks) if racks is None else racks):
            if not rack_ok(reps, src, k):
                continue
            for b in ctx.rack_brokers[k]:
                if b not in reps:
                    key = (count.get(b, 0) - target(b), b)
                    if best is None or key < best:
                        best = key
        return None if best is None else best[1]

    def move(i: int, src: int, dst: int) -> None:
        reps = new[i]
        reps[reps.index(src)] = dst
        count[src] -= 1
        count[dst] = count.get(dst, 0) + 1
        on_broker.setdefault(dst, []).append(i)
        for b in (src, dst):
            if b in rack_index:
                deficits.set(b, rack_index[b], target(b) - count.get(b, 0))

    # 1. Partitions spanning too few racks: move a replica (orphans and above-target brokers first) to a missing rack.
    if n_racks > 1:
        for i, reps in enumerate(new):
            need = min(len(reps), n_racks)
            while len(racks_of(reps, -1)) < need:
                used = racks_of(reps, -1)
                missing = [k for k in range(n_racks) if k not in used]
                rack_count: dict[int, int] = {}
                for r in reps:
                    if r in rack_index:
                        rack_count[rack_index[r]] = rack_count.get(rack_index[r], 0) + 1
                movable = [r for r in reps if r not in rack_index or rack_count[rack_index[r]] > 1]
                src = min(movable, key=lambda r: (r in rack_index, target(r) - count.get(r, 0), r))
                dst = best_dest(i, src, missing)
                if dst is None:
                    dst = fallback_dest(i, src, missing)
                    if dst is None:
                        break
                    if src in rack_index:
                        stats.rack_fix_moves += 1
                    else:
                        stats.detour_moves += 1
                elif src in rack_index and count[src] <= target(src):
                    stats.rack_fix_moves += 1
                move(i, src, dst)

    # 2. Replicas on brokers being removed (or unknown): each must move.
    landed: dict[int, list[int]] = {}  # broker -> partitions whose removed replica moved there

    def reroute(i: int, src: int) -> bool:
        # Augmenting path of length one: an earlier orphan that landed on a broker valid for this one moves on
        # to a broker still below target, freeing the slot. Both remain single moves from the original layout.
        reps = new[i]
        for b in sorted(landed):
            if b in reps or not rack_ok(reps, src, rack_index[b]):
                continue
            for j in landed[b]:
                if b not in new[j]:
                    continue
                nxt = best_dest(j, b)
                if nxt is not None:
                    move(j, b, nxt)
                    landed[b].remove(j)
                    landed.setdefault(nxt, []).append(j)
                    move(i, src, b)
                    landed[b].append(i)
                    return True
        return False

    for i in range(len(new)):
        for src in [r for r in new[i] if r not in rack_index]:
            dst = best_dest(i, src)
            if dst is not None:
                landed.setdefault(dst, []).append(i)
            elif reroute(i, src):
                continue
            if dst is None:
                dst = fallback_dest(i, src)
                if dst is None:
                    stats.unbalanced += 1
                    stats.details.append(f"partition {parts[i][0]}: no broker can take the replica on {src}")
                    continue
                stats.detour_moves += 1
            move(i, src, dst)

    # 3a. Racks above their topic total send across racks first, each unit from an above-target broker, with a
    # partition that lacks the receiving rack: done later, such pairs may be gone, and within a rack every pair
    # of brokers above/below target has a valid move (the count argument), so rack totals are fixed first.
    if n_racks > 1:
        net = [sum(count.get(b, 0) - target(b) for b in bs) for bs in ctx.rack_brokers]
        for x in range(n_racks):
            if net[x] <= 0:
                continue
            senders = sorted((b for b in ctx.rack_brokers[x] if count.get(b, 0) > target(b)),
                             key=lambda b: (target(b) - count[b], b))
            for y in range(n_racks):
                for a in senders:
                    if net[x] <= 0 or net[y] >= 0:
                        break
                    for i in sorted(set(on_broker.get(a, ())), key=lambda i: (sizes[i], parts[i][0])):
                        if net[x] <= 0 or net[y] >= 0 or count[a] <= target(a):
                            break
                        if a in new[i] and rack_ok(new[i], a, y):
                            dst = deficits.best(y, new[i])
                            if dst is not None:
                                move(i, a, dst[1])
                                net[x] -= 1
                                net[y] += 1

    # 3. Brokers above target give their smallest partitions to the neediest valid broker, own rack first.
    over = sorted((b for b in rack_index if count.get(b, 0) > target(b)),
                  key=lambda b: (target(b) - count[b], b))
    for a in over:
        candidates_a = sorted(set(on_broker.get(a, ())), key=lambda i: (sizes[i], parts[i][0]))
        for i in candidates_a:
            if count[a] <= target(a):
                break
            if a not in new[i]:
                continue
            dst = best_dest(i, a, [rack_index[a]]) if n_racks > 1 else None
            if dst is None:
                dst = best_dest(i, a)
            if dst is not None:
                move(i, a, dst)
        left = count[a] - target(a)
        if left > 0:
            stats.unbalanced += left
            stats.details.append(f"broker {a}: {left} replica(s) above target with no valid destination")
    return new, stats
