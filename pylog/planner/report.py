"""The plan report: moves vs the lower bound (and why any gap), bytes, leader changes, per-broker counts."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from pylog.planner.caps import CapResult
    from pylog.planner.mover import TopicStats
    from pylog.planner.plan import Prepared

__all__ = ["BrokerRow", "Report", "build_report", "render_text"]


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
    leader_changes: int
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
                 caps: "CapResult | None", leader_unbalanced: int, planner: str = "pylog") -> Report:
    """Measure the plan against the input and explain any gap to the lower bound."""
    parts = prep.partitions
    targets = prep.ctx.rack_index
    n_racks = prep.ctx.n_racks
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    per_topic: dict[str, dict[int, list[int]]] = {}
    moved = bytes_moved = leader_changes = changed = rack_viol = 0
    for i, p in enumerate(parts):
        size = p.size_bytes or 0
        new = proposed[i]
        for j, b in enumerate(p.replicas):
            row = before.setdefault(b, [0, 0, 0])
            row[0] += 1; row[1] += j == 0; row[2] += size
        topic_counts = per_topic.setdefault(p.topic, {})
        for j, b in enumerate(new):
            row = after.setdefault(b, [0, 0, 0])
            row[0] += 1; row[1] += j == 0; row[2] += size
            tc = topic_counts.setdefault(b, [0, 0])
            tc[0] += 1; tc[1] += j == 0
        n_moved = len(set(new) - set(p.replicas))
        moved += n_moved
        bytes_moved += n_moved * size
        leader_changes += new[0] != p.replicas[0]
        changed += new != p.replicas
        if n_racks > 1 and len({targets.get(b) for b in new} - {None}) < min(len(new), n_racks):
            rack_viol += 1
    target_ids = [b.id for b in prep.brokers]
    topic_spread = leader_topic_spread = 0
    for counts in per_topic.values():
        topic_spread = max(topic_spread, _spread([counts.get(b, [0, 0])[0] for b in target_ids]))
        leader_topic_spread = max(leader_topic_spread, _spread([counts.get(b, [0, 0])[1] for b in target_ids]))
    rows = []
    for b in prep.brokers:
        bb, aa = before.get(b.id, [0, 0, 0]), after.get(b.id, [0, 0, 0])
        rows.append(BrokerRow(b.id, b.rack, "target" if bb[0] else "new", bb[0], aa[0], bb[1], aa[1], bb[2], aa[2]))
    for b in sorted(set(before) | set(after)):
        if b not in targets:
            bb, aa = before.get(b, [0, 0, 0]), after.get(b, [0, 0, 0])
            rows.append(BrokerRow(b, None, "removed", bb[0], aa[0], bb[1], aa[1], bb[2], aa[2]))
    total_bytes = sum(r[2] for r in before.values())
    bytes_lb = sum(r[2] for b, r in before.items() if b not in targets)
    if prep.options.balance_by == "bytes" and targets:
        share = total_bytes / len(targets)
        bytes_lb += int(sum(max(0.0, before.get(b, [0, 0, 0])[2] - share) for b in targets))
    report = Report(
        planner=planner, balance_by=prep.options.balance_by, partitions=len(parts),
        replicas=sum(len(p.replicas) for p in parts), replicas_moved=moved, lower_bound=prep.lower_bound,
        topic_lower_bound=prep.topic_lower_bound, bytes_moved=bytes_moved, bytes_lower_bound=bytes_lb,
        leader_changes=leader_changes, partitions_changed=changed,
        replica_spread=_spread([after.get(b, [0])[0] for b in target_ids]), max_topic_spread=topic_spread,
        leader_spread=_spread([after.get(b, [0, 0])[1] for b in target_ids]),
        max_topic_leader_spread=leader_topic_spread, rack_violations=rack_viol,
        replicas_on_removed=sum(r[0] for b, r in after.items() if b not in targets), brokers=rows)
    report.gap_reasons = _explain(prep, report, stats, caps, leader_unbalanced)
    if caps is not None:
        report.caps = {"planned_moves": caps.planned_moves, "planned_bytes": caps.planned_bytes,
                       "dropped_moves": caps.dropped_moves, "dropped_bytes": caps.dropped_bytes}
    return report


def _explain(prep: "Prepared", report: Report, stats: Mapping[str, "TopicStats"], caps: "CapResult | None",
             leader_unbalanced: int) -> list[str]:
    reasons = []
    if prep.options.balance_by == "bytes":
        reasons.append("balancing bytes, not counts: the count lower bound does not apply")
    if report.topic_lower_bound > report.lower_bound and prep.options.balance_by == "count":
        reasons.append(f"per-topic balance needs at least {report.topic_lower_bound - report.lower_bound} "
                       f"more move(s) than overall balance alone (the topics are unevenly spread now)")
    rack_fix = sum(s.rack_fix_moves for s in stats.values())
    detours = sum(s.detour_moves for s in stats.values())
    unbalanced = sum(s.unbalanced for s in stats.values())
    if rack_fix:
        reasons.append(f"{rack_fix} move(s) only to spread partitions over min(RF, #racks) racks")
    if detours:
        reasons.append(f"{detours} replica(s) had no valid under-loaded destination (rack or replica "
                       f"constraints) and went through an at-target broker")
    if unbalanced:
        reasons.append(f"{unbalanced} replica(s) could not be balanced within the rack/replica constraints")
        for s in stats.values():
            reasons.extend(s.details[:5])
    if caps is not None and caps.dropped_moves:
        reasons.append(f"caps dropped {caps.dropped_moves} of {caps.planned_moves} planned move(s) "
                       f"({caps.dropped_bytes} bytes): the plan is partial")
    if leader_unbalanced:
        reasons.append(f"{leader_unbalanced} preferred leadership(s) could not be balanced by reordering")
    return reasons


def render_text(report: Report) -> str:
    """A plain-text summary and per-broker table (stdlib only; the CLI may render richer)."""
    lines = [
        f"planner: {report.planner} (balance by {report.balance_by})",
        f"partitions: {report.partitions}  replicas: {report.replicas}",
        f"replicas moved: {report.replicas_moved}  lower bound: {report.lower_bound}  gap: {report.gap}",
        f"bytes moved: {report.bytes_moved}  leader changes: {report.leader_changes}  "
        f"partitions changed: {report.partitions_changed}",
        f"spread after (max-min per broker): replicas {report.replica_spread}, leaders {report.leader_spread}; "
        f"worst topic: replicas {report.max_topic_spread}, leaders {report.max_topic_leader_spread}",
        f"rack violations: {report.rack_violations}  replicas left on removed brokers: {report.replicas_on_removed}",
    ]
    if report.elapsed_s is not None:
        lines.append(f"planning time: {report.elapsed_s:.2f} s")
    lines.extend(f"note: {r}" for r in report.gap_reasons)
    header = ("broker", "rack", "role", "replicas", "leaders", "bytes")
    table = [header] + [(str(r.id), r.rack or "-", r.role, f"{r.replicas_before} -> {r.replicas_after}",
                         f"{r.leaders_before} -> {r.leaders_after}", f"{r.bytes_before} -> {r.bytes_after}")
                        for r in report.brokers]
    widths = [max(len(row[c]) for row in table) for c in range(len(header))]
    lines.append("")
    lines.extend("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)
    return "\n".join(lines)
