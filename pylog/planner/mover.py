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

__all__ = ["TopicContext", "TopicMover", "TopicStats", "plan_topic", "spread_ok"]


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
    mover = TopicMover(parts, levels, extras, ctx)
    mover.land_all(mover.arrivals(departures))
    mover.land_all(mover.members(departures))
    mover.shed_excess()
    mover.flag_lost()
    return mover.new, mover.stats


class TopicMover:
    """One group's replica lists while phase B changes them, and the steps that do (`plan_topic` runs them).

    Steps, in order: `land_all(arrivals())` (replicas changing rack), `land_all(members(...))` (replicas of removed
    brokers whose rack stays), `shed_excess()` (brokers above target give to the neediest of their rack),
    `flag_lost()` (replicas left with no destination, reported)."""

    def __init__(self, parts: Sequence[tuple[int, Sequence[int], int]], levels: Sequence[int],
                 extras: Sequence[int], ctx: TopicContext) -> None:
        self.ctx = ctx
        self.parts = parts
        self.stats = TopicStats()
        self.pos = {i: j for j, (i, _, _) in enumerate(parts)}
        self.new = [list(reps) for _, reps, _ in parts]
        self.sizes = [size for _, _, size in parts]
        self.count: Counter[int] = Counter(chain.from_iterable(self.new))
        self.on_broker: dict[int, list[int]] = {b: [] for b in self.count}
        for j, reps in enumerate(self.new):
            for b in reps:
                self.on_broker[b].append(j)
        # Targets of the brokers that have one (every other broker's is 0).
        self.targets: dict[int, int] = {}
        for k, bs in enumerate(ctx.rack_brokers):
            if levels[k]:
                self.targets.update((b, levels[k]) for b in bs)
        for b in extras:
            self.targets[b] = levels[ctx.rack_index[b]] + 1
        self.needs = [_Needs() for _ in ctx.rack_brokers]
        for b, t in self.targets.items():
            self.needs[ctx.rack_index[b]].set(b, t - self.count.get(b, 0))
        self.placed: dict[int, list[int]] = {}   # broker -> partitions landed on it by the landing steps

    def target(self, b: int) -> int:
        """b's target count of the group (0 for brokers without one)."""
        return self.targets.get(b, 0)

    def move(self, j: int, src: int, dst: int, lifted: bool = False) -> None:
        """Move partition j's replica from src to dst (same list position) and update the counts (src's already
        if `lifted`)."""
        reps = self.new[j]
        reps[reps.index(src)] = dst
        self.count[src] -= not lifted
        self.count[dst] += 1
        self.on_broker.setdefault(dst, []).append(j)
        for b in (src, dst):
            k = self.ctx.rack_index.get(b)
            if k is not None:
                self.needs[k].set(b, self.target(b) - self.count[b])

    def fallback(self, j: int, k: int) -> int | None:
        """No broker below target fits: the least loaded valid one (costs a second move later)."""
        valid = [b for b in self.ctx.rack_brokers[k] if b not in self.new[j]]
        return min(valid, key=lambda b: (self.count.get(b, 0) - self.target(b), b)) if valid else None

    # Replicas that must land in a rack: those changing rack, and those of removed brokers of the rack. Most fit
    # any broker of the rack (the partition has no other replica there); the others ("constrained": RF above
    # the number of racks, or no racks at all) go first, along augmenting paths when the neediest are taken.
    def constrained_first(self, units: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """`units` (j, src, rack) with those whose partition already has another replica in the rack first."""
        rack_index = self.ctx.rack_index
        constrained = [u for u in units if any(rack_index.get(b) == u[2] for b in self.new[u[0]] if b != u[1])]
        return constrained + [u for u in units if u not in set(constrained)]

    def arrivals(self, departures: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """The replicas changing rack as (j, src, destination rack), in partition order."""
        return [(self.pos[i], src, rack) for i, src, rack in sorted(departures)]

    def members(self, departures: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Replicas of removed brokers whose rack keeps target brokers (not already leaving the rack)."""
        leaving = {(self.pos[i], src) for i, src, _ in departures}
        member_rack = self.ctx.member_rack
        units = []
        for b in sorted(member_rack):
            for j in sorted(set(self.on_broker.get(b, ())), key=self._unit_order):
                if (j, b) not in leaving and b in self.new[j]:
                    units.append((j, b, member_rack[b]))
        return units

    def _unit_order(self, j: int) -> tuple[int, int]:
        return (self.sizes[j], self.parts[j][0])

    def land_all(self, units: list[tuple[int, int, int]]) -> None:
        """Land every unit (j, src, rack), the constrained ones first.

        Every unit leaves its broker before any lands: a broker giving a replica to another rack may be the one
        below target that a replica coming the other way needs (landing them in turn would miss it)."""
        ordered = self.constrained_first(units)
        for _, src, _ in ordered:
            self._set_count(src, self.count[src] - 1)
        for j, src, k in ordered:
            if not self.land(j, src, k, lifted=True):
                self._set_count(src, self.count[src] + 1)

    def _set_count(self, b: int, value: int) -> None:
        self.count[b] = value
        k = self.ctx.rack_index.get(b)
        if k is not None:
            self.needs[k].set(b, self.target(b) - value)

    def land(self, j: int, src: int, k: int, lifted: bool = False) -> bool:
        """Move partition j's replica on src to the neediest broker of rack k that may take it."""
        dst = self.needs[k].best(self.new[j])
        if dst is None:
            dst = self.reroute(j, k)
        if dst is None:
            dst = self.fallback(j, k)
            if dst is None:
                self.stats.unbalanced += 1
                self.stats.details.append(f"partition {self.parts[j][0]}: no broker of rack {k} can take the "
                                          f"replica on {src}")
                return False
            self.stats.detour_moves += 1
        self.move(j, src, dst, lifted)
        self.placed.setdefault(dst, []).append(j)
        return True

    def reroute(self, j: int, k: int) -> int | None:
        """A broker of rack k freed for partition j along an augmenting path, or None.

        Partitions landed earlier on brokers of the rack move on, each to a broker it may use, until one reaches
        a broker still below target; the first freed broker takes j. Every replica still moves once from where
        it was."""
        rack = self.ctx.rack_brokers[k]
        parent: dict[int, tuple[int, int] | None] = {}
        queue: list[int] = []
        for b in rack:
            if b not in self.new[j]:
                parent[b] = None
                queue.append(b)
        for b in queue:
            for j2 in self.placed.get(b, ()):
                if b not in self.new[j2]:
                    continue
                for c in rack:
                    if c in parent or c in self.new[j2]:
                        continue
                    parent[c] = (j2, b)
                    if self.needs[k].deficit.get(c, 0) > 0:
                        return self._shift_along(parent, c)
                    queue.append(c)
        return None

    def _shift_along(self, parent: Mapping[int, tuple[int, int] | None], end: int) -> int:
        node = end
        while parent[node] is not None:
            j3, prev = parent[node]
            self.move(j3, prev, node)
            self.placed[prev].remove(j3)
            self.placed.setdefault(node, []).append(j3)
            node = prev
        return node

    def shed_excess(self) -> None:
        """Rack by rack, brokers above target give their smallest partitions to the neediest brokers."""
        rack_index, member_rack, count = self.ctx.rack_index, self.ctx.member_rack, self.count
        over_by_rack: dict[int, list[int]] = {}
        for b, c in count.items():
            k = rack_index.get(b, member_rack.get(b))
            if k is not None and c > self.target(b):
                over_by_rack.setdefault(k, []).append(b)
        for k in sorted(over_by_rack):
            for a in sorted((b for b in over_by_rack[k] if b in rack_index),
                            key=lambda b: (self.target(b) - count[b], b)):
                self._shed(a, k)

    def _shed(self, a: int, k: int) -> None:
        count = self.count
        for j in sorted(set(self.on_broker.get(a, ())), key=self._unit_order):
            if count[a] <= self.target(a):
                break
            if a not in self.new[j]:
                continue
            dst = self.needs[k].best(self.new[j])
            if dst is None:
                continue
            self.move(j, a, dst)
        left = count[a] - self.target(a)
        if left > 0:
            self.stats.unbalanced += left
            self.stats.details.append(f"broker {a}: {left} replica(s) above target with no valid destination")

    def flag_lost(self) -> None:
        """Report replicas left on brokers of no target rack that phase A gave no destination (it always gives one)."""
        ctx = self.ctx
        lost = {b for b, c in self.count.items() if c and b not in ctx.rack_index and b not in ctx.member_rack}
        if lost:
            for j, reps in enumerate(self.new):
                for src in [b for b in reps if b in lost]:
                    self.stats.unbalanced += 1
                    self.stats.details.append(f"partition {self.parts[j][0]}: replica on {src} has no destination")
