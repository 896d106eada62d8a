"""The plan report: moves vs the lower bound (and why any gap), bytes, leader changes, per-broker counts."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from pylog.planner.caps import CapResult, LeaderCapResult
    from pylog.planner.leaders import LeaderResult
    from pylog.planner.model import Partition
    from pylog.planner.mover import TopicStats
    from pylog.planner.plan import Prepared

__all__ = ["BrokerRow", "Report", "build_report", "load_summary", "render_text"]


@dataclass(slots=True)
class BrokerRow:
    """One broker's replica/leader/byte counts before and after the plan."""

    id: int
    rack: str | None
    role: str  # "target", "new" (target holding nothing yet) or "removed"
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int


@dataclass(slots=True)
class Report:
    """Everything a user needs to judge a plan; `to_dict()` is the JSON form."""

    planner: str
    balance_by: str
    partitions: int
    replicas: int
    replicas_moved: int
    lower_bound: int
    topic_lower_bound: int
    bytes_moved: int
    bytes_lower_bound: int
    leader_changes: int              # partitions whose preferred leader (first replica) changes
    leader_bound: int                # proven lower bound on leader_changes for these replica sets and balance
    partitions_changed: int
    replica_spread: int              # max - min replicas per target broker after the plan
    max_topic_spread: int            # worst per-topic max - min over target brokers
    leader_spread: int
    max_topic_leader_spread: int
    rack_violations: int             # partitions spanning fewer racks than min(RF, #racks) after the plan
    replicas_on_removed: int
    gap_reasons: list[str] = field(default_factory=list)
    caps: dict[str, int] | None = None
    brokers: list[BrokerRow] = field(default_factory=list)
    elapsed_s: float | None = None
    load: dict[str, Any] | None = None  # where sizes and rates came from (load_summary), when the job read them

    @property
    def gap(self) -> int:
        """Moves above the count lower bound."""
        return self.replicas_moved - self.lower_bound

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (brokers as a list of objects)."""
        data = asdict(self)
        data["gap"] = self.gap
        return data


def _spread(values: Sequence[int]) -> int:
    return max(values) - min(values) if values else 0


def build_report(prep: "Prepared", proposed: Sequence[list[int]], stats: Mapping[str, "TopicStats"],
                 caps: "CapResult | None", leader_unbalanced: "LeaderResult | int | None",
                 planner: str = "pylog", leader_cap: "LeaderCapResult | None" = None) -> Report:
    """Measure the plan against the input and explain any gap to the lower bound.

    `leader_unbalanced`: what the leader pass could not balance (a LeaderResult, or a count of leaderships)."""
    if isinstance(leader_unbalanced, int):
        from pylog.planner.leaders import LeaderResult
        leader_unbalanced = LeaderResult(overall_left=leader_unbalanced, bound=None)
    leaders = leader_unbalanced
    parts = prep.partitions
    targets = prep.ctx.rack_index
    n_racks = prep.ctx.n_racks
    old_lists = [p.replicas for p in parts]
    count_before = Counter(chain.from_iterable(old_lists))
    count_after = Counter(chain.from_iterable(proposed))
    lead_before = Counter(r[0] for r in old_lists)
    lead_after = Counter(r[0] for r in proposed)
    bytes_before: Counter[int] = Counter()
    bytes_after: Counter[int] = Counter()
    moved = bytes_moved = leader_changes = changed = rack_viol = 0
    sized = any(p.size_bytes for p in parts)
    for p, old, new in zip(parts, old_lists, proposed):
        size = p.size_bytes or 0
        if sized and size:
            for b in old:
                bytes_before[b] += size
            for b in new:
                bytes_after[b] += size
        if new != old:
            changed += 1
            leader_changes += new[0] != old[0]
            n_moved = len(set(new).difference(old))
            moved += n_moved
            bytes_moved += n_moved * size
    if n_racks > 1:
        rack = targets.get
        for new in proposed:
            if len({rack(b) for b in new} - {None}) < min(len(new), n_racks):
                rack_viol += 1

    topic_spread, leader_topic_spread = _topic_spreads(parts, proposed, targets)
    before = {b: [count_before[b], lead_before[b], bytes_before[b]] for b in count_before}
    after = {b: [count_after[b], lead_after[b], bytes_after[b]] for b in count_after}
    target_ids = [b.id for b in prep.brokers]
    rows = _broker_rows(prep, before, after)
    total_bytes = sum(r[2] for r in before.values())
    bytes_lb = sum(r[2] for b, r in before.items() if b not in targets)
    if prep.options.balance_by == "bytes" and targets:
        share = total_bytes / len(targets)
        bytes_lb += int(sum(max(0.0, before.get(b, [0, 0, 0])[2] - share) for b in targets))
    report = Report(
        planner=planner, balance_by=prep.options.balance_by, partitions=len(parts),
        replicas=sum(len(p.replicas) for p in parts), replicas_moved=moved, lower_bound=prep.lower_bound,
        topic_lower_bound=prep.topic_lower_bound, bytes_moved=bytes_moved, bytes_lower_bound=bytes_lb,
        leader_changes=leader_changes, leader_bound=_leader_bound(prep, proposed, leaders),
        partitions_changed=changed,
        replica_spread=_spread([after.get(b, [0])[0] for b in target_ids]), max_topic_spread=topic_spread,
        leader_spread=_spread([after.get(b, [0, 0])[1] for b in target_ids]),
        max_topic_leader_spread=leader_topic_spread, rack_violations=rack_viol,
        replicas_on_removed=sum(r[0] for b, r in after.items() if b not in targets), brokers=rows)
    report.gap_reasons = _explain(prep, report, stats, caps, leaders)
    if caps is not None:
        report.caps = {"planned_moves": caps.planned_moves, "planned_bytes": caps.planned_bytes,
                       "dropped_moves": caps.dropped_moves, "dropped_bytes": caps.dropped_bytes}
    if leader_cap is not None:
        report.caps = dict(report.caps or {}, planned_leader_changes=leader_cap.planned,
                           dropped_leader_changes=leader_cap.dropped)
        if leader_cap.dropped:
            report.gap_reasons.append(
                f"--leader-changes dropped {leader_cap.dropped} of {leader_cap.planned} planned leader change(s)"
                + (f" ({leader_cap.reverted_partitions} partition(s) kept as they are, their moves too)"
                   if leader_cap.reverted_partitions else "") + ": the plan is partial")
    return report


def _broker_rows(prep: "Prepared", before: Mapping[int, list[int]], after: Mapping[int, list[int]]
                 ) -> list[BrokerRow]:
    """Per broker (targets, then removed ones): [replicas, leaders, bytes] before and after."""
    rows = []
    for b in prep.brokers:
        bb, aa = before.get(b.id, [0, 0, 0]), after.get(b.id, [0, 0, 0])
        rows.append(BrokerRow(b.id, b.rack, "target" if bb[0] else "new", bb[0], aa[0], bb[1], aa[1], bb[2], aa[2]))
    for b in sorted(set(before) | set(after)):
        if b not in prep.ctx.rack_index:
            bb, aa = before.get(b, [0, 0, 0]), after.get(b, [0, 0, 0])
            rows.append(BrokerRow(b, None, "removed", bb[0], aa[0], bb[1], aa[1], bb[2], aa[2]))
    return rows


def _topic_spreads(parts: Sequence, proposed: Sequence[list[int]], targets: Mapping[int, int]) -> tuple[int, int]:
    """The worst topic's replica spread and preferred-leader spread over the target brokers."""
    n_targets = len(targets)

    def spread_of(counts: Counter) -> int:
        on_targets = [c for b, c in counts.items() if b in targets]
        if not on_targets:
            return 0
        return max(on_targets) - (min(on_targets) if len(on_targets) == n_targets else 0)

    topic_spread = leader_topic_spread = 0
    start = 0
    for end in range(1, len(parts) + 1):
        if end == len(parts) or parts[end].topic != parts[start].topic:
            lists = proposed[start:end]
            topic_spread = max(topic_spread, spread_of(Counter(chain.from_iterable(lists))))
            leader_topic_spread = max(leader_topic_spread, spread_of(Counter(r[0] for r in lists)))
            start = end
    return topic_spread, leader_topic_spread


