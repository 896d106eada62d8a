"""The minimal-movement planner: snapshot + target brokers -> new assignment + report.

Phases (the Spark job runs the same functions, fanning phase B out per topic):
  A. `prepare`: index the input, choose per-broker and per-(topic, broker) targets (quotas.py);
  B. `plan_topic` per topic: moves from brokers above target to brokers below (mover.py);
  C. `finish`: caps (--max-moves/--max-bytes), preferred-leader balance by reordering (leaders.py), report.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pylog.planner.caps import apply_caps
from pylog.planner.leaders import balance_leaders
from pylog.planner.model import Broker, Partition, PlanError, PlanOptions, Snapshot, TopicPartition
from pylog.planner.mover import TopicContext, TopicStats, plan_topic
from pylog.planner.quotas import deal_extras, global_targets, level_fill, rack_bounds
from pylog.planner.report import Report, build_report

__all__ = ["Plan", "Prepared", "prepare", "plan_reassignment", "finish", "target_brokers", "ALL_TOPICS"]

ALL_TOPICS = None
_ONE_GROUP = ""  # group key used when per-topic balance is off: the whole selection is one group

RACK_MIX_MESSAGE = ("Not all brokers have rack information. Add --disable-rack-aware in command line to make "
                    "replica assignment without rack information.")


@dataclass(slots=True)
class Plan:
    """A proposed reassignment: current and proposed replicas of every partition of the moved topics."""

    current: dict[TopicPartition, list[int]]
    proposed: dict[TopicPartition, list[int]]
    report: Report

    def changed(self) -> dict[TopicPartition, list[int]]:
        """Only the partitions whose replica list (set or order) changes."""
        return {tp: reps for tp, reps in self.proposed.items() if reps != self.current[tp]}


@dataclass(slots=True)
class Prepared:
    """Phase A output: everything phase B needs per group (topic) and phase C needs globally."""

    options: PlanOptions
    brokers: list[Broker]                  # target brokers, ascending id
    removed: list[int]                     # brokers holding replicas of the selection but not targets
    ctx: TopicContext
    partitions: list[Partition]            # the selection, sorted by (topic, partition)
    groups: dict[str, list[int]]           # group (topic) -> indices into partitions
    levels: dict[str, list[int]] = field(default_factory=dict)
    extras: dict[str, list[int]] = field(default_factory=dict)
    global_target: dict[int, int] = field(default_factory=dict)
    lower_bound: int = 0
    topic_lower_bound: int = 0

    def group_input(self, group: str) -> list[tuple[int, list[int], int]]:
        """Phase B input of one group: (partition index, replicas, size) rows."""
        return [(i, self.partitions[i].replicas, self.partitions[i].size_bytes or 0) for i in self.groups[group]]


def target_brokers(snapshot: Snapshot, broker_list: Sequence[int] | None,
                   broker_racks: Mapping[int, str] | None = None) -> list[Broker]:
    """The target broker set: --broker-list ids (snapshot ones keep rack/capacity, others are new, empty)."""
    known = {b.id: b for b in snapshot.brokers}
    ids = sorted(known) if broker_list is None else list(broker_list)
    if len(set(ids)) != len(ids):
        dups = sorted({b for b in ids if ids.count(b) > 1})
        raise PlanError(f"Broker list contains duplicate entries: {','.join(map(str, dups))}")
    if not ids:
        raise PlanError("The broker list is empty")
    racks = dict(broker_racks or {})
    result = []
    for b in sorted(ids):
        base = known.get(b, Broker(b))
        result.append(Broker(b, racks.get(b, base.rack), base.capacity))
    return result


def _select(snapshot: Snapshot, topics: Sequence[str] | None) -> list[Partition]:
    if topics is None:
        return sorted(snapshot.partitions, key=lambda p: p.tp)
    wanted = set(topics)
    present = {p.topic for p in snapshot.partitions}
    missing = [t for t in topics if t not in present]
    if missing:
        raise PlanError(f"Topic(s) not found in the cluster: {', '.join(missing)}")
    return sorted((p for p in snapshot.partitions if p.topic in wanted), key=lambda p: p.tp)


def prepare(snapshot: Snapshot, topics: Sequence[str] | None, broker_list: Sequence[int] | None,
            options: PlanOptions = PlanOptions(), broker_racks: Mapping[int, str] | None = None) -> Prepared:
    """Phase A: validate, index and choose every broker's targets."""
    brokers = target_brokers(snapshot, broker_list, broker_racks)
    racks = [b.rack for b in brokers] if options.rack_aware else [None] * len(brokers)
    if any(r is None for r in racks) and not all(r is None for r in racks):
        raise PlanError(RACK_MIX_MESSAGE)
    rack_names = sorted({r for r in racks if r is not None}) or [None]
    rack_pos = {name: k for k, name in enumerate(rack_names)}
    rack_index = {b.id: rack_pos[r] for b, r in zip(brokers, racks)}
    rack_brokers = [[b.id for b, r in zip(brokers, racks) if rack_pos[r] == k] for k in range(len(rack_names))]
    ctx = TopicContext(rack_index, rack_brokers)
    partitions = _select(snapshot, topics)
    for p in partitions:
        if len(p.replicas) > len(brokers):
            raise PlanError(f"Replication factor: {len(p.replicas)} larger than available brokers: {len(brokers)}. "
                            f"(partition {p.topic}-{p.partition})")
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(partitions):
        groups.setdefault(p.topic if options.topic_balance else _ONE_GROUP, []).append(i)
    removed = sorted({r for p in partitions for r in p.replicas if r not in rack_index})
    prep = Prepared(options, brokers, removed, ctx, partitions, groups)
    if options.balance_by == "count":
        _count_targets(prep)
    return prep


