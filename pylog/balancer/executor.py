"""The executor: a proposal carried out through KIP-455 reassignments, in capped batches.

At most num.concurrent.partition.movements.per.broker partitions move through any broker, and at most
max.num.cluster.movements in the cluster, at once. The replication throttle (default.replication.throttle,
or the request's replication_throttle) is set on the moving topics and brokers before the first batch
and cleared after the last. Preferred leaders of the moved partitions are elected at the end, in
batches of num.concurrent.leader.movements. A stop request is graceful, as Cruise Control's: nothing
new starts, the moves in flight finish, the throttles are cleared.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pylog.balancer.cluster import close_cluster, open_cluster
from pylog.cli.reassign_cluster import BrokerCluster
from pylog.cli.reassign_logic import Move, Ongoing, move_map, reassigning_brokers, topic_throttles
from pylog.cli.reassign_ops import clear_all
from pylog.common.types import TP

log = logging.getLogger("pylog.balancer")
NO_TASK = "NO_TASK_IN_PROGRESS"
REPLICA_MOVES = "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS"
LEADER_MOVES = "LEADER_MOVEMENT_TASK_IN_PROGRESS"
STOPPING = "STOPPING_EXECUTION"
ELECTION_TIMEOUT_MS = 30000


class ExecutionBusy(RuntimeError):
    """An execution is already running; Cruise Control refuses a second one."""


@dataclass
class Caps:
    """The movement caps and the throttle of one execution."""

    per_broker: int
    cluster: int
    leaders: int
    throttle: int | None
    check_interval_s: float


@dataclass
class Execution:
    """One execution's progress, as ExecutorState reports it."""

    task_id: str
    targets: dict[TP, list[int]]
    moves: dict[TP, Move]
    reason: str = ""
    pending: list[TP] = field(default_factory=list)
    in_flight: set[TP] = field(default_factory=set)
    finished: set[TP] = field(default_factory=set)
    cancelled: set[TP] = field(default_factory=set)
    state: str = REPLICA_MOVES
    error: str | None = None


def batch(pending: Sequence[TP], in_flight: set[TP], moves: Mapping[TP, Move], caps: Caps) -> list[TP]:
    """The pending partitions that may start now without exceeding the per-broker or cluster caps."""
    load = Counter(b for tp in in_flight for b in moves[tp].sources | moves[tp].destinations)
    room = caps.cluster - len(in_flight)
    chosen = []
    for tp in pending:
        if room <= 0:
            break
        involved = moves[tp].sources | moves[tp].destinations
        if all(load[b] < caps.per_broker for b in involved):
            chosen.append(tp)
            load.update(involved)
            room -= 1
    return chosen


