"""--execute, --verify, --cancel and --list (ReassignPartitionsCommand 3.3; 2.8's checks through ZooKeeper).

Every check runs before anything is written, so refused input changes nothing. Throttles are set
as Kafka's tool sets them: per topic the throttled-replica lists (sources for the leader side, new
replicas for the follower side) and on every broker that sends or receives data the leader and
follower rates; --verify and --cancel clear them once no reassignment is left in the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pylog.cli import render
from pylog.cli.admin_client import BrokerAdmin
from pylog.cli.common import CliError, OperationError, output_format
from pylog.cli.reassign_cluster import ZK_ADDITIONAL_BLOCKED, ClusterView, missing_partitions
from pylog.cli.reassign_logic import (CANNOT_EXECUTE_MESSAGE, LOG_DIRS_NEED_BOOTSTRAP, TP, TPR, Ongoing,
                                      cancellable, move_map, name, names, parse_log_dirs, parse_targets,
                                      parse_verify_targets, partition_state, reassigning_brokers, topic_throttles)
from pylog.cli.reassign_moves import execute_moves, move_states, set_log_dir_throttle
from pylog.cli.reassign_generate import as_reassignment
from pylog.cli.reassign_results import (OngoingPartition, PartitionStatus, ReassignmentCancelled,
                                        ReassignmentList, ReassignmentStarted, ReassignmentStatus,
                                        ThrottlesCleared, TopicThrottle)
from pylog.cli.reassign_wait import follow

ZK = "zookeeper"


@dataclass(frozen=True)
class ExecuteOptions:
    """--execute's flags."""

    additional: bool = False
    throttle: int = -1
    log_dir_throttle: int = -1
    wait: bool = False
    wait_timeout_s: float | None = None
    preserve_throttles: bool = False
    timeout_ms: int = 10000  # --timeout: how long log-dir moves may take to start


def _check_brokers(cluster: ClusterView, targets: Mapping[TP, Sequence[int]], live: set[int]) -> None:
    unknown = sorted({b for reps in targets.values() for b in reps} - live)
    if not unknown:
        return
    if cluster.via == ZK:  # 2.8's verifyReplicasAndBrokersInAssignment
        raise OperationError(f"The proposed assignment contains non-existent brokerIDs: {','.join(map(str, unknown))}")
    raise OperationError(f"Unknown broker id {unknown[0]}")  # 3.3's verifyBrokerIds


