"""Per-group replica moves that bring a group (topic) to its target counts (phase B; runs per topic, e.g. on Spark).

Inputs: the group's per-rack levels and extras (targets per broker, dealing.py) and the replicas that change rack
(shifts.py, each with its destination rack). The mover lands every rack-changing replica on the neediest broker
of its destination rack, then, rack by rack, brokers above target give their smallest partitions to the
neediest brokers of the same rack. Inside a rack every such move is valid: a broker above target holds more of
the group than one below it, so it has a partition the other lacks, and the partition's racks do not change.
So every move takes one unit of excess: the group's moves are its rack changes plus its excess in each rack.
"""
from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

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
    member_rack: Mapping[int, int] = field(default_factory=dict)  # removed broker -> its rack, if still a target rack

    @property
    def n_racks(self) -> int:
        """Number of racks among the target brokers (1 when rack-unaware)."""
        return len(self.rack_brokers)


@dataclass(slots=True)
class TopicStats:
    """How a group's plan deviates from the ideal: extra moves and units left unbalanced."""

    rack_fix_moves: int = 0       # moves made only to spread a partition over min(RF, #racks) racks
    detour_moves: int = 0         # moves beyond the excess (rack changes from brokers not above target)
    unbalanced: int = 0           # units of excess left (no valid move found)
    details: list[str] = field(default_factory=list)


class _Needs:
    """Brokers below target in one rack, largest deficit first (lazy heap)."""

    def __init__(self) -> None:
        self.heap: list[tuple[int, int]] = []
        self.deficit: dict[int, int] = {}

    def set(self, broker: int, deficit: int) -> None:
        self.deficit[broker] = deficit
        if deficit > 0:
            heapq.heappush(self.heap, (-deficit, broker))

    def best(self, exclude: Sequence[int]) -> int | None:
        """The neediest broker not in `exclude`, or None."""
        heap = self.heap
        held = []
        found = None
        while heap:
            d, b = heap[0]
            if self.deficit.get(b, 0) != -d:
                heapq.heappop(heap)
                continue
            if b in exclude:
                held.append(heapq.heappop(heap))
                continue
            found = b
            break
        for entry in held:
            heapq.heappush(heap, entry)
        return found


