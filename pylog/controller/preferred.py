"""Replica leader elections on request: /admin/preferred_replica_election and ElectLeaders (KIP-460).

Kafka's KafkaController.processReplicaLeaderElection, in ZooKeeper mode:
* PREFERRED is needed only where the leader is not the first assigned replica; it elects that
  replica if it is live and in the ISR, else the partition gets PREFERRED_LEADER_NOT_AVAILABLE.
* UNCLEAN is needed only where there is no live leader; it elects the first live ISR replica, or
  (this being an explicit operator request) the first live replica even outside the ISR, else
  ELIGIBLE_LEADERS_NOT_AVAILABLE.
* Partitions that need nothing get ELECTION_NOT_NEEDED, unknown ones UNKNOWN_TOPIC_OR_PARTITION
  ("The partition does not exist."), partitions of topics being deleted INVALID_TOPIC_EXCEPTION.
* The znode is acted on when it is created (or found at failover) and deleted when done; the
  automatic rebalance uses the same election without touching it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import AbstractSet, Iterable, Mapping, Sequence

from pylog.common.types import TP
from pylog.controller import election as elect
from pylog.controller.admin_znodes import CreationWatch
from pylog.controller.context import Assignment
from pylog.controller.core import ControllerCore, ControllerListener
from pylog.controller.partitions import PartitionChanges
from pylog.protocol.errors import ErrorCode
from pylog.zk import paths
from pylog.zk.codecs import PartitionState

log = logging.getLogger("pylog.controller")

PREFERRED, UNCLEAN = 0, 1
ELECTION_TYPES = {PREFERRED: "PREFERRED", UNCLEAN: "UNCLEAN"}
# Kafka's strategy names, as its StateChangeFailedException message prints them.
_STRATEGY_NAMES = {PREFERRED: "PreferredReplicaPartitionLeaderElectionStrategy",
                   UNCLEAN: "OfflinePartitionLeaderElectionStrategy(true)"}


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """One partition's outcome: the error (NONE when elected), Kafka's message, the new leader."""

    error: ErrorCode
    message: str | None = None
    leader: int = -1


def election_needed(election_type: int, replicas: Sequence[int], leader: int, live: AbstractSet[int]) -> bool:
    """Whether a partition needs the election at all (else ELECTION_NOT_NEEDED)."""
    if election_type == PREFERRED:
        return bool(replicas) and leader != replicas[0]
    return leader < 0 or leader not in live


def classify(tps: Iterable[TP], election_type: int, assignments: Mapping[TP, Assignment],
             leaders: Mapping[TP, int], deleting: AbstractSet[str],
             live: AbstractSet[int]) -> tuple[list[TP], dict[TP, ElectionResult]]:
    """Split requested partitions into those to elect and those answered right away (pure)."""
    to_elect: list[TP] = []
    answered: dict[TP, ElectionResult] = {}
    for tp in dict.fromkeys(tps):
        if tp not in assignments or tp not in leaders:
            answered[tp] = ElectionResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        elif tp[0] in deleting:
            answered[tp] = ElectionResult(ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is being deleted")
        elif election_needed(election_type, assignments[tp].replicas, leaders[tp], live):
            to_elect.append(tp)
        else:
            answered[tp] = ElectionResult(ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.ELECTION_NOT_NEEDED.message)
    return to_elect, answered


class PreferredLeaderElection(ControllerListener):
    """Controller extension for preferred and unclean elections asked for by operators."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges) -> None:
        self.core = core
        self.partitions = partitions
        self.watch = CreationWatch(core, paths.preferred_replica_election(), self._on_znode)

    # -- hooks ------------------------------------------------------------------------------

    async def on_failover(self) -> None:
        """Watch the election znode (acting on one left from before the failover)."""
        await self.watch.start()

    async def on_resign(self) -> None:
        """Stop watching."""
        self.watch.cancel()

    # -- requests -----------------------------------------------------------------------------

    async def elect_for_admin(self, tps: Sequence[TP], election_type: int) -> dict[TP, ElectionResult]:
        """ElectLeaders: run the election on the controller's task (NOT_CONTROLLER if not active)."""
        async def run() -> dict[TP, ElectionResult]:
            if not self.core.is_active:
                return {tp: ElectionResult(ErrorCode.NOT_CONTROLLER, ErrorCode.NOT_CONTROLLER.message) for tp in tps}
            return await self.elect(tps, election_type, trigger="admin client")
        return await self.core.call(run)

    async def elect(self, tps: Iterable[TP], election_type: int, trigger: str) -> dict[TP, ElectionResult]:
        """Classify, elect what needs it, and say what happened to each partition (controller task)."""
        c = self.core
        ctx = c.ctx
        live = self.partitions.eligible()
        leaders = {tp: st.leader for tp, st in ctx.leaders.items()}
        to_elect, results = classify(tps, election_type, ctx.assignments, leaders, ctx.topics_to_delete, live)
        if to_elect:
            log.info("Controller %d: %s leader election for %s triggered by %s", c.broker_id,
                     ELECTION_TYPES[election_type], ", ".join(f"{t}-{p}" for t, p in to_elect), trigger)
            results.update(await self.run_election(to_elect, election_type))
        return results

    async def run_election(self, tps: Sequence[TP], election_type: int) -> dict[TP, ElectionResult]:
        """Elect with the PREFERRED or (operator-requested) UNCLEAN strategy; no znode involved."""
        c = self.core
        ctx = c.ctx
        # A failed preferred election leaves a perfectly good leader in place: the partition stays ONLINE.
        strategy = self._preferred if election_type == PREFERRED else self._unclean
        outcome = await self.partitions.elect(tps, strategy, offline_on_failure=False)
        results: dict[TP, ElectionResult] = {}
        for tp in tps:
            code = outcome.get(tp, ErrorCode.NONE)
            if code == ErrorCode.NONE:
                results[tp] = ElectionResult(ErrorCode.NONE, None, ctx.leaders[tp].leader)
                continue
            if code == ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE:
                code = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED else code
                results[tp] = ElectionResult(code, f"Failed to elect leader for partition {tp[0]}-{tp[1]} under "
                                                   f"strategy {_STRATEGY_NAMES[election_type]}")
            else:
                results[tp] = ElectionResult(code, code.message)
        return results

    @staticmethod
    def _preferred(tp: TP, st: PartitionState, a: Assignment, live: set[int]) -> elect.Election | None:
        return elect.preferred_leader(a.replicas, st.isr, live)

    def _unclean(self, tp: TP, st: PartitionState, a: Assignment, live: set[int]) -> elect.Election | None:
        if st.leader >= 0 and st.leader in live:
            return elect.Election(st.leader, tuple(st.isr))  # someone else elected it meanwhile: keep it
        result = elect.offline_leader(a.replicas, st.isr, live, unclean_enabled=True)
        if result is not None and result.unclean:
            log.warning("Unclean leader election requested by an operator. Broker %d was elected as leader of "
                        "%s-%d from outside the ISR %s; committed records may be lost", result.leader, tp[0],
                        tp[1], list(st.isr))
        return result

    # -- the znode ------------------------------------------------------------------------------

    async def _on_znode(self) -> None:
        """/admin/preferred_replica_election was created: elect, then delete it."""
        c = self.core
        if not c.is_active:
            return
        try:
            request = await c.zk_call(c.zk.get_preferred_replica_election)
        except ValueError as exc:  # malformed JSON: Kafka would fail the event; drop the request
            log.error("Ignoring malformed %s: %s", paths.preferred_replica_election(), exc)
            request = None
        try:
            if request is not None:
                results = await self.elect([(tp.topic, tp.partition) for tp in request.partitions], PREFERRED,
                                           trigger="zookeeper")
                failed = {tp: r for tp, r in results.items()
                          if r.error not in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED)}
                if failed:
                    log.warning("Preferred replica election through ZooKeeper failed for %s",
                                ", ".join(f"{t}-{p}: {r.error.name}" for (t, p), r in sorted(failed.items())))
        finally:
            await c.zk_call(c.zk.delete_preferred_replica_election, c.ops.epoch_zk_version)
