"""--max-moves / --max-bytes / --leader-changes: keep the most useful part of a plan that fits the caps (like
Yelp's caps).

Moves are kept per partition (all of a partition's moves or none, so the partition stays valid): first those
that empty removed brokers, then balance moves round-robin over the most overloaded source brokers, each
broker's smallest partitions first so more moves fit under a byte cap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pylog.planner.plan import Prepared

__all__ = ["CapResult", "LeaderCapResult", "apply_caps", "apply_leader_cap"]


@dataclass(frozen=True, slots=True)
class CapResult:
    """What the caps cut: moves and bytes of the full plan that were dropped."""

    planned_moves: int
    planned_bytes: int
    dropped_moves: int
    dropped_bytes: int


def apply_caps(prep: "Prepared", proposed: list[list[int]]) -> CapResult | None:
    """Revert partitions (in place) until the plan fits the caps; None when no cap is set."""
    opts = prep.options
    if opts.max_moves is None and opts.max_bytes is None:
        return None
    parts = prep.partitions
    targets = prep.ctx.rack_index
    count: dict[int, int] = {}
    for p in parts:
        for b in p.replicas:
            count[b] = count.get(b, 0) + 1
    urgent: list[tuple[int, int, int]] = []
    by_source: dict[int, list[tuple[int, int, int]]] = {}
    total_moves = total_bytes = 0
    for i, p in enumerate(parts):
        old = set(p.replicas)
        gone = [b for b in p.replicas if b not in proposed[i]]
        if not gone:
            continue
        moves = len(set(proposed[i]) - old)
        size = (p.size_bytes or 0) * moves
        total_moves += moves
        total_bytes += size
        entry = (size, p.partition, i)
        if any(b not in targets for b in gone):
            urgent.append(entry)
        else:
            by_source.setdefault(max(gone, key=lambda b: (count[b], -b)), []).append(entry)
    max_moves = opts.max_moves if opts.max_moves is not None else total_moves
    max_bytes = opts.max_bytes if opts.max_bytes is not None else total_bytes
    ordered = sorted(urgent)
    queues = {b: sorted(entries, reverse=True) for b, entries in by_source.items()}
    # Round-robin over source brokers, the most loaded first, so the cut plan still evens out the peaks.
    while queues:
        for b in sorted(queues, key=lambda b: (-count[b], b)):
            ordered.append(queues[b].pop())
            count[b] -= 1
            if not queues[b]:
                del queues[b]
    kept_moves = kept_bytes = 0
    for size, _, i in ordered:
        moves = len(set(proposed[i]) - set(parts[i].replicas))
        if kept_moves + moves <= max_moves and kept_bytes + size <= max_bytes:
            kept_moves += moves
            kept_bytes += size
        else:
            proposed[i] = list(parts[i].replicas)
    return CapResult(total_moves, total_bytes, total_moves - kept_moves, total_bytes - kept_bytes)


@dataclass(frozen=True, slots=True)
class LeaderCapResult:
    """What --leader-changes cut: preferred-leader changes of the full plan dropped, and partitions reverted."""

    planned: int
    dropped: int
    reverted_partitions: int     # partitions put back as they are (their replica moves dropped too)


def apply_leader_cap(prep: "Prepared", proposed: list[list[int]]) -> LeaderCapResult | None:
    """Undo preferred-leader changes (in place) beyond --leader-changes; None when no budget is set.

    The changes a replica move forces (the old leader's replica moves away) are kept first, in partition order;
    beyond the budget those partitions are put back as they are. Then reorders are kept round-robin over the
    brokers taking leaderships, those leading the fewest before the plan first, so the partial plan still evens
    out the leaders; the others get their old leader back (a reorder, no data moves)."""
    budget = prep.options.max_leader_changes
    if budget is None:
        return None
    parts = prep.partitions
    changed = [i for i, p in enumerate(parts) if proposed[i][0] != p.replicas[0]]
    forced = [i for i in changed if parts[i].replicas[0] not in proposed[i]]
    reorders = [i for i in changed if parts[i].replicas[0] in proposed[i]]
    for i in forced[budget:]:
        proposed[i] = list(parts[i].replicas)
    left = max(0, budget - len(forced))
    before: dict[int, int] = {}
    for p in parts:
        before[p.replicas[0]] = before.get(p.replicas[0], 0) + 1
    queues: dict[int, list[int]] = {}
    for i in reversed(reorders):
        queues.setdefault(proposed[i][0], []).append(i)
    ordered = []
    while queues:
        for b in sorted(queues, key=lambda b: (before.get(b, 0), b)):
            ordered.append(queues[b].pop())
            if not queues[b]:
                del queues[b]
    for i in ordered[left:]:
        old = parts[i].replicas[0]
        proposed[i] = [old] + [b for b in proposed[i] if b != old]
    dropped = max(0, len(forced) - budget) + max(0, len(reorders) - left)
    return LeaderCapResult(len(changed), dropped, max(0, len(forced) - budget))
