"""pylog-alter-cluster: seed 000's `alter cluster add brokers 3,4` / `alter cluster remove brokers 1`.

--add-brokers: the brokers must be registered (started with their broker.id); the minimal-movement
planner balances replicas and preferred leaders over the brokers that hold replicas plus the added ones
(other registered brokers are left alone); the plan runs as a
reassignment (optionally --throttle'd), the tool waits for it with a progress bar (or --no-wait)
and then elects the preferred leaders it moved, so leadership reaches the new brokers too.

--remove-brokers: every replica leaves the brokers with the fewest moves that keep the rest balanced
(refused if the remaining brokers cannot hold a topic's replication factor); then each removed
broker is asked to shut down through ZooKeeper (/admin/shutdown_brokers/<id>, naming its
registration epoch). The broker runs its controlled shutdown and exits, so it stops serving and
its /brokers/ids registration goes away; the tool waits for that. A process cannot be signalled
remotely, and the request is one-shot: restarting the broker later brings it back as an empty one.
Through --bootstrap-server the ZooKeeper address is read from the broker's own zookeeper.connect.

--dry-run prints the plan and its cost (moves against the lower bound, bytes, per-broker counts
before and after) and changes nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import click

from pylog.cli import render
from pylog.cli.admin_client import BROKER_RESOURCE
from pylog.cli.common import (OperationError, command, open_admin, open_zk, output_format, require_target,
                              target_options)
from pylog.cli.reassign_cluster import BrokerCluster, ClusterView, ZkCluster
from pylog.cli.reassign_generate import as_reassignment
from pylog.cli.reassign_logic import TP, move_map, names, reassigning_brokers, topic_throttles
from pylog.cli.reassign_ops import clear_all
from pylog.cli.reassign_results import (ThrottlesCleared, cleared_lines, report_tables, report_text,
                                        reassignment_json)
from pylog.cli.reassign_wait import follow, step
from pylog.planner.model import PlanError, PlanOptions
from pylog.planner.plan import plan_reassignment
from pylog.planner.report import Report
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs_admin import ShutdownRequest
from pylog.zk.errors import NodeExistsError, NoNodeError

ELECTION_TIMEOUT_MS = 30000


@dataclass
class ClusterAltered:
    """What pylog-alter-cluster planned and did."""

    action: str                      # "add" or "remove"
    brokers: list[int]               # the brokers added or removed
    dry_run: bool
    proposed: dict                   # the reassignment document of the partitions that change
    report: dict                     # the plan's cost: moves against the lower bound, bytes, per-broker counts
    via: str
    started: list[str] = field(default_factory=list)
    completed: bool = False
    throttle: int | None = None
    leaders_elected: list[str] = field(default_factory=list)
    leader_failures: dict[str, str] = field(default_factory=dict)
    cleared: ThrottlesCleared | None = None
    shut_down: list[int] = field(default_factory=list)
    failure: str | None = None


def _ids(ids: list[int]) -> str:
    return ",".join(map(str, ids))


def _outcome_lines(r: ClusterAltered) -> list[str]:
    """What was done, after the plan."""
    if r.dry_run:
        return ["Dry run: nothing was changed."]
    lines = []
    if r.throttle is not None:
        lines.append(f"The inter-broker throttle limit was set to {r.throttle} B/s")
    if r.started:
        lines.append(f"Successfully started partition reassignment{'s' if len(r.started) > 1 else ''} for "
                     f"{','.join(r.started)}")
        lines.append(f"Reassignment of {len(r.started)} partition(s) completed." if r.completed else
                     "Still in progress: follow it with pylog-reassign-partitions --list, and --verify it to clear "
                     "the throttle.")
    lines += cleared_lines(r.cleared)
    if r.leaders_elected:
        lines.append(f"Successfully completed leader election (PREFERRED) for partitions "
                     f"{', '.join(r.leaders_elected)}")
    lines += [f"Error completing leader election (PREFERRED) for partition: {p}: {m}"
              for p, m in r.leader_failures.items()]
    return lines + [f"Broker {b} shut down and deregistered." for b in r.shut_down]


@render.text.register
def _(r: ClusterAltered) -> list[str]:
    n = r.report
    lines = [f"Plan to {r.action} broker{'s' if len(r.brokers) > 1 else ''} {_ids(r.brokers)}: "
             f"{n['replicas_moved']} replica move(s) (lower bound {n['lower_bound']}), {n['bytes_moved']} bytes to "
             f"copy, {n['leader_changes']} preferred leader change(s)"]
    if r.proposed["partitions"]:
        lines += ["Proposed partition reassignment configuration", reassignment_json(r.proposed)]
    else:
        lines.append("No partition needs to move.")
    return lines + ["", report_text(r.report), ""] + _outcome_lines(r)


@render.table.register
def _(r: ClusterAltered) -> None:
    console = render.make_console()
    for t in report_tables(r.report):
        console.print(t)
    for line in _outcome_lines(r):
        console.print(line)


def cluster_brokers(cluster: ClusterView, current: dict[TP, list[int]]) -> tuple[dict[int, str | None], set[int]]:
    """(live brokers with racks, every broker that is live or holds a replica)."""
    live = cluster.live_brokers()
    return live, set(live) | {b for reps in current.values() for b in reps}


def choose_targets(action: str, ids: list[int], live: dict[int, str | None], known: set[int],
                   current: dict[TP, list[int]]) -> list[int]:
    """The brokers the cluster should end up on, with the refusals an operator needs to read."""
    if len(set(ids)) != len(ids):
        dups = sorted({b for b in ids if ids.count(b) > 1})
        raise OperationError(f"Broker list contains duplicate entries: {_ids(dups)}")
    if action == "add":
        missing = sorted(set(ids) - set(live))
        if missing:
            raise OperationError(f"Broker(s) {_ids(missing)} are not registered: start them (with their broker.id) "
                                 f"before adding them")
        # Registered brokers that hold nothing and were not named stay out of the plan.
        targets = sorted({b for reps in current.values() for b in reps} | set(ids))
    else:
        unknown = sorted(set(ids) - known)
        if unknown:
            raise OperationError(f"Broker(s) {_ids(unknown)} are not part of the cluster")
        targets = sorted(known - set(ids))
        rf = {}
        for (topic, _), reps in current.items():
            rf[topic] = max(rf.get(topic, 0), len(reps))
        too_big = sorted((r, t) for t, r in rf.items() if r > len(targets))
        if too_big:
            r, t = too_big[-1]
            raise OperationError(f"Cannot remove broker(s) {_ids(ids)}: the remaining {len(targets)} broker(s) cannot "
                                 f"hold topic {t}'s replication factor {r}")
    down = sorted(set(targets) - set(live))
    if down:
        raise OperationError(f"Broker(s) {_ids(down)} hold replicas but are not registered; start them again, or "
                             f"remove them, before altering the cluster")
    return targets


def _zk_for_shutdown(cluster: ClusterView, broker: int) -> ZkClient:
    if isinstance(cluster, ZkCluster):
        return cluster.zk
    assert isinstance(cluster, BrokerCluster)
    configs = cluster.admin.describe_configs([(BROKER_RESOURCE, str(broker))])[(BROKER_RESOURCE, str(broker))]
    connect = next((c.value for c in configs if c.name == "zookeeper.connect"), None)
    if not connect:
        raise OperationError(f"Broker {broker} does not report its zookeeper.connect; use --zookeeper")
    return open_zk(connect)


def shut_down(cluster: ClusterView, broker: int, timeout_s: float) -> bool:
    """Ask a broker that holds nothing to shut down; True once its registration is gone (False: not running)."""
    if any(broker in reps for reps in cluster.assignments(None).values()):
        raise OperationError(f"Broker {broker} still holds replicas; not shutting it down")
    if broker not in cluster.live_brokers():
        return False
    zk = _zk_for_shutdown(cluster, broker)
    registered = zk.get_broker(broker)
    if registered is None:
        return False
    path = paths.shutdown_broker(broker)
    data = ShutdownRequest(registered.epoch).encode()
    try:
        zk.create(path, data, make_parents=True)
    except NodeExistsError:
        zk.set(path, data)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            now = zk.get_broker(broker)
            if now is None or now.epoch != registered.epoch:
                return True
            if time.monotonic() >= deadline:
                raise OperationError(f"Broker {broker} did not shut down within {timeout_s:g} s of the request in "
                                     f"{path} (is it a pylog broker, and alive?)")
            time.sleep(0.2)
    finally:
        try:
            zk.delete(path)  # the broker deletes it when it acts; never leave one behind
        except NoNodeError:
            pass


def alter(cluster: ClusterView, action: str, ids: list[int], opts: dict[str, Any]) -> ClusterAltered:
    """Plan, and unless --dry-run execute, wait, elect and (for removals) shut the brokers down."""
    if cluster.ongoing() or cluster.pending():
        raise OperationError("A partition reassignment is in progress; let it finish first "
                             "(pylog-reassign-partitions --list shows it)")
    current = cluster.assignments(None)
    live, known = cluster_brokers(cluster, current)
    targets = choose_targets(action, ids, live, known, current)
    try:
        plan = plan_reassignment(cluster.snapshot(None), None, targets,
                                 PlanOptions(rack_aware=not opts["disable_rack_aware"]))
    except PlanError as exc:
        raise OperationError(str(exc)) from None
    changed = plan.changed()
    report: Report = plan.report
    result = ClusterAltered(action, sorted(ids), opts["dry_run"], as_reassignment(changed), report.to_dict(),
                            cluster.via)
    if opts["dry_run"]:
        return result
    moves = move_map({}, changed, current)
    if changed:
        if opts["throttle"] >= 0:
            cluster.set_throttles(topic_throttles(moves), reassigning_brokers(moves), opts["throttle"])
            result.throttle = opts["throttle"]
        errors = cluster.start(changed)
        if errors:
            raise OperationError("Error reassigning partition(s): " + "; ".join(
                f"{t}-{p}: {m}" for (t, p), m in sorted(errors.items())))
        result.started = names(changed)
        step(f"Started the reassignment of {len(changed)} partition(s)")
        if opts["no_wait"]:
            return result
        try:
            follow(cluster, {tp: (sorted(m.sources), sorted(m.destinations)) for tp, m in moves.items()},
                   opts["wait_timeout"])
        except (OperationError, KeyboardInterrupt):
            # The moves go on: show what was started (the plan is what --verify needs), then fail.
            render.emit(result, output_format())
            raise
        result.completed = True
        if result.throttle is not None and not cluster.ongoing():
            result.cleared = clear_all(cluster, changed)
        step("Electing the preferred leaders of the moved partitions")
        elected, failed = cluster.elect_preferred(sorted(changed), ELECTION_TIMEOUT_MS)
        result.leaders_elected = names(elected)
        result.leader_failures = {f"{t}-{p}": m for (t, p), m in sorted(failed.items())}
    if action == "remove":
        result.shut_down = []
        for b in sorted(ids):
            step(f"Shutting down broker {b}")
            if shut_down(cluster, b, opts["shutdown_timeout"]):
                result.shut_down.append(b)
    if result.leader_failures:
        result.failure = f"{len(result.leader_failures)} preferred leader(s) could not be elected"
    return result


def _broker_ids(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.UsageError(f"Invalid broker list: {text} (expected ids like 3,4)") from None


@command("pylog-alter-cluster", help=(
    "Add brokers to the cluster or remove them (seed 000's `alter cluster add/remove brokers`), moving the "
    "fewest replicas that keep the brokers balanced.\n\n"
    "--remove-brokers shuts each removed broker down once it holds nothing (a request it reads in ZooKeeper), so "
    "it stops serving and its registration goes."))
@target_options
@click.option("--add-brokers", metavar="3,4", help="Registered brokers to move replicas and leaders onto.")
@click.option("--remove-brokers", metavar="1", help="Brokers to empty and then shut down.")
@click.option("--throttle", type=int, default=-1, show_default=True,
              help="Throttle the replication of the moving replicas to this many bytes/s.")
@click.option("--dry-run", is_flag=True, help="Print the plan and its cost; change nothing.")
@click.option("--no-wait", is_flag=True, help="With --add-brokers: start the moves and return.")
@click.option("--wait-timeout", type=click.FloatRange(min=0), metavar="SECONDS",
              help="Give up waiting for the moves after this long (they continue).")
@click.option("--shutdown-timeout", type=click.FloatRange(min=0), default=120, show_default=True,
              metavar="SECONDS", help="How long a removed broker may take to shut down.")
@click.option("--disable-rack-aware", is_flag=True, help="Ignore the brokers' racks.")
def alter_cluster_command(zookeeper: str | None, bootstrap_server: str | None, **opts: Any) -> Any:
    """The pylog-alter-cluster command."""
    target = require_target(zookeeper, bootstrap_server)
    if bool(opts["add_brokers"]) == bool(opts["remove_brokers"]):
        raise click.UsageError("Command must include exactly one action: --add-brokers, --remove-brokers")
    action = "add" if opts["add_brokers"] else "remove"
    ids = _broker_ids(opts["add_brokers"] or opts["remove_brokers"])
    if not ids:
        raise click.UsageError("The broker list is empty")
    if action == "remove" and opts["no_wait"]:
        raise click.UsageError("--no-wait is only for --add-brokers: a removed broker is shut down once it is empty")
    if target.zookeeper:
        cluster: ClusterView = ZkCluster(open_zk(target.zookeeper))
        click.get_current_context().call_on_close(cluster.close)
    else:
        cluster = BrokerCluster(open_admin(target.bootstrap_server or ""))
    return alter(cluster, action, ids, opts)


def main() -> None:
    """Console entry point (bin/pylog-alter-cluster.sh)."""
    alter_cluster_command.main(prog_name="pylog-alter-cluster")


if __name__ == "__main__":
    main()
