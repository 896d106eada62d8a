"""pylog-reassign-partitions' and pylog-alter-cluster's results, and their Kafka text and tables.

Texts are ReassignPartitionsCommand's: 3.3's through a broker, 2.8's --zookeeper variants through
ZooKeeper ("is complete." rather than "is completed.", no blank replica-move line in --verify).
The renderers register with render.py's text()/table(), so --output json/table work as for every
command; JSON is the dataclass itself, carrying the same facts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pylog.cli import render
from pylog.cli.reassign_logic import COMPLETED, IN_PROGRESS, VERIFY_WARNING
from pylog.planner.report import BrokerRow, Report, render_text

ZK = "zookeeper"


def reassignment_json(assignment: dict) -> str:
    """A {"version":1,"partitions":[...]} document as Kafka prints it (compact)."""
    return json.dumps(assignment, separators=(",", ":"))


@dataclass
class ThrottlesCleared:
    """clearAllThrottles: the brokers and topics whose throttle configs were removed."""

    brokers: list[int]
    topics: list[str]


@dataclass
class GeneratedPlan:
    """--generate: Kafka's current and proposed reassignment documents, plus the plan's report."""

    current: dict
    proposed: dict
    planner: str
    report: dict | None
    via: str


@dataclass
class TopicThrottle:
    """The throttled-replica lists --execute set on one topic."""

    topic: str
    leader_replicas: str
    follower_replicas: str


@dataclass
class PartitionStatus:
    """One partition in --verify: completed, in_progress or not_reassigned (done, other replicas)."""

    partition: str
    state: str
    current_replicas: list[int]
    target_replicas: list[int]


@dataclass
class ReassignmentStatus:
    """--verify (and --execute --wait's final check). ongoing: any reassignment in the cluster."""

    partitions: list[PartitionStatus]
    ongoing: bool
    cleared: ThrottlesCleared | None
    via: str
    log_dir_moves: list[str] = field(default_factory=list)  # replicaMoveStatesToString's lines


@dataclass
class ReassignmentStarted:
    """--execute: the current replicas (for rollback), what was started and the throttles set."""

    current: dict
    partitions: list[str]
    throttle: int | None
    throttled_brokers: list[int]
    throttled_topics: list[TopicThrottle]
    via: str
    log_dir_throttle: int | None = None
    failed: dict[str, str] = field(default_factory=dict)   # partition -> the controller's error message
    waited: ReassignmentStatus | None = None
    log_dir_moves: list[str] = field(default_factory=list)  # "Successfully started log directory move(s)" lines


@dataclass
class ReassignmentCancelled:
    """--cancel: the partitions whose reassignment was reverted to the original replicas."""

    cancelled: list[str]
    cleared: ThrottlesCleared | None
    via: str
    log_dir_moves: list[str] = field(default_factory=list)  # moves cancelled by starting them back home


@dataclass
class OngoingPartition:
    """One --list line."""

    partition: str
    replicas: list[int]
    adding: list[int]
    removing: list[int]


@dataclass
class ReassignmentList:
    """--list: the reassignments in flight."""

    reassignments: list[OngoingPartition]
    via: str


@dataclass
class SnapshotExported:
    """--export-snapshot: what the written cluster snapshot holds."""

    path: str
    brokers: int
    partitions: int
    sizes_known: bool
    via: str


def report_text(report: dict) -> str:
    """The planner's plain-text report, from the report's JSON form."""
    fields = {k: v for k, v in report.items() if k != "gap"}
    fields["brokers"] = [BrokerRow(**b) for b in report["brokers"]]
    return render_text(Report(**fields))


def _ids(ids: list[int]) -> str:
    return ",".join(map(str, ids))


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def cleared_lines(c: ThrottlesCleared | None) -> list[str]:
    """clearAllThrottles' two lines."""
    if c is None:
        return []
    return [f"Clearing broker-level throttles on broker{_plural(len(c.brokers))} {_ids(c.brokers)}",
            f"Clearing topic-level throttles on topic{_plural(len(c.topics))} {','.join(c.topics)}"]


def status_lines(r: ReassignmentStatus) -> list[str]:
    """partitionReassignmentStatesToString (2.8 says 'is complete.', 3.3 'is completed.')."""
    done = "complete" if r.via == ZK else "completed"
    lines = ["Status of partition reassignment:"]
    for p in r.partitions:
        if p.state == COMPLETED:
            lines.append(f"Reassignment of partition {p.partition} is {done}.")
        elif p.state == IN_PROGRESS:
            lines.append(f"Reassignment of partition {p.partition} is still in progress.")
        else:
            lines.append(f"There is no active reassignment of partition {p.partition}, but replica set is "
                         f"{_ids(p.current_replicas)} rather than {_ids(p.target_replicas)}.")
    if r.via != ZK:
        lines += r.log_dir_moves or [""]  # 3.x prints the replica log-dir move summary, empty or not
    return lines + cleared_lines(r.cleared)


@render.text.register
def _(r: GeneratedPlan) -> list[str]:
    return ["Current partition replica assignment", reassignment_json(r.current), "",
            "Proposed partition reassignment configuration", reassignment_json(r.proposed)]


@render.text.register
def _(r: ReassignmentStarted) -> list[str]:
    lines = ["Current partition replica assignment", "", reassignment_json(r.current), "",
             "Save this to use as the --reassignment-json-file option during rollback"]
    if r.throttle is not None or r.log_dir_throttle is not None:
        lines.append(VERIFY_WARNING)
    if r.throttle is not None:
        lines.append(f"The inter-broker throttle limit was set to {r.throttle} B/s")
    if r.log_dir_throttle is not None:
        lines.append(f"The replica-alter-dir throttle limit was set to {r.log_dir_throttle} B/s")
    if not r.failed:
        lines.append(f"Successfully started partition reassignment{_plural(len(r.partitions))} for "
                     f"{','.join(r.partitions)}")
    lines += r.log_dir_moves
    if r.waited is not None:
        lines += status_lines(r.waited)
    return lines


@render.text.register
def _(r: ReassignmentStatus) -> list[str]:
    return status_lines(r)


@render.text.register
def _(r: ReassignmentCancelled) -> list[str]:
    if r.cancelled:
        lines = [f"Successfully cancelled partition reassignment{_plural(len(r.cancelled))} for: "
                 f"{','.join(r.cancelled)}"]
    else:
        lines = ["None of the specified partition reassignments are active."]
    return lines + (r.log_dir_moves or ["None of the specified partition moves are active."]) + \
        cleared_lines(r.cleared)


@render.text.register
def _(r: ReassignmentList) -> list[str]:
    if not r.reassignments:
        return ["No partition reassignments found."]
    lines = ["Current partition reassignments:"]
    for o in r.reassignments:
        adding = f" adding: {_ids(o.adding)}." if o.adding else ""
        removing = f" removing: {_ids(o.removing)}." if o.removing else ""
        lines.append(f"{o.partition}: replicas: {_ids(o.replicas)}.{adding}{removing}")
    return lines


@render.text.register
def _(r: SnapshotExported) -> list[str]:
    sizes = "with" if r.sizes_known else "without"
    return [f"Wrote a cluster snapshot of {r.brokers} broker{_plural(r.brokers)} and {r.partitions} "
            f"partition{_plural(r.partitions)} ({sizes} partition sizes) to {r.path}"]


# ---------------------------------------------------------------- tables

def _changes_table(current: dict, proposed: dict) -> Any:
    before = {(p["topic"], p["partition"]): p["replicas"] for p in current["partitions"]}
    rows = []
    for p in proposed["partitions"]:
        old = before.get((p["topic"], p["partition"]), [])
        if old != p["replicas"]:
            moved = sorted(set(p["replicas"]) - set(old))
            rows.append([f"{p['topic']}-{p['partition']}", _ids(old), _ids(p["replicas"]), _ids(moved)])
    return render.make_table("Proposed changes", ["Partition", "Current", "Proposed", "New replicas"], rows)


def report_tables(report: dict) -> list[Any]:
    """The plan report: a summary and the per-broker counts before and after."""
    summary = [["replicas moved", f"{report['replicas_moved']} (lower bound {report['lower_bound']})"],
               ["bytes moved", str(report["bytes_moved"])], ["leader changes", f"{report['leader_changes']} (bound {report['leader_bound']})"],
               ["partitions changed", str(report["partitions_changed"])],
               ["spread after", f"replicas {report['replica_spread']}, leaders {report['leader_spread']}"]]
    summary += [["note", reason] for reason in report.get("gap_reasons", [])]
    brokers = [[str(b["id"]), b["rack"] or "", b["role"], f"{b['replicas_before']} -> {b['replicas_after']}",
                f"{b['leaders_before']} -> {b['leaders_after']}", f"{b['bytes_before']} -> {b['bytes_after']}"]
               for b in report["brokers"]]
    return [render.make_table(f"Plan ({report['planner']})", ["", ""], summary),
            render.make_table("Brokers", ["Broker", "Rack", "Role", "Replicas", "Leaders", "Bytes"], brokers)]


@render.table.register
def _(r: GeneratedPlan) -> None:
    console = render.make_console()
    console.print(_changes_table(r.current, r.proposed))
    for t in report_tables(r.report) if r.report else []:
        console.print(t)


@render.table.register
def _(r: ReassignmentList) -> None:
    rows = [[o.partition, _ids(o.replicas), _ids(o.adding), _ids(o.removing)] for o in r.reassignments]
    render.make_console().print(render.make_table("Partition reassignments in progress",
                                          ["Partition", "Replicas", "Adding", "Removing"], rows))


@render.table.register
def _(r: ReassignmentStatus) -> None:
    rows = [[p.partition, p.state.replace("_", " "), _ids(p.current_replicas), _ids(p.target_replicas)]
            for p in r.partitions]
    render.make_console().print(render.make_table("Status of partition reassignment",
                                          ["Partition", "State", "Current", "Target"], rows))
    for line in cleared_lines(r.cleared):
        render.make_console().print(line)