class Executor:
    """Runs at most one execution at a time, in its own thread."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.current: Execution | None = None
        self.last: Execution | None = None
        self.recently_removed: set[int] = set()
        self.recently_demoted: set[int] = set()
        self.self_healing_task: str | None = None  # the last execution the anomaly detector started
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def busy(self) -> bool:
        """True while an execution runs."""
        return self.current is not None

    def start(self, task_id: str, changed: Mapping[TP, Sequence[int]], current: Mapping[TP, Sequence[int]],
              caps: Caps, removed: Sequence[int] = (), reason: str = "") -> Execution:
        """Begin executing a proposal in the background; ExecutionBusy if one is running."""
        with self._lock:
            if self.current is not None:
                raise ExecutionBusy("Cannot start a new execution while there is an ongoing execution "
                                    f"(triggered by user task {self.current.task_id}).")
            moves = move_map({}, changed, current)
            ex = Execution(task_id, {tp: list(r) for tp, r in changed.items()}, moves, reason,
                           pending=sorted(changed))
            self.current = ex
            self._stop.clear()
        self.recently_removed.update(removed)
        threading.Thread(target=self._run, args=(ex, caps), name=f"executor-{task_id}", daemon=True).start()
        return ex

    def adopt(self, ongoing: Mapping[TP, Ongoing], caps: Caps) -> Execution | None:
        """Follow reassignments found in flight at start (a balancer restarted mid-execution): they are
        waited for, their leaders elected and the throttle cleared, and nothing is started again."""
        if not ongoing:
            return None
        with self._lock:
            if self.current is not None:
                raise ExecutionBusy("An execution is already running.")
            ex = Execution("recovered-" + uuid.uuid4().hex, {tp: list(o.target) for tp, o in ongoing.items()},
                           move_map(ongoing, {}, {}), "Reassignments in flight when the balancer started",
                           in_flight=set(ongoing))
            self.current = ex
            self._stop.clear()
        log.warning("following %d partition reassignment(s) already in flight", len(ongoing))
        threading.Thread(target=self._run, args=(ex, caps), name=f"executor-{ex.task_id}", daemon=True).start()
        return ex

    def stop(self) -> bool:
        """Ask the running execution to stop (graceful); False if nothing runs."""
        ex = self.current
        if ex is None:
            return False
        ex.state = STOPPING
        self._stop.set()
        return True

    def _run(self, ex: Execution, caps: Caps) -> None:
        cluster = open_cluster(self.bootstrap)
        try:
            self._execute(cluster, ex, caps)
        except Exception as exc:  # the execution must end (and say why) whatever the cluster did
            log.exception("execution %s failed", ex.task_id)
            ex.error = str(exc)
        finally:
            if caps.throttle is not None:
                try:
                    clear_all(cluster, ex.targets)
                except Exception:
                    log.exception("clearing the replication throttles failed")
            close_cluster(cluster)
            log.info("execution %s %s: %d of %d partition movement(s) finished, %d cancelled%s", ex.task_id,
                     "stopped" if self._stop.is_set() else "ended", len(ex.finished), len(ex.targets),
                     len(ex.cancelled), f" (error: {ex.error})" if ex.error else "")
            ex.state = NO_TASK
            with self._lock:
                self.current, self.last = None, ex

    def _execute(self, cluster: BrokerCluster, ex: Execution, caps: Caps) -> None:
        if caps.throttle is not None and ex.pending:
            live = cluster.live_brokers()  # a dead broker (self-healing) takes no config; it sends nothing anyway
            cluster.set_throttles(topic_throttles(ex.moves), [b for b in reassigning_brokers(ex.moves) if b in live],
                                  caps.throttle)
        while ex.pending or ex.in_flight:
            ongoing = cluster.ongoing()
            ex.finished |= {tp for tp in ex.in_flight if tp not in ongoing}
            ex.in_flight = {tp for tp in ex.in_flight if tp in ongoing}
            if self._stop.is_set():
                ex.cancelled.update(ex.pending)
                ex.pending = []
            start = batch(ex.pending, ex.in_flight, ex.moves, caps)
            if start:
                errors = cluster.start({tp: ex.targets[tp] for tp in start})
                if errors:
                    raise RuntimeError("; ".join(f"{t}-{p}: {m}" for (t, p), m in sorted(errors.items())))
                ex.in_flight.update(start)
                ex.pending = [tp for tp in ex.pending if tp not in set(start)]
                log.info("execution %s: started %d partition movement(s)", ex.task_id, len(start))
                continue
            if ex.in_flight:
                time.sleep(caps.check_interval_s)
        if self._stop.is_set():
            return
        ex.state = LEADER_MOVES
        moved = sorted(ex.finished)
        for i in range(0, len(moved), caps.leaders):
            _, failed = cluster.elect_preferred(moved[i:i + caps.leaders], ELECTION_TIMEOUT_MS)
            for (t, p), msg in sorted(failed.items()):
                log.warning("preferred leader election for %s-%d failed: %s", t, p, msg)

    def state(self, verbose: bool = False) -> dict:
        """ExecutorState as Cruise Control reports it."""
        ex = self.current
        body: dict = {"state": NO_TASK if ex is None else ex.state,
                      "recentlyRemovedBrokers": sorted(self.recently_removed),
                      "recentlyDemotedBrokers": sorted(self.recently_demoted)}
        if ex is None:
            if self.last is not None and self.last.error:
                body["lastExecutionError"] = self.last.error
            return body
        healing = ex.task_id == self.self_healing_task
        body.update({"triggeredUserTaskId": "" if healing else ex.task_id,
                     "triggeredSelfHealingTaskId": ex.task_id if healing else "", "triggeredTaskReason": ex.reason,
                     "numTotalPartitionMovements": len(ex.targets), "numPendingPartitionMovements": len(ex.pending),
                     "numInProgressPartitionMovements": len(ex.in_flight),
                     "numFinishedPartitionMovements": len(ex.finished),
                     "numCancelledPartitionMovements": len(ex.cancelled)})
        if verbose:
            body["inProgressPartitionMovement"] = [f"{t}-{p}" for t, p in sorted(ex.in_flight)]
        return body