def plan_topic(parts: Sequence[tuple[int, Sequence[int], int]], levels: Sequence[int], extras: Sequence[int],
               ctx: TopicContext, departures: Sequence[tuple[int, int, int]] = ()
               ) -> tuple[list[list[int]], TopicStats]:
    """New replica lists (same order as `parts` = (partition index, replicas, size)) meeting the group's targets.

    `departures` = (partition index, broker, destination rack): replicas that change rack. A moved replica keeps
    its position in the list (the leader pass reorders later).
    """
    rack_index = ctx.rack_index
    member_rack = ctx.member_rack
    stats = TopicStats()
    pos = {i: j for j, (i, _, _) in enumerate(parts)}
    new = [list(reps) for _, reps, _ in parts]
    sizes = [size for _, _, size in parts]
    count: Counter[int] = Counter(chain.from_iterable(new))
    on_broker: dict[int, list[int]] = {b: [] for b in count}
    for j, reps in enumerate(new):
        for b in reps:
            on_broker[b].append(j)
    # Targets of the brokers that have one (every other broker's is 0).
    targets: dict[int, int] = {}
    for k, bs in enumerate(ctx.rack_brokers):
        if levels[k]:
            targets.update((b, levels[k]) for b in bs)
    for b in extras:
        targets[b] = levels[rack_index[b]] + 1
    target = targets.get

    needs = [_Needs() for _ in ctx.rack_brokers]
    for b, t in targets.items():
        needs[rack_index[b]].set(b, t - count.get(b, 0))

    def move(j: int, src: int, dst: int) -> None:
        reps = new[j]
        reps[reps.index(src)] = dst
        count[src] -= 1
        count[dst] += 1
        on_broker.setdefault(dst, []).append(j)
        for b in (src, dst):
            k = rack_index.get(b)
            if k is not None:
                needs[k].set(b, targets.get(b, 0) - count[b])

    def fallback(j: int, k: int) -> int | None:
        # No broker below target fits: the least loaded valid one (costs a second move later).
        valid = [b for b in ctx.rack_brokers[k] if b not in new[j]]
        return min(valid, key=lambda b: (count.get(b, 0) - target(b, 0), b)) if valid else None

    # Replicas that must land in a rack: those changing rack, and those of removed brokers of the rack. Most fit
    # any broker of the rack (the partition has no other replica there); the others ("constrained": RF above
    # the number of racks, or no racks at all) go first, along augmenting paths when the neediest are taken.
    def split(units: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        constrained = [u for u in units if any(rack_index.get(b) == u[2] for b in new[u[0]] if b != u[1])]
        return constrained + [u for u in units if u not in set(constrained)]

    leaving = {(pos[i], src) for i, src, _ in departures}
    arriving = [(pos[i], src, rack) for i, src, rack in sorted(departures)]

    def members() -> list[tuple[int, int, int]]:
        units = []
        for b in sorted(member_rack):
            for j in sorted(set(on_broker.get(b, ())), key=lambda j: (sizes[j], parts[j][0])):
                if (j, b) not in leaving and b in new[j]:
                    units.append((j, b, member_rack[b]))
        return units
    placed: dict[int, list[int]] = {}   # broker -> partitions landed on it by this step

    def land(j: int, src: int, k: int) -> bool:
        dst = needs[k].best(new[j])
        if dst is None:
            dst = _reroute(j, k)
        if dst is None:
            dst = fallback(j, k)
            if dst is None:
                stats.unbalanced += 1
                stats.details.append(f"partition {parts[j][0]}: no broker of rack {k} can take the replica on {src}")
                return False
            stats.detour_moves += 1
        move(j, src, dst)
        placed.setdefault(dst, []).append(j)
        return True

    def _reroute(j: int, k: int) -> int | None:
        # Augmenting path: partitions landed earlier on brokers of the rack move on, each to a broker it may use,
        # until one reaches a broker still below target; the first freed broker takes j. Every replica still
        # moves once from where it was.
        parent: dict[int, tuple[int, int] | None] = {}
        queue: list[int] = []
        for b in ctx.rack_brokers[k]:
            if b not in new[j]:
                parent[b] = None
                queue.append(b)
        for b in queue:
            for j2 in placed.get(b, ()):
                if b not in new[j2]:
                    continue
                for c in ctx.rack_brokers[k]:
                    if c in parent or c in new[j2]:
                        continue
                    parent[c] = (j2, b)
                    if needs[k].deficit.get(c, 0) > 0:
                        node = c
                        while parent[node] is not None:
                            j3, prev = parent[node]
                            move(j3, prev, node)
                            placed[prev].remove(j3)
                            placed.setdefault(node, []).append(j3)
                            node = prev
                        return node
                    queue.append(c)
        return None

    for j, src, k in split(arriving):
        land(j, src, k)
    for j, src, k in split(members()):
        land(j, src, k)

    over_by_rack: dict[int, list[int]] = {}
    for b, c in count.items():
        k = rack_index.get(b, member_rack.get(b))
        if k is not None and c > target(b, 0):
            over_by_rack.setdefault(k, []).append(b)
    for k in sorted(over_by_rack):
        for a in sorted((b for b in over_by_rack[k] if b in rack_index),
                        key=lambda b: (target(b, 0) - count[b], b)):
            for j in sorted(set(on_broker.get(a, ())), key=lambda j: (sizes[j], parts[j][0])):
                if count[a] <= target(a, 0):
                    break
                if a not in new[j]:
                    continue
                dst = needs[k].best(new[j])
                if dst is None:
                    continue
                move(j, a, dst)
            left = count[a] - target(a, 0)
            if left > 0:
                stats.unbalanced += left
                stats.details.append(f"broker {a}: {left} replica(s) above target with no valid destination")
    # Replicas left on brokers of no target rack that phase A gave no destination (it always gives one).
    lost = {b for b, c in count.items() if c and b not in rack_index and b not in member_rack}
    if lost:
        for j, reps in enumerate(new):
            for src in [b for b in reps if b in lost]:
                stats.unbalanced += 1
                stats.details.append(f"partition {parts[j][0]}: replica on {src} has no destination")
    return new, stats
