"""Broker membership as the controller sees it: failures, (re)starts and controlled shutdowns.

A broker's death moves its leaderships to the next live ISR member and drops it from every
ISR; a (re)started broker is told the full metadata and its replicas' states; a controlled
shutdown moves leaderships away while the broker is still there to hand over.
"""

from __future__ import annotations

import logging
from pylog.common.types import TP
from pylog.controller import election as elect
from pylog.controller.context import Assignment, LiveBroker
from pylog.controller.core import ControllerCore, ControllerListener
from pylog.controller.deletion import TopicDeletionManager
from pylog.controller.partitions import PartitionChanges
from pylog.controller.states import PartitionLifecycle as PS
from pylog.controller.states import ReplicaLifecycle as RS
from pylog.protocol.errors import ErrorCode
from pylog.zk.codecs import PartitionState

log = logging.getLogger("pylog.controller")


class BrokerMembership:
    """Reacts to /brokers/ids changes and ControlledShutdown requests."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges, deletion: TopicDeletionManager,
                 listeners: ControllerListener) -> None:
        self.core = core
        self.partitions = partitions
        self.deletion = deletion
        self.listeners = listeners

    async def on_change(self) -> None:
        """/brokers/ids changed: diff against the live set."""
        ctx = self.core.ctx
        current = await self.core.zk_call(self.core.ops.live_brokers)
        dead = set(ctx.live) - set(current)
        bounced = {b for b in set(ctx.live) & set(current) if current[b][1] != ctx.live[b].epoch}
        new = set(current) - set(ctx.live)
        if dead or bounced:
            await self.on_failed(dead | bounced)
        for bid in new | bounced:
            ctx.live[bid] = LiveBroker(*current[bid])
            self.core.open_channel(bid)
        if new or bounced:
            await self.on_started(new | bounced)

    async def on_failed(self, dead: set[int]) -> None:
        """Elect new leaders for what the dead led and drop them from every ISR."""
        ctx = self.core.ctx
        log.info("Controller %d: brokers %s failed", self.core.broker_id, sorted(dead))
        for bid in dead:
            ctx.offline_replicas.pop(bid, None)  # a restart may have repaired its log dirs
            ctx.live.pop(bid, None)
            ctx.shutting_down.discard(bid)
            self.core.close_channel(bid)
        # A replica already deleted stays DELETED until its topic's deletion completes.
        offline = ctx.move_replicas([(*tp, r) for tp, a in ctx.assignments.items() for r in a.replicas
                                     if r in dead and ctx.replica_states.get((*tp, r)) is not RS.DELETED], RS.OFFLINE)
        led = [tp for tp, st in ctx.leaders.items() if st.leader in dead and tp[0] not in ctx.topics_to_delete]
        await self.partitions.elect(ctx.move_partitions(led, PS.OFFLINE), self.partitions.offline_strategy)
        # Every partition whose replica went offline, not just those whose cached ISR names it: a
        # leader may have added one back moments ago (its ISR change notification not read yet).
        # The fresh read in remove_from_isr skips the rest, as Kafka's OfflineReplica transition does.
        hosted = sorted({(t, p) for t, p, _r in offline if t not in ctx.topics_to_delete})
        await self.partitions.remove_from_isr(dead, hosted)
        self.core.send_update_metadata(ctx.live_ids, [])
        await self.listeners.on_broker_failure(dead)

    async def on_failover(self) -> None:
        """A new controller drops the replicas of brokers that are not live from every ISR at once.

        Kafka's ReplicaStateMachine.startup moves them to OfflineReplica. The broker that died may
        have been the old controller, whose death no BrokerChange reports to anyone: left in the
        ISRs it followed, it would hold acks=all writes until each leader's own lag shrink.
        """
        ctx = self.core.ctx
        offline = [k for k, s in ctx.replica_states.items()
                   if s is RS.OFFLINE and k[2] not in ctx.live and k[0] not in ctx.topics_to_delete]
        moved = ctx.move_replicas(offline, RS.OFFLINE)
        if moved:
            await self.partitions.remove_from_isr({r for _t, _p, r in moved}, sorted({(t, p) for t, p, _r in moved}))

    async def on_started(self, started: set[int]) -> None:
        """Tell new brokers everything, others about them, and retry what they make possible."""
        ctx = self.core.ctx
        log.info("Controller %d: brokers %s started", self.core.broker_id, sorted(started))
        self.core.send_update_metadata(started, None)
        self.core.send_update_metadata(ctx.live_ids - started, [])
        for bid in sorted(started):
            tps = [tp for tp in ctx.partitions_on(bid) if tp in ctx.leaders and tp[0] not in ctx.topics_to_delete]
            online = ctx.move_replicas([(*tp, bid) for tp in tps], RS.ONLINE)
            self.core.send_leader_and_isr(bid, [(t, p) for t, p, _r in online])
        await self.partitions.trigger_online()
        await self.deletion.resume()
        await self.listeners.on_broker_startup(started)

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TP]]:
        """Move leaderships off a stopping broker and drop it from the ISRs it follows in."""
        ctx = self.core.ctx
        if not self.core.is_active:
            return ErrorCode.NOT_CONTROLLER, []
        lb = ctx.live.get(broker_id)
        if lb is None:
            return ErrorCode.BROKER_NOT_AVAILABLE, []
        if broker_epoch >= 0 and broker_epoch != lb.epoch:
            return ErrorCode.STALE_BROKER_EPOCH, []
        ctx.shutting_down.add(broker_id)
        log.info("Controller %d: controlled shutdown of broker %d", self.core.broker_id, broker_id)
        replicated = [tp for tp in ctx.partitions_on(broker_id) if len(ctx.assignments[tp].replicas) > 1]
        led = [tp for tp in replicated if ctx.leaders.get(tp) and ctx.leaders[tp].leader == broker_id]

        def strategy(tp: TP, st: PartitionState, a: Assignment, live: set[int]) -> elect.Election | None:
            return elect.controlled_shutdown_leader(a.replicas, st.isr, live | {broker_id}, ctx.shutting_down)

        await self.partitions.elect(led, strategy, ctx.live_ids)
        # Stop every replica it has that is led elsewhere now, including the ones it just handed
        # over: a replica still fetching on its way out gets added back to the ISR by its leader,
        # and acks=all then waits on a stopped broker until replica.lag.time.max.ms. (The new
        # LeaderAndIsr is not sent to it at all; see Controller.propagate.)
        # Kafka moves them to OfflineReplica; only those that moved are stopped and leave the ISRs.
        followed = [tp for tp in replicated if ctx.leaders.get(tp) and ctx.leaders[tp].leader != broker_id]
        stopped = [(t, p) for t, p, _r in ctx.move_replicas([(*tp, broker_id) for tp in followed], RS.OFFLINE)]
        if stopped:
            self.core.send_stop_replica(broker_id, stopped, delete=False)
        await self.partitions.remove_from_isr({broker_id}, stopped)
        remaining = [tp for tp in replicated if ctx.leaders.get(tp) and ctx.leaders[tp].leader == broker_id]
        return ErrorCode.NONE, remaining

