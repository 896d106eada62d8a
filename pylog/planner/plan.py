"""The minimal-movement planner: snapshot + target brokers -> new assignment + report.

Phases (the Spark job runs the same functions, fanning phase B out per topic):
  A. `prepare`: index the input; overall per-broker targets and the lower bounds (targets.py); each group's
     replicas per rack and the replicas that change rack (shifts.py); per rack, which brokers hold a group's
     extra replica (dealing.py); small selections also solve all that exactly (exact_racks.py) and keep it where
     its plan is better;
  B. `plan_topic` per group (topic): the moves that reach those targets (mover.py);
  C. `finish`: caps (--max-moves/--max-bytes), preferred leaders balanced with the fewest changes by reordering
     (leaders.py), the --leader-changes budget, report.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain

from pylog.planner.caps import apply_caps, apply_leader_cap
from pylog.planner.dealing import DealInput, deal_rack
from pylog.planner import exact_racks
from pylog.planner.leaders import LeaderResult, balance_leaders
from pylog.planner.model import Broker, Partition, PlanError, PlanOptions, Snapshot, TopicPartition
from pylog.planner.mover import TopicContext, TopicStats, plan_topic
from pylog.planner.report import Report, build_report
from pylog.planner.shifts import RackPlan, group_range, plan_racks
from pylog.planner.targets import count_lower_bound, overall_targets, topic_lower_bound

__all__ = ["Plan", "Prepared", "prepare", "plan_reassignment", "finish", "run_group", "target_brokers",
           "ALL_TOPICS"]

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
    levels: dict[str, list[int]] = field(default_factory=dict)     # group -> replicas per broker, per rack
    extras: dict[str, list[int]] = field(default_factory=dict)     # group -> brokers holding one more
    departures: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # (index, broker, rack)
    global_target: dict[int, int] = field(default_factory=dict)
    lower_bound: int = 0
    topic_lower_bound: int = 0
    rack_note: str | None = None           # why overall balance within one is impossible, if it is
    rack_plan: RackPlan | None = None
    rule_bound: list[str] = field(default_factory=list)   # groups the rack rule keeps from balancing per topic
    overdrawn: int = 0                     # extras dealt beyond a broker's budget

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
    partitions = _select(snapshot, topics)
    for p in partitions:
        if len(p.replicas) > len(brokers):
            raise PlanError(f"Replication factor: {len(p.replicas)} larger than available brokers: {len(brokers)}. "
                            f"(partition {p.topic}-{p.partition})")
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(partitions):
        groups.setdefault(p.topic if options.topic_balance else _ONE_GROUP, []).append(i)
    removed = sorted({r for p in partitions for r in p.replicas if r not in rack_index})
    # A removed broker whose rack keeps target brokers hands its replicas over inside that rack.
    known_rack = {b.id: (b.rack if options.rack_aware else None) for b in snapshot.brokers}
    member_rack = {b: rack_pos[known_rack.get(b)] for b in removed if known_rack.get(b) in rack_pos}
    ctx = TopicContext(rack_index, rack_brokers, member_rack)
    prep = Prepared(options, brokers, removed, ctx, partitions, groups)
    if options.balance_by == "count":
        _count_targets(prep, rack_names)
    return prep


def _count_targets(prep: Prepared, rack_names: Sequence[str | None]) -> None:
    ctx, parts = prep.ctx, prep.partitions
    rack_index = ctx.rack_index
    rack_of = {**ctx.member_rack, **rack_index}
    sizes = [len(bs) for bs in ctx.rack_brokers]
    n = len(rack_index)
    current: Counter[int] = Counter()
    holders: dict[str, dict[int, int]] = {}
    replicas: dict[str, int] = {}
    rfs: Counter[int] = Counter()
    group_rfs: dict[str, dict[int, int]] = {}
    for g, idx in prep.groups.items():
        lists = [parts[i].replicas for i in idx]
        held = holders[g] = Counter(chain.from_iterable(lists))
        g_rfs = group_rfs[g] = Counter(map(len, lists))
        replicas[g] = sum(held.values())
        current.update(held)
        rfs.update(g_rfs)
    names = [str(r) for r in rack_names]
    prep.global_target, rack_totals, prep.rack_note = overall_targets(rfs, ctx.rack_brokers, names, current)
    prep.lower_bound = count_lower_bound(current, prep.global_target)

    ranges: dict[str, tuple[list[int], list[int]]] = {}
    levels: dict[str, int] = {}
    balanced: list[str] = []
    for g, total in replicas.items():
        levels[g] = total // n
        if not prep.options.topic_balance:
            ranges[g] = (list(rack_totals), list(rack_totals))
            continue
        lo, hi, ok = group_range(total, group_rfs[g], sizes, n, True)
        ranges[g] = (lo, hi)
        (balanced if ok else prep.rule_bound).append(g)
    kept = {g: dict(held) for g, held in holders.items()}
    rp = prep.rack_plan = plan_racks(parts, prep.groups, rack_of, prep.global_target, current, kept, sizes,
                                     rack_totals, ranges, levels, prep.rack_note is None)
    prep.departures = rp.departures
    rack_totals = rp.rack_totals

    _deal_extras(prep, rack_of, kept, rack_totals, current)
    _exact_targets(prep, rack_of)
    if prep.options.topic_balance:
        prep.topic_lower_bound = max(prep.lower_bound, topic_lower_bound(
            holders, replicas, prep.global_target, balanced, prep.rack_note is None))
    else:
        prep.topic_lower_bound = prep.lower_bound


def _exact_targets(prep: Prepared, rack_of: Mapping[int, int]) -> None:
    """Small selections that can be balanced: the exact phase A (exact_racks.py) replaces the rack plan and the
    dealing, unless the greedy ones' plan is as good.

    Both plans are made here (phases B and C without caps, cheap at this size) and compared by balance, moves,
    preferred-leader changes, then bytes: the exact phase A takes the fewest moves, but among those it only
    keeps the most leaders' replicas where they are, blind to the leadership balance (a replica that must move
    may land on a broker that then leads too much), where the greedy plan can do better by chance."""
    ctx = prep.ctx
    if prep.rack_note or prep.rule_bound or (
            exact_racks.exact_work(len(prep.partitions), len(ctx.rack_index), len(prep.groups))
            > exact_racks.EXACT_WORK):
        return
    found = exact_racks.solve_exact(prep.partitions, prep.groups, ctx.rack_brokers, rack_of,
                                    prep.options.topic_balance)
    if found is None:
        return
    greedy = (dict(prep.levels), dict(prep.extras), prep.departures, dict(prep.global_target),
              replace(prep.rack_plan), prep.overdrawn)
    greedy_score = _trial(prep)
    _apply_exact(prep, found)
    if _trial(prep) >= greedy_score:
        prep.levels, prep.extras, prep.departures, prep.global_target, prep.rack_plan, prep.overdrawn = greedy


def _trial(prep: Prepared) -> tuple[int, int, int, int]:
    """(replicas left unbalanced, moves, preferred-leader changes, bytes moved) of the plan phase A leads to."""
    parts = prep.partitions
    new: dict[int, list[int]] = {}
    unbalanced = 0
    for g, idx in prep.groups.items():
        reps, stats = run_group(prep, g)
        new.update(zip(idx, reps))
        unbalanced += stats.unbalanced
    proposed = [new.get(i) or list(p.replicas) for i, p in enumerate(parts)]
    _balance_leaders(prep, proposed)
    moves = moved = changes = 0
    for p, reps in zip(parts, proposed):
        n = len(set(reps) - set(p.replicas))
        moves += n
        moved += n * (p.size_bytes or 0)
        changes += reps[0] != p.replicas[0]
    return unbalanced, moves, changes, moved


def _apply_exact(prep: Prepared, found: exact_racks.ExactRacks) -> None:
    ctx = prep.ctx
    prep.overdrawn = 0
    rp = prep.rack_plan = replace(prep.rack_plan)
    rp.totals, rp.departures = found.totals, found.departures
    rp.forced, rp.rack_fix, rp.extra = found.forced, found.rack_fix, found.extra
    rp.widened, rp.residue = [], 0
    rp.rack_totals = [sum(found.broker_totals[b] for b in bs) for bs in ctx.rack_brokers]
    # Phase B lands every replica the flow moves (not only those changing rack): the same partitions move.
    prep.departures = found.moves
    prep.global_target = {**prep.global_target, **found.broker_totals}
    prep.levels, prep.extras = dict(prep.levels), dict(prep.extras)
    for g, counts in found.counts.items():
        levels = prep.levels[g] = [min((counts[b] for b in bs), default=0) for bs in ctx.rack_brokers]
        prep.extras[g] = sorted(b for b, c in counts.items() if c > levels[ctx.rack_index[b]])


def _deal_extras(prep: Prepared, rack_of: Mapping[int, int], kept: Mapping[str, Mapping[int, int]],
                 rack_totals: Sequence[int], current: Mapping[int, int]) -> None:
    """Per rack, deal the groups' extras (dealing.py): each group's levels and extra brokers, the overall ceil."""
    ctx, rp = prep.ctx, prep.rack_plan
    rack_index = ctx.rack_index
    sizes = [len(bs) for bs in ctx.rack_brokers]
    per_rack: list[list[DealInput]] = [[] for _ in sizes]
    base = [0] * len(sizes)
    blocked = _blocked(prep, rack_of)
    for g, t in rp.totals.items():
        in_rack: list[dict[int, int]] = [{} for _ in sizes]
        for b, c in kept[g].items():
            k = rack_index.get(b)
            if k is not None and c:
                in_rack[k][b] = c
        lv = [v // n_k for v, n_k in zip(t, sizes)]
        prep.levels[g] = lv
        for k, n_k in enumerate(sizes):
            base[k] += lv[k]
            if t[k] % n_k:
                per_rack[k].append(DealInput(g, t[k] % n_k, lv[k], in_rack[k], blocked.get((g, k))))
    extras: dict[str, list[int]] = {g: [] for g in prep.groups}
    unit_size = _unit_sizes(prep)
    for k, bs in enumerate(ctx.rack_brokers):
        level, ceil = divmod(rack_totals[k], len(bs))
        dealt = deal_rack(bs, {b: level - base[k] for b in bs}, per_rack[k], ceil, current, unit_size)
        prep.global_target.update((b, level + (b in dealt.ceil)) for b in bs)
        prep.overdrawn += dealt.overdrawn
        for g, chosen in dealt.extras.items():
            extras[g].extend(chosen)
    prep.extras = {g: sorted(bs) for g, bs in extras.items()}


def _unit_sizes(prep: Prepared) -> Callable[[str, int], int]:
    """unit_size(g, b): size of the smallest partition of g on b (the one the mover moves first), cached."""
    parts = prep.partitions
    sized = any(p.size_bytes for p in parts)
    smallest: dict[str, dict[int, int]] = {}

    def unit_size(g: str, b: int) -> int:
        if not sized:
            return 0
        if g not in smallest:
            small: dict[int, int] = {}
            for i in prep.groups[g]:
                size = parts[i].size_bytes or 0
                for r in parts[i].replicas:
                    if size < small.get(r, 1 << 62):
                        small[r] = size
            smallest[g] = small
        return smallest[g].get(b, 0)
    return unit_size


def _blocked(prep: Prepared, rack_of: Mapping[int, int]) -> dict[tuple[str, int], dict[int, int]]:
    """Per (group, rack): brokers holding partitions whose replica must land in that rack (it cannot land there).

    Only when a partition has another replica in the rack (no racks at all, or RF above the number of racks)."""
    rack_index = prep.ctx.rack_index
    landing: dict[tuple[str, int], list[tuple[int, int]]] = {}
    m = prep.ctx.n_racks
    if m == 1 or any(len(p.replicas) > m for p in prep.partitions):  # else a replica changes rack only to
        for g, deps in prep.departures.items():                        # a rack its partition is not on
            for i, src, k in deps:
                landing.setdefault((g, k), []).append((i, src))
    if prep.ctx.member_rack:
        for g, idx in prep.groups.items():
            for i in idx:
                for b in prep.partitions[i].replicas:
                    if b in prep.ctx.member_rack:
                        landing.setdefault((g, rack_of[b]), []).append((i, b))
    blocked: dict[tuple[str, int], dict[int, int]] = {}
    for (g, k), units in landing.items():
        for i, src in units:
            for b in prep.partitions[i].replicas:
                if b != src and rack_index.get(b) == k:
                    per = blocked.setdefault((g, k), {})
                    per[b] = per.get(b, 0) + 1
    return blocked


def _balance_leaders(prep: Prepared, proposed: list[list[int]]) -> LeaderResult | None:
    """Phase C's leader stage on `proposed` (reordered in place), if the options ask for it."""
    if not prep.options.leader_balance:
        return None
    parts = prep.partitions
    topics: dict[str, list[int]] = {}
    for i, p in enumerate(parts):
        topics.setdefault(p.topic, []).append(i)
    return balance_leaders(topics, proposed, [b.id for b in prep.brokers],
                           {i: p.replicas[0] for i, p in enumerate(parts)}, prep.options.topic_balance)