def _check_partitions(cluster: ClusterView, targets: Mapping[TP, Sequence[int]],
                      current: Mapping[TP, Sequence[int]]) -> None:
    missing = missing_partitions(targets, current)
    if not missing:
        return
    topics = {tp[0] for tp, _ in current.items()}
    absent = sorted({tp[0] for tp in targets} - topics)
    if absent and cluster.via != ZK:  # 3.3: describeTopics fails for the topic
        raise OperationError(f"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                             f"Topic {absent[0]} not found.")
    raise OperationError(f"The proposed assignment contains non-existent partitions: List({', '.join(missing)})")


def _emit_and_fail(result: object, message: str) -> None:
    """Print what Kafka had printed by then, then fail with its message (no 'Error: ' prefix)."""
    render.emit(result, output_format())
    raise CliError(message)


def execute(cluster: ClusterView, text: str, opts: ExecuteOptions) -> ReassignmentStarted:
    """executeAssignment: check, print the current replicas, set throttles, start, and maybe wait."""
    targets = parse_targets(text)
    log_dirs = parse_log_dirs(text)
    admin = _log_dir_admin(cluster, log_dirs)
    ongoing = cluster.ongoing()
    pending = cluster.pending()
    if cluster.via == ZK and pending and opts.additional:
        raise OperationError(ZK_ADDITIONAL_BLOCKED)
    if (ongoing or pending) and not opts.additional:
        raise CliError(CANNOT_EXECUTE_MESSAGE)
    live = set(cluster.live_brokers())
    if cluster.via == ZK:
        current = cluster.assignments({tp[0] for tp in targets})
        _check_partitions(cluster, targets, current)
        _check_brokers(cluster, targets, live)
    else:
        _check_brokers(cluster, targets, live)
        current = cluster.assignments({tp[0] for tp in targets})
        _check_partitions(cluster, targets, current)
    result = ReassignmentStarted(as_reassignment({tp: current[tp] for tp in targets}), names(targets),
                                 None, [], [], cluster.via)
    moves = move_map(ongoing, targets, current)
    if opts.throttle >= 0:
        throttles = topic_throttles(moves)
        brokers = reassigning_brokers(moves)
        cluster.set_throttles(throttles, brokers, opts.throttle)
        result.throttle = opts.throttle
        result.throttled_brokers = brokers
        result.throttled_topics = [TopicThrottle(t, lead, follow_) for t, (lead, follow_) in throttles.items()]
    if opts.log_dir_throttle >= 0:  # on the brokers with log-dir moves (none: Kafka prints its line all the same)
        if admin is not None:
            set_log_dir_throttle(admin, log_dirs, opts.log_dir_throttle)
        result.log_dir_throttle = opts.log_dir_throttle
    errors = cluster.start(targets)
    if errors:
        result.failed = {name(tp): errors[tp] for tp in sorted(errors)}
        result.partitions = names(set(targets) - set(errors))
        _emit_and_fail(result, "Error reassigning partition(s):\n" + "\n".join(
            f"{name(tp)}: {errors[tp]}" for tp in sorted(errors)))
    if admin is not None:
        _start_moves(result, admin, log_dirs, opts.timeout_ms)
    if opts.wait:
        # The rollback JSON must reach the operator before a wait that may time out or be interrupted:
        # Kafka's text is printed now, and a JSON document is still printed if the wait fails.
        fmt = output_format()
        if fmt == "text":
            render.emit(result, fmt)
        try:
            follow(cluster, {tp: (sorted(moves[tp].sources), sorted(moves[tp].destinations)) for tp in targets},
                   opts.wait_timeout_s)
        except OperationError:
            if fmt != "text":
                render.emit(result, fmt)
            raise
        result.waited = verify_targets(cluster, targets, opts.preserve_throttles, log_dirs)
        if fmt == "text":
            return result.waited  # only the --verify lines are left to print
    return result



def clear_all(cluster: ClusterView, targets: Mapping[TP, Sequence[int]]) -> ThrottlesCleared:
    """clearAllThrottles: every live broker plus the targets' replicas, and the targets' topics."""
    brokers = sorted(set(cluster.live_brokers()) | {b for reps in targets.values() for b in reps})
    topics = sorted({tp[0] for tp in targets})
    cluster.clear_throttles(brokers, topics)
    return ThrottlesCleared(brokers, topics)


def _log_dir_admin(cluster: ClusterView, log_dirs: Mapping[TPR, str]) -> BrokerAdmin | None:
    """Where the log-dir moves go; refused through ZooKeeper, as Kafka refuses them."""
    if not log_dirs:
        return None
    admin = cluster.log_dir_admin()
    if admin is None:
        raise OperationError(LOG_DIRS_NEED_BOOTSTRAP)
    return admin


def _start_moves(result: ReassignmentStarted, admin: BrokerAdmin, log_dirs: Mapping[TPR, str],
                 timeout_ms: int) -> None:
    """executeMoves after the reassignments started; on failure what was done is printed first."""
    try:
        result.log_dir_moves = execute_moves(admin, log_dirs, timeout_ms)
    except CliError as exc:  # timed out: Kafka's terse message after the moves that did start
        _emit_and_fail(result, exc.format_message())
    except OperationError as exc:
        _emit_and_fail(result, f"Error: {exc}")


def verify_targets(cluster: ClusterView, targets: Mapping[TP, Sequence[int]],
                   preserve_throttles: bool, log_dirs: Mapping[TPR, str] | None = None) -> ReassignmentStatus:
    """verifyAssignment: each partition's state; throttles cleared once nothing is in flight anywhere."""
    admin = _log_dir_admin(cluster, log_dirs or {})
    ongoing: dict[TP, Ongoing] = cluster.ongoing()
    pending = cluster.pending()
    current = cluster.assignments({tp[0] for tp in targets if tp not in ongoing})
    statuses = []
    for tp in sorted(targets):
        in_flight = ongoing.get(tp)
        if in_flight is None and tp in pending:
            in_flight = Ongoing(tuple(current.get(tp, ())), (), ())
        now = list(in_flight.replicas) if in_flight else current.get(tp, [])
        statuses.append(PartitionStatus(name(tp), partition_state(in_flight, now, targets[tp]), now,
                                        list(targets[tp])))
    move_lines, moving = move_states(admin, log_dirs) if admin is not None and log_dirs else ([], False)
    busy = bool(ongoing or pending)
    cleared = None if busy or moving or preserve_throttles else clear_all(cluster, targets)
    return ReassignmentStatus(statuses, busy, cleared, cluster.via, move_lines)


def verify(cluster: ClusterView, text: str, preserve_throttles: bool) -> ReassignmentStatus:
    """The --verify action."""
    return verify_targets(cluster, parse_verify_targets(text), preserve_throttles, parse_log_dirs(text))


def cancel(cluster: ClusterView, text: str, preserve_throttles: bool, timeout_ms: int = 10000
           ) -> ReassignmentCancelled:
    """cancelAssignment: revert the listed partitions that are moving and the listed log-dir moves in
    progress (each replica is asked back to its current dir), then clear throttles."""
    targets = parse_verify_targets(text)
    log_dirs = parse_log_dirs(text)
    admin = _log_dir_admin(cluster, log_dirs)
    to_cancel = cancellable(cluster.ongoing(), targets)
    if to_cancel:
        errors = cluster.cancel(to_cancel)
        if errors:
            raise CliError(f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n" +
                           "\n".join(f"{name(tp)}: {errors[tp]}" for tp in sorted(errors)))
    moves_back: dict[TPR, str] = {}
    if admin is not None:
        moves_back = {r: current for r, (current, future) in admin.replica_log_dirs(log_dirs).items()
                      if r in log_dirs and current is not None and future is not None}
    lines = execute_moves(admin, moves_back, timeout_ms) if admin is not None and moves_back else []
    cleared = None if preserve_throttles else clear_all(cluster, targets)
    return ReassignmentCancelled(names(to_cancel), cleared, cluster.via, lines)


def list_reassignments(cluster: ClusterView) -> ReassignmentList:
    """--list: what is in flight, sorted."""
    ongoing = cluster.ongoing()
    return ReassignmentList([OngoingPartition(name(tp), list(o.replicas), list(o.adding), list(o.removing))
                             for tp, o in sorted(ongoing.items())], cluster.via)
