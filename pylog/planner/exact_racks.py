"""Phase A solved exactly for small selections: every group's targets per broker and the replicas changing rack.

The rack-level flow (rackflow.py) prices a group's moves inside a rack only approximately, and the per-rack
dealing (dealing.py) chooses extras rack by rack, so on small clusters with racks they miss the fewest moves
about one time in fifteen (a partition whose replica must leave a rack is picked where another one would have
saved a move, a rack's total fixed where a neighbour's would have). When the selection is small, phase A solves
the whole placement instead, as the oracle does: a min-cost flow

  partition p -> (p, rack k) [the rack rule's bounds] -> (group g, broker b) [one unit: distinct brokers;
  cost: a move unless b holds p now] -> broker b [g's floor/ceil] -> sink [the overall floor/ceil]

whose integral optimum is the fewest moves of any assignment balanced within one overall and per group under
the rack rule. Lower bounds become supplies (arcs out of the source that must be used, at a large negative
cost) and demands (arcs into the sink), so every other arc costs >= 0 as `CostFlow` needs. Among the fewest
moves it keeps the most leaders' replicas, then moves the smallest partitions (by powers of two: each distinct
cost is one more phase of the flow).

Only the flow's targets per (group, broker) and the replicas it moves (partition, source broker, destination
rack) are kept: the per-group mover (phase B, also on Spark) lands each on a broker of that rack below its
target, so the same partitions move and the moves are the flow's. plan.py keeps this phase A only where the
resulting plan beats the greedy one's (the flow is blind to leadership balance).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pylog.planner.costflow import CostFlow
from pylog.planner.model import Partition
from pylog.planner.racks import cell_bounds

__all__ = ["ExactRacks", "EXACT_WORK", "exact_work", "solve_exact"]

# Up to this `exact_work` phase A is solved exactly: ~0.3 s (200 partitions on 11 brokers take 0.2 s, 250 on 22
# 0.5 s: the flow's phases grow with the partitions, each a pass over the arcs).
EXACT_WORK = 600_000


@dataclass(slots=True)
class ExactRacks:
    """The exact phase A: replicas per (group, broker), per broker, per (group, rack), and the rack changes."""

    counts: dict[str, dict[int, int]]                  # group -> target broker -> replicas of the group
    totals: dict[str, list[int]]                       # group -> replicas per rack
    departures: dict[str, list[tuple[int, int, int]]]  # group -> (partition index, source broker, dest rack)
    broker_totals: dict[int, int]
    moves: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # every replica moved: as above
    rack_fix: int = 0      # rack changes only because a rack held more of a partition than the rule allows
    forced: int = 0        # rack changes from brokers being removed
    extra: int = 0         # rack changes from target brokers not above their target (one more move each)


def exact_work(n_partitions: int, n_brokers: int, n_groups: int) -> int:
    """Partitions times arcs of the exact flow: what its time grows with (to decide whether it is cheap)."""
    return n_partitions * (n_partitions + n_groups) * n_brokers


def solve_exact(parts: Sequence[Partition], groups: Mapping[str, Sequence[int]],
                rack_brokers: Sequence[Sequence[int]], rack_of: Mapping[int, int],
                per_group: bool) -> ExactRacks | None:
    """The fewest-moves placement balanced overall (and per group if `per_group`), or None if there is none.

    `rack_of` maps target brokers and removed brokers whose rack stays to their rack index."""
    targets = [b for bs in rack_brokers for b in bs]
    n = len(targets)
    total = sum(len(parts[i].replicas) for idx in groups.values() for i in idx)
    level, over = divmod(total, n)
    flow = _Builder(parts, n, total)
    broker_node = {b: flow.f.node() for b in targets}
    sink = flow.f.node()
    held: dict[int, int] = {}
    for p in parts:
        for b in p.replicas:
            held[b] = held.get(b, 0) + 1
    # The overall ceil goes to the fullest brokers among equal plans (as the count lower bound assumes).
    for rank, b in enumerate(sorted(targets, key=lambda b: (-held.get(b, 0), b))):
        flow.f.arc(broker_node[b], sink, int(over > 0), rank)
    flow.demand(sink, total - n * level)
    floors = {b: level for b in targets}
    arcs: dict[int, list[tuple[int, int]]] = {}      # partition index -> (broker, arc)
    for g, idx in groups.items():
        size = sum(len(parts[i].replicas) for i in idx)
        g_level, g_over = divmod(size, n) if per_group else (0, size)
        gb = {}
        for b in targets:
            gb[b] = flow.f.node()
            flow.f.arc(gb[b], broker_node[b], int(g_over > 0) if per_group else size, 0)
            flow.demand(gb[b], g_level)    # the floor g owes b: supplied to b below
            floors[b] -= g_level
        for i in idx:
            arcs[i] = flow.partition(parts[i], rack_brokers, gb)
    for b in targets:
        flow.demand(broker_node[b], floors[b])
    if not flow.solve():
        return None
    return _read(parts, groups, rack_brokers, rack_of, arcs, flow.f)


class _Builder:
    """The flow with lower bounds as supplies and demands (see the module doc)."""

    def __init__(self, parts: Sequence[Partition], n_targets: int, total: int) -> None:
        self.f = CostFlow()
        self.s, self.t = self.f.node(), self.f.node()
        self.supplied = 0
        # Lexicographic costs: moves, then leaders' replicas kept, then the sizes of the partitions moved (by
        # powers of two: every distinct cost is one more phase of the flow), then which brokers get the overall
        # ceil (rank by fullness, < n each on at most n brokers).
        ties = n_targets * n_targets + 1
        buckets = max((p.size_bytes or 0).bit_length() for p in parts) + 1 if parts else 1
        below_keep = total * buckets * ties + ties
        self.ties = ties
        self.keep = below_keep + 1                                  # a non-leader replica staying
        self.move = self.keep * (len(parts) + 2) + below_keep + 1
        self.must = self.move * (total + 1) + 1    # a supplied unit outweighs any flow's moves (<= total)

    def supply(self, v: int, units: int) -> None:
        """v must send `units` more than it receives (a lower bound on an arc out of it, or the source's)."""
        if units > 0:
            self.f.arc(self.s, v, units, -self.must)
            self.supplied += units

    def demand(self, v: int, units: int) -> None:
        """v must receive `units` more than it sends (negative: it must send them, see `supply`)."""
        if units > 0:
            self.f.arc(v, self.t, units, 0)
        elif units < 0:
            self.supply(v, -units)

    def partition(self, p: Partition, rack_brokers: Sequence[Sequence[int]], gb: Mapping[int, int]
                  ) -> list[tuple[int, int]]:
        """p -> (p, rack) -> (group, broker) arcs; returns (broker, arc id) of each (p, broker) arc."""
        f = self.f
        rf = len(p.replicas)
        pn = f.node()
        held = set(p.replicas)
        leader = p.replicas[0]
        moved = self.move + (p.size_bytes or 0).bit_length() * self.ties
        out = []
        floor = 0
        for bs, (lo, hi) in zip(rack_brokers, cell_bounds(rf, [len(bs) for bs in rack_brokers])):
            kn = f.node()
            if hi > lo:
                f.arc(pn, kn, hi - lo, 0)
            self.supply(kn, lo)
            floor += lo
            for b in bs:
                cost = (0 if b == leader else self.keep) if b in held else moved
                out.append((b, f.arc(kn, gb[b], 1, cost)))
        self.supply(pn, rf - floor)
        return out

    def solve(self) -> bool:
        """Solve; whether every supplied unit was placed (the bounds can be met)."""
        self.f.solve(self.s, self.t)
        return sum(self.f.flow(a) for a in self.f.out[self.s] if not a & 1) == self.supplied


def _read(parts: Sequence[Partition], groups: Mapping[str, Sequence[int]], rack_brokers: Sequence[Sequence[int]],
          rack_of: Mapping[int, int], arcs: Mapping[int, list[tuple[int, int]]], f: CostFlow) -> ExactRacks:
    """Counts and rack changes of the solved flow."""
    m = len(rack_brokers)
    targets = [b for bs in rack_brokers for b in bs]
    out = ExactRacks({}, {}, {}, {b: 0 for b in targets})
    after_of: dict[int, set[int]] = {}
    for g, idx in groups.items():
        counts = out.counts[g] = {b: 0 for b in targets}
        totals = out.totals[g] = [0] * m
        deps = out.departures[g] = []
        for i in idx:
            after = {b for b, a in arcs[i] if f.flow(a)}
            after_of[i] = after
            for b in after:
                counts[b] += 1
                out.broker_totals[b] += 1
                totals[rack_of[b]] += 1
    for g, idx in groups.items():
        moves = out.moves[g] = []
        for i in idx:
            _departures(parts[i], i, after_of[i], rack_of, rack_brokers, out, out.departures[g], moves)
        out.departures[g].sort()
        moves.sort()
    out.extra = _extra(parts, out, after_of)
    return out


def _departures(p: Partition, i: int, after: set[int], rack_of: Mapping[int, int],
                rack_brokers: Sequence[Sequence[int]], out: ExactRacks, deps: list[tuple[int, int, int]],
                moves: list[tuple[int, int, int]]) -> None:
    """Partition i's replicas leaving their rack (`deps`: per rack, as many as it holds fewer there after), and
    every replica it moves (`moves`: the others stay in their rack)."""
    m = len(rack_brokers)
    before = [0] * m
    leaving: list[list[int]] = [[] for _ in range(m)]
    gone = []
    for b in p.replicas:
        k = rack_of.get(b)
        if k is None:
            gone.append(b)
            continue
        before[k] += 1
        if b not in after:
            leaving[k].append(b)
    count = [0] * m
    for b in after:
        count[rack_of[b]] += 1
    sources = list(gone)
    for k in range(m):
        drop = before[k] - count[k]
        if drop > 0:
            hi = cell_bounds(len(p.replicas), [len(bs) for bs in rack_brokers])[k][1]
            out.rack_fix += min(drop, max(0, before[k] - hi))
            # Replicas of removed brokers leave first, then those of target brokers (ascending, deterministic).
            ranked = sorted(leaving[k], key=lambda b: (b in rack_brokers[k], b))
            sources += ranked[:drop]
            leaving[k] = ranked[drop:]
    dests = [k for k in range(m) for _ in range(max(0, count[k] - before[k]))]
    out.forced += len(gone)
    deps.extend((i, src, k) for src, k in zip(sources, dests))
    moves.extend((i, src, k) for src, k in zip(sources, dests))
    moves.extend((i, src, k) for k in range(m) for src in leaving[k])


def _extra(parts: Sequence[Partition], out: ExactRacks, after_of: Mapping[int, set[int]]) -> int:
    """Rack changes from target brokers holding no more now than their target (each costs a move back)."""
    current: dict[int, int] = {}
    for i in after_of:
        for b in parts[i].replicas:
            current[b] = current.get(b, 0) + 1
    extra = 0
    for deps in out.departures.values():
        for _, src, _ in deps:
            extra += src in out.broker_totals and current.get(src, 0) <= out.broker_totals[src]
    return extra
