"""Partition state changes the controller makes: elections, new partitions, ISR removals.

Each change checks the partition state machine first (a partition whose transition is refused gets
no write and no request, as in Kafka's handleStateChanges), reads the partition's state fresh from
ZooKeeper (leaders change ISRs on their own), writes the new state conditionally with the
controller epoch, retries partitions whose state moved under it, and then tells the brokers
(Controller.propagate).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable

from pylog.common.types import TP
from pylog.controller import election as elect
from pylog.controller.context import Assignment
from pylog.controller.core import ControllerCore
from pylog.controller.states import PartitionLifecycle as PS
from pylog.controller.states import ReplicaLifecycle as RS
from pylog.metrics.recorders import CONTROLLER as CONTROLLER_METRICS
from pylog.protocol.errors import ErrorCode
from pylog.zk.codecs import PartitionState
from pylog.zk.errors import ControllerMovedError

log = logging.getLogger("pylog.controller")
Strategy = Callable[[TP, PartitionState, Assignment, set[int]], "elect.Election | None"]


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() == "true"


class PartitionChanges:
    """The controller's partition state machine transitions that write ZooKeeper."""

    def __init__(self, core: ControllerCore) -> None:
        self.core = core

    def unclean_enabled(self, topic: str) -> bool:
        """unclean.leader.election.enable for a topic: its override, else the broker setting."""
        for layer in (self.core.ctx.topic_configs.get(topic, {}), self.core.dynamic_default):
            value = layer.get("unclean.leader.election.enable")
            if value is not None:
                return _truthy(value)
        return _truthy(self.core.config.get("unclean.leader.election.enable"))

    def eligible(self) -> set[int]:
        """Brokers that may lead: live and not shutting down."""
        return self.core.ctx.live_ids - self.core.ctx.shutting_down

    def offline_strategy(self, tp: TP, st: PartitionState, a: Assignment, live: set[int]) -> elect.Election | None:
        """Leader gone: first live ISR member in assignment order, unclean only if enabled."""
        # Kafka walks the full replica set (target first, then original) so a partition mid-reassignment
        # can still fail over to an original replica before the new ones are in sync.
        result = elect.offline_leader(a.replicas, st.isr, live,
                                      self.unclean_enabled(tp[0]))
        if result is not None and result.unclean:
            CONTROLLER_METRICS.unclean_elections += 1
            log.warning("Unclean leader election. Broker %d was elected as leader of %s-%d from outside the ISR %s;"
                        " committed records may be lost", result.leader, tp[0], tp[1], list(st.isr))
        return result

    async def elect(self, tps: Iterable[TP], strategy: Strategy, live: set[int] | None = None,
                    offline_on_failure: bool = True) -> dict[TP, ErrorCode]:
        """Elect leaders for existing partitions with `strategy`; writes ZooKeeper, then tells brokers.

        Reads the current state from ZooKeeper first (leaders change ISRs on their own) and retries
        partitions whose state moved under us. Returns NONE per elected partition, else the error.
        A partition `strategy` finds no leader for goes OFFLINE unless `offline_on_failure` is
        false (a failed preferred election or reassignment step leaves a good leader in place).
        A partition that may not go ONLINE gets UNKNOWN_SERVER_ERROR (Kafka's IllegalStateException).
        """
        started = time.perf_counter()
        ctx = self.core.ctx
        live = self.eligible() if live is None else live
        known = [tp for tp in dict.fromkeys(tps) if tp in ctx.assignments]
        remaining = ctx.may_move_partitions(known, PS.ONLINE)
        outcome: dict[TP, ErrorCode] = {tp: ErrorCode.UNKNOWN_SERVER_ERROR for tp in set(known) - set(remaining)}
        changed: list[TP] = []
        for _attempt in range(10):
            if not remaining:
                break
            fresh = await self.core.zk_call(self.core.ops.partition_states, remaining)
            proposals: dict[TP, PartitionState] = {}
            for tp in remaining:
                st = fresh.get(tp)
                if st is None:
                    outcome[tp] = ErrorCode.LEADER_NOT_AVAILABLE
                    continue
                if st.controller_epoch > ctx.epoch:
                    raise ControllerMovedError(f"{tp[0]}-{tp[1]} was written by controller epoch {st.controller_epoch}")
                ctx.leaders[tp] = st
                result = strategy(tp, st, ctx.assignments[tp], live - ctx.offline_brokers_of(tp))
                if result is None:
                    outcome[tp] = ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
                    if offline_on_failure:
                        ctx.move_partitions([tp], PS.OFFLINE)
                    continue
                proposals[tp] = PartitionState(result.leader, st.leader_epoch + 1, result.isr, ctx.epoch,
                                               partition_epoch=st.partition_epoch)
            written = await self.core.zk_call(self.core.ops.update_partition_states, proposals) if proposals else {}
            remaining = []
            for tp, new in written.items():
                if new is None:
                    remaining.append(tp)
                    continue
                ctx.leaders[tp] = new
                ctx.move_partitions([tp], PS.ONLINE)
                outcome[tp] = ErrorCode.NONE
                changed.append(tp)
        for tp in remaining:
            outcome[tp] = ErrorCode.NOT_CONTROLLER
        self.core.propagate(changed)
        CONTROLLER_METRICS.election_time.observe((time.perf_counter() - started) * 1000)
        return outcome

    async def init_new(self, tps: Iterable[TP]) -> None:
        """NEW -> ONLINE: the first live replica leads, the live replicas form the ISR.

        A partition with no live replica stays NEW (tried again by trigger_online).
        """
        ctx = self.core.ctx
        live = self.eligible()
        proposals = {}
        # Only a NEW partition gets its first leader here; one that may not go ONLINE gets no znode.
        for tp in ctx.may_move_partitions(tps, PS.ONLINE):
            if ctx.partition_states.get(tp) is not PS.NEW:
                continue
            a = ctx.assignments[tp]
            isr = tuple(r for r in a.replicas if r in live)
            if not isr:
                log.warning("No live replica of %s-%d among %s; it stays offline", tp[0], tp[1], list(a.replicas))
                continue
            proposals[tp] = PartitionState(isr[0], 0, isr, ctx.epoch)
        created = await self.core.zk_call(self.core.ops.create_partition_states, proposals) if proposals else {}
        done = []
        for tp, st in created.items():
            if st is None:  # someone created it first: adopt what is there
                existing = await self.core.zk_call(self.core.ops.partition_states, [tp])
                if tp in existing:
                    ctx.leaders[tp] = existing[tp]
                continue
            ctx.leaders[tp] = st
            done.append(tp)
        ctx.move_partitions(done, PS.ONLINE)
        ctx.move_replicas([(*tp, r) for tp in done for r in ctx.leaders[tp].isr], RS.ONLINE)
        self.core.propagate(done, is_new=True)

    async def trigger_online(self) -> None:
        """Bring every NEW and OFFLINE partition online where a leader can be found."""
        ctx = self.core.ctx
        deleting = ctx.topics_to_delete
        new = [tp for tp, s in ctx.partition_states.items() if s == PS.NEW and tp[0] not in deleting]
        offline = [tp for tp, s in ctx.partition_states.items() if s == PS.OFFLINE and tp[0] not in deleting]
        if new:
            await self.init_new(new)
        if offline:
            await self.elect(offline, self.offline_strategy)

    async def remove_from_isr(self, gone: set[int], tps: Iterable[TP]) -> None:
        """Write ISRs without `gone` (leadership too, if they held it), bumping the leader epoch."""
        ctx = self.core.ctx
        remaining = list(tps)
        changed = []
        for _attempt in range(10):
            if not remaining:
                break
            fresh = await self.core.zk_call(self.core.ops.partition_states, remaining)
            proposals = {}
            for tp in remaining:
                st = fresh.get(tp)
                if st is None or not set(st.isr) & gone:
                    continue
                leader, isr = st.leader, tuple(st.isr)
                for r in gone:
                    leader, isr = elect.remove_from_isr(leader, isr, r)
                if (leader, isr) == (st.leader, tuple(st.isr)):
                    continue  # the ISR keeps its last member and the leader stays: nothing to write
                if leader < 0 and st.leader >= 0 and not ctx.may_move_partitions([tp], PS.OFFLINE):
                    continue  # losing its leader takes the partition OFFLINE, which its state refuses
                proposals[tp] = PartitionState(leader, st.leader_epoch + 1, isr, ctx.epoch,
                                               partition_epoch=st.partition_epoch)
            written = await self.core.zk_call(self.core.ops.update_partition_states, proposals) if proposals else {}
            remaining = [tp for tp, new in written.items() if new is None]
            for tp, new in written.items():
                if new is not None:
                    ctx.leaders[tp] = new
                    if new.leader < 0:
                        ctx.move_partitions([tp], PS.OFFLINE)
                    changed.append(tp)
        self.core.propagate(changed)