def _leader_bound(prep: "Prepared", proposed: Sequence[list[int]], leaders: "LeaderResult | None") -> int:
    """The leader stage's bound; for a plan it did not make, the bound for plans as balanced as this one."""
    if leaders is not None and leaders.bound is not None:
        return leaders.bound
    from pylog.planner.leaders import plan_leader_bound
    return plan_leader_bound([p.topic for p in prep.partitions], [p.replicas[0] for p in prep.partitions],
                             proposed, [b.id for b in prep.brokers], prep.options.topic_balance)


def _some(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _explain(prep: "Prepared", report: Report, stats: Mapping[str, "TopicStats"], caps: "CapResult | None",
             leaders: "LeaderResult | None") -> list[str]:
    reasons = []
    count_mode = prep.options.balance_by == "count"
    if not count_mode:
        reasons.append("balancing bytes, not counts: the count lower bound does not apply")
    if prep.rack_note:
        reasons.append(prep.rack_note + "; the targets are the most even the racks allow")
    if count_mode and report.topic_lower_bound > report.lower_bound:
        reasons.append(f"per-topic balance needs at least {report.topic_lower_bound - report.lower_bound} "
                       f"more move(s) than overall balance alone (the topics are unevenly spread now)")
    rp = prep.rack_plan
    rack_fix = sum(s.rack_fix_moves for s in stats.values()) + (rp.rack_fix if rp else 0)
    detours = sum(s.detour_moves for s in stats.values()) + (rp.extra if rp else 0)
    unbalanced = sum(s.unbalanced for s in stats.values())
    if rack_fix:
        reasons.append(f"{rack_fix} move(s) only to spread partitions over min(RF, #racks) racks")
    if detours:
        reasons.append(f"{detours} replica(s) had to change rack from a broker not above its target (the "
                       f"partitions above target already use the racks that need replicas): one more move each")
    if prep.rule_bound:
        reasons.append(f"{len(prep.rule_bound)} topic(s) cannot be balanced within one per broker: the rack rule "
                       f"(each partition on min(RF, #racks) racks) fixes their replicas per rack "
                       f"({_some(prep.rule_bound)}); they are balanced within each rack")
    widened = [g for g in (rp.widened if rp else []) if g not in set(prep.rule_bound)]
    if widened:
        reasons.append(f"{len(widened)} topic(s) gave up per-topic balance so that racks reach their overall "
                       f"totals ({_some(widened)})")
    if rp and rp.residue:
        reasons.append(f"{rp.residue} replica(s) could not change rack to even out the racks (no partition "
                       f"could make the move within the rack rule)")
    if prep.overdrawn:
        reasons.append(f"{prep.overdrawn} per-topic extra replica(s) went beyond a broker's overall target")
    if unbalanced:
        reasons.append(f"{unbalanced} replica(s) could not be balanced within the rack/replica constraints")
        for s in stats.values():
            reasons.extend(s.details[:5])
    explained = report.topic_lower_bound + rack_fix + detours
    if count_mode and caps is None and report.replicas_moved > explained:
        changes = sum(len(v) for v in rp.departures.values()) if rp else 0
        reasons.append(f"{report.replicas_moved - explained} move(s) above the per-topic lower bound, which counts "
                       f"each topic's extra replicas as staying where they are and ignores racks and the overall "
                       f"targets; here {changes} replica(s) change rack, and each topic's extras per rack follow "
                       f"from that (the bound may not be reachable)")
    if caps is not None and caps.dropped_moves:
        reasons.append(f"caps dropped {caps.dropped_moves} of {caps.planned_moves} planned move(s) "
                       f"({caps.dropped_bytes} bytes): the plan is partial")
    if leaders is not None and leaders.topics_unbalanced:
        reasons.append(f"preferred leaders of {len(leaders.topics_unbalanced)} topic(s) cannot be within one per "
                       f"broker: their replicas sit on too few brokers ({_some(leaders.topics_unbalanced)})")
    if leaders is not None and leaders.overall_left:
        reasons.append(f"{leaders.overall_left} preferred leadership(s) could not be balanced overall by reordering")
    return reasons


def load_summary(partitions: Sequence["Partition"], proposed: Mapping[tuple[str, int], Sequence[int]],
                 source: str) -> dict[str, Any]:
    """Where the load came from and each broker's traffic before and after the plan.

    Every replica takes a partition's bytes in (the leader from producers, followers by replication); the
    preferred leader (first replica) serves its bytes out."""
    traffic: dict[int, list[float]] = {}  # broker -> [in before, in after, out before, out after]
    loaded = 0
    for p in partitions:
        if p.bytes_in_per_sec is None and p.bytes_out_per_sec is None and p.size_bytes is None:
            continue
        loaded += 1
        rin, rout = p.bytes_in_per_sec or 0.0, p.bytes_out_per_sec or 0.0
        for col, replicas in ((0, p.replicas), (1, proposed.get(p.tp, p.replicas))):
            for i, b in enumerate(replicas):
                row = traffic.setdefault(b, [0.0, 0.0, 0.0, 0.0])
                row[col] += rin
                if i == 0:
                    row[2 + col] += rout
    return {"source": source, "partitions": loaded, "brokers": [
        {"id": b, "bytes_in_per_sec": [r[0], r[1]], "bytes_out_per_sec": [r[2], r[3]]}
        for b, r in sorted(traffic.items())]}


def render_text(report: Report) -> str:
    """A plain-text summary and per-broker table (stdlib only; the CLI may render richer)."""
    lines = [
        f"planner: {report.planner} (balance by {report.balance_by})",
        f"partitions: {report.partitions}  replicas: {report.replicas}",
        f"replicas moved: {report.replicas_moved}  lower bound: {report.lower_bound}  gap: {report.gap}",
        f"bytes moved: {report.bytes_moved}  leader changes: {report.leader_changes}  "
        f"leader bound: {report.leader_bound}  partitions changed: {report.partitions_changed}",
        f"spread after (max-min per broker): replicas {report.replica_spread}, leaders {report.leader_spread}; "
        f"worst topic: replicas {report.max_topic_spread}, leaders {report.max_topic_leader_spread}",
        f"rack violations: {report.rack_violations}  replicas left on removed brokers: {report.replicas_on_removed}",
    ]
    if report.elapsed_s is not None:
        lines.append(f"planning time: {report.elapsed_s:.2f} s")
    if report.load is not None:
        lines.append(f"load: {report.load['source']} ({report.load['partitions']} partitions with load)")
    lines.extend(f"note: {r}" for r in report.gap_reasons)
    header = ("broker", "rack", "role", "replicas", "leaders", "bytes")
    table = [header] + [(str(r.id), r.rack or "-", r.role, f"{r.replicas_before} -> {r.replicas_after}",
                         f"{r.leaders_before} -> {r.leaders_after}", f"{r.bytes_before} -> {r.bytes_after}")
                        for r in report.brokers]
    widths = [max(len(row[c]) for row in table) for c in range(len(header))]
    lines.append("")
    lines.extend("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)
    return "\n".join(lines)