def run_group(prep: Prepared, group: str) -> tuple[list[list[int]], TopicStats]:
    """Phase B for one group, locally (the Spark job calls `plan_topic` with the same arguments)."""
    return plan_topic(prep.group_input(group), prep.levels[group], prep.extras[group], prep.ctx,
                      prep.departures.get(group, ()))


def finish(prep: Prepared, new_replicas: Mapping[int, list[int]], stats: Mapping[str, TopicStats]) -> Plan:
    """Phase C: caps, leader balance, report. `new_replicas` maps partition index -> replicas after phase B."""
    parts = prep.partitions
    # Phase B's lists are fresh (the leader pass reorders them in place); unplanned partitions are copied.
    proposed = [new_replicas.get(i) or list(p.replicas) for i, p in enumerate(parts)]
    capped = apply_caps(prep, proposed)
    leaders = _balance_leaders(prep, proposed)
    leader_cap = apply_leader_cap(prep, proposed)
    if leader_cap is not None and leader_cap.dropped and leaders is not None:
        leaders.bound = None  # the partial plan's own bound (the report computes it)
    report = build_report(prep, proposed, stats, capped, leaders, leader_cap=leader_cap)
    return Plan({(p.topic, p.partition): list(p.replicas) for p in parts},
                {(p.topic, p.partition): reps for p, reps in zip(parts, proposed)}, report)


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