def _count_targets(prep: Prepared) -> None:
    ctx, parts = prep.ctx, prep.partitions
    n_racks = ctx.n_racks
    sizes = [len(bs) for bs in ctx.rack_brokers]
    holders: dict[str, dict[int, int]] = {}
    current: dict[int, int] = {}
    demands: dict[str, int] = {}
    ranges: dict[str, list[tuple[int, int]]] = {}
    base = [0] * n_racks
    g_lo = [0] * n_racks
    g_hi = [0] * n_racks
    for group, idx in prep.groups.items():
        held: dict[int, int] = {}
        rfs = []
        for i in idx:
            reps = parts[i].replicas
            rfs.append(len(reps))
            for b in reps:
                held[b] = held.get(b, 0) + 1
        holders[group] = held
        for b, c in held.items():
            current[b] = current.get(b, 0) + c
        total = sum(rfs)
        lo, hi = rack_bounds(rfs, n_racks)
        levels = level_fill(total, sizes, [lo] * n_racks, [hi] * n_racks)
        prep.levels[group] = [lv.level for lv in levels]
        demands[group] = total - sum(lv.level * n for lv, n in zip(levels, sizes))
        ranges[group] = [(lv.lo, lv.hi) for lv in levels]
        for k, lv in enumerate(levels):
            base[k] += lv.level
            g_lo[k] += sizes[k] * lv.level + lv.lo
            g_hi[k] += sizes[k] * lv.level + lv.hi
    total = sum(demands.values()) + sum(b * n for b, n in zip(base, sizes))
    g_levels = level_fill(total, sizes, g_lo, g_hi)
    # The count lower bound uses the best overall targets on their own (the definition) ...
    best_alone = global_targets(total, ctx.rack_brokers, g_levels, current)
    # ... while the dealing decides which brokers get the overall ceil, to suit the per-topic targets too.
    # Racks' lower bounds on the overall extras are met through the topics' own per-rack lower bounds.
    pool = total - sum(lv.level * len(bs) for lv, bs in zip(g_levels, ctx.rack_brokers))
    budget = {b: g_levels[k].level - base[k] for b, k in ctx.rack_index.items()}
    # Topics that can save moves with their extras (they hold more than their level somewhere) pick first,
    # the most constrained first, so topics indifferent to where their extras go do not take those slots.
    # Every topic still picks among the highest remaining budgets, which keeps the dealing complete.
    beneficial = {g: sum(1 for b, c in held.items() if b in ctx.rack_index and c > prep.levels[g][ctx.rack_index[b]])
                  for g, held in holders.items()}
    order = sorted(prep.groups, key=lambda g: (beneficial[g] == 0, beneficial[g], -demands[g], g))
    # Deal with floating overall targets and the beneficial bonus first; the bonus can break the greedy's
    # completeness, so fall back to plain highest-budget-first (beneficial only breaking ties), which always
    # completes when racks do not bind (Gale-Ryser), first with floating and then with fixed overall targets.
    fixed = {b: best_alone[b] - base[k] for b, k in ctx.rack_index.items()}
    attempts = [(budget, pool, True), (budget, pool, False), (fixed, 0, False)]
    for start, pool_now, bonus in attempts:
        prep.extras, claimed = deal_extras(order, demands, ranges, holders, prep.levels, dict(start),
                                           ctx.rack_index, n_racks, set(ctx.rack_index), pool_now,
                                           [lv.hi for lv in g_levels], bonus)
        if claimed is not None:
            break
    if not pool_now:
        claimed = {b for b, k in ctx.rack_index.items() if best_alone[b] > g_levels[k].level}
    prep.global_target = {b: g_levels[k].level + (b in claimed) for b, k in ctx.rack_index.items()}
    orphans = sum(c for b, c in current.items() if b not in ctx.rack_index)
    prep.lower_bound = orphans + sum(max(0, current.get(b, 0) - t) for b, t in best_alone.items())
    topic_lb = orphans
    for group, held in holders.items():
        extras = set(prep.extras[group])
        lv = prep.levels[group]
        for b, c in held.items():
            k = ctx.rack_index.get(b)
            if k is not None:
                topic_lb += max(0, c - lv[k] - (b in extras))
    prep.topic_lower_bound = topic_lb


def run_group(prep: Prepared, group: str) -> tuple[list[list[int]], TopicStats]:
    """Phase B for one group, locally (the Spark job calls `plan_topic` with the same arguments)."""
    rows = prep.group_input(group)
    return plan_topic(rows, prep.levels[group], prep.extras[group], prep.ctx)


def finish(prep: Prepared, new_replicas: Mapping[int, list[int]], stats: Mapping[str, TopicStats]) -> Plan:
    """Phase C: caps, leader balance, report. `new_replicas` maps partition index -> replicas after phase B."""
    parts = prep.partitions
    proposed = [list(new_replicas.get(i, p.replicas)) for i, p in enumerate(parts)]
    capped = apply_caps(prep, proposed)
    leader_unbalanced = 0
    if prep.options.leader_balance:
        topics: dict[str, list[int]] = {}
        for i, p in enumerate(parts):
            topics.setdefault(p.topic, []).append(i)
        leader_unbalanced = balance_leaders(topics, proposed, [b.id for b in prep.brokers])
    report = build_report(prep, proposed, stats, capped, leader_unbalanced)
    return Plan({p.tp: list(p.replicas) for p in parts},
                {p.tp: proposed[i] for i, p in enumerate(parts)}, report)


def plan_reassignment(snapshot: Snapshot, topics: Sequence[str] | None = ALL_TOPICS,
                      broker_list: Sequence[int] | None = None, options: PlanOptions = PlanOptions(),
                      broker_racks: Mapping[int, str] | None = None) -> Plan:
    """Plan moving `topics` (None = all) onto `broker_list` (None = the snapshot's brokers) with fewest moves."""
    prep = prepare(snapshot, topics, broker_list, options, broker_racks)
    new: dict[int, list[int]] = {}
    stats: dict[str, TopicStats] = {}
    if options.balance_by == "bytes":
        from pylog.planner.bytes_balance import plan_bytes
        new_list, stats[_ONE_GROUP] = plan_bytes(prep)
        new = dict(enumerate(new_list))
    else:
        for group, idx in prep.groups.items():
            reps, stats[group] = run_group(prep, group)
            new.update(zip(idx, reps))
    return finish(prep, new, stats)
