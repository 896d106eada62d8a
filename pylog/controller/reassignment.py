"""Partition reassignment in ZooKeeper mode (KIP-455): AlterPartitionReassignments, the legacy
/admin/reassign_partitions znode, and their survival across controller failover.

Per partition (KafkaController.onPartitionReassignment):
1. the topic znode gets `partitions` = (target ++ original).distinct with adding/removing set, so
   a new controller can resume from ZooKeeper alone; replicas a superseding target no longer
   needs are taken out of the ISR and deleted at once;
2. while the target replicas are not all in the ISR: bump the leader epoch and send LeaderAndIsr
   to the full replica set (the new replicas create their logs and start fetching), then wait for
   ISR changes (leaders report them through /isr_change_notification);
3. once they are: a new leader from the target if the current one leaves, the ISR cut to the
   target (one fenced write), StopReplica(delete) to the removed replicas, the final assignment
   (adding/removing cleared) in the topic znode, and the partition leaves the legacy znode.
Cancelling reassigns back to the original replicas with the same machinery. The pure decisions
live in reassignment_plan.py.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable, Mapping, Sequence

from pylog.common.types import TP
from pylog.controller import election as elect
from pylog.controller.admin_znodes import CreationWatch
from pylog.controller.context import Assignment
from pylog.controller.core import ControllerCore, ControllerListener
from pylog.controller.partitions import PartitionChanges
from pylog.controller.reassignment_plan import (
    Step,
    build_reassignment,
    finish_state,
    is_complete,
    next_step,
    unneeded_replicas,
    validate_target,
)
from pylog.controller.states import ReplicaLifecycle as RS
from pylog.protocol.errors import ErrorCode
from pylog.zk import paths
from pylog.zk.codecs import PartitionState, TopicAssignment
from pylog.zk.codecs_admin import ReassignPartitions
from pylog.zk.errors import ControllerMovedError

log = logging.getLogger("pylog.controller.reassignment")
Result = tuple[ErrorCode, "str | None"]
_UNKNOWN = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")


def _name(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


class PartitionReassignments(ControllerListener):
    """Controller extension that drives reassignments to completion."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges) -> None:
        self.core = core
        self.partitions = partitions
        self.ongoing: set[TP] = set()  # partitionsBeingReassigned
        self.watch = CreationWatch(core, paths.reassign_partitions(), self._on_znode_created)

    # -- hooks ------------------------------------------------------------------------------

    async def on_failover(self) -> None:
        """Resume what the topic znodes say is in flight; pick up the legacy znode."""
        ctx = self.core.ctx
        self.ongoing = {tp for tp, a in ctx.assignments.items() if a.reassigning}
        czxid, from_znode = await self._process_znode()
        for tp in sorted(self.ongoing - from_znode):
            if tp in ctx.assignments and tp[0] not in ctx.topics_to_delete:
                await self._reassign(tp, ctx.assignments[tp])
        await self.watch.start(seen_czxid=czxid)

    async def on_resign(self) -> None:
        """Forget everything; the next controller reloads it from ZooKeeper."""
        self.watch.cancel()
        self.ongoing = set()

    async def on_isr_change(self, tps: Iterable[TP]) -> None:
        """A leader changed an ISR: maybe the target replicas have all caught up."""
        ctx = self.core.ctx
        for tp in sorted(set(tps) & self.ongoing):
            a = ctx.assignments.get(tp)
            st = ctx.leaders.get(tp)
            if a is None:
                self.ongoing.discard(tp)
            elif st is not None and is_complete(a, st.isr):
                log.info("Target replicas %s have all caught up with the leader for reassigning partition %s",
                         list(a.target), _name(tp))
                await self._reassign(tp, a)

    async def on_broker_startup(self, ids: Iterable[int]) -> None:
        """Restarted target replicas: resend the reassignment's state (maybeResumeReassignments)."""
        started = set(ids)
        ctx = self.core.ctx
        for tp in sorted(self.ongoing):
            a = ctx.assignments.get(tp)
            if a is not None and started & set(a.target) and tp[0] not in ctx.topics_to_delete:
                await self._reassign(tp, a)

    # -- requests -----------------------------------------------------------------------------

    async def alter_for_admin(self, requests: Mapping[TP, Sequence[int] | None]) -> dict[TP, Result] | None:
        """AlterPartitionReassignments on the controller's task; None when this broker is not the controller."""
        async def run() -> dict[TP, Result] | None:
            return await self.alter(requests) if self.core.is_active else None
        return await self.core.call(run)

    async def list_for_admin(self, tps: Iterable[TP] | None) -> dict[TP, Assignment] | None:
        """ListPartitionReassignments: reassigning partitions (all, or among `tps`); None if not the controller."""
        async def run() -> dict[TP, Assignment] | None:
            if not self.core.is_active:
                return None
            assignments = self.core.ctx.assignments
            wanted = self.ongoing if tps is None else set(tps)
            return {tp: assignments[tp] for tp in sorted(wanted) if tp in assignments and assignments[tp].reassigning}
        return await self.core.call(run)

    async def alter(self, requests: Mapping[TP, Sequence[int] | None]) -> dict[TP, Result]:
        """processApiPartitionReassignment: validate, supersede the legacy znode, start (controller task)."""
        ctx = self.core.ctx
        live = self.partitions.eligible()
        results: dict[TP, Result] = {}
        to_apply: dict[TP, Assignment] = {}
        for tp, target in requests.items():
            current = ctx.assignments.get(tp, Assignment(()))
            if target is not None:
                problem = validate_target(current, list(target), live)
                if problem is not None:
                    results[tp] = (ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
                    continue
            new = build_reassignment(current, None if target is None else list(target))
            if new is None:
                results[tp] = (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS.message)
            else:
                to_apply[tp] = new
        # The latest request wins over the legacy znode for the same partitions.
        await self._remove_from_znode(lambda tp, _replicas: tp in to_apply)
        results.update(await self._trigger(to_apply))
        return results

    async def _trigger(self, to_apply: Mapping[TP, Assignment]) -> dict[TP, Result]:
        """maybeTriggerPartitionReassignment: start each partition, with Kafka's per-partition errors."""
        ctx = self.core.ctx
        results: dict[TP, Result] = {}
        for tp, new in to_apply.items():
            if tp[0] in ctx.topics_to_delete or tp not in ctx.assignments:
                results[tp] = _UNKNOWN
                continue
            try:
                await self._reassign(tp, new)
                results[tp] = (ErrorCode.NONE, None)
            except ControllerMovedError:
                raise
            except Exception:
                log.exception("Error completing reassignment of partition %s", _name(tp))
                results[tp] = (ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.UNKNOWN_SERVER_ERROR.message)
        return results

    # -- the state machine ------------------------------------------------------------------------

    async def _reassign(self, tp: TP, new: Assignment) -> None:
        """onPartitionReassignment: record `new`, then either replicate towards it or finish it."""
        c = self.core
        ctx = c.ctx
        current = ctx.assignments[tp]
        if current != new:
            log.info("Reassigning %s: replicas %s -> %s (adding %s, removing %s)", _name(tp), list(current.replicas),
                     list(new.replicas), list(new.adding), list(new.removing))
            await self._write_assignments(tp[0], {tp[1]: new})
            ctx.assignments[tp] = new
            ctx.move_replicas([(*tp, r) for r in new.adding if (*tp, r) not in ctx.replica_states], RS.NEW)
            dropped = unneeded_replicas(current, new)
            if dropped:
                await self._stop_replicas(tp, dropped)
        self.ongoing.add(tp)
        fresh = await c.zk_call(c.ops.partition_states, [tp])
        st = fresh.get(tp)
        if st is None:
            return  # no leader yet (a brand-new partition): it starts with the new replicas
        ctx.leaders[tp] = st
        if is_complete(new, st.isr):
            await self._complete(tp)
        else:
            await self._replicate(tp, st)

    async def _replicate(self, tp: TP, st: PartitionState) -> None:
        """Bump the leader epoch and tell the full replica set (new replicas start following)."""
        c = self.core
        live = c.ctx.live_ids
        if st.leader in live:
            def same_leader(_tp: TP, fresh: PartitionState, _a: Assignment, lv: set[int]) -> elect.Election | None:
                return elect.Election(fresh.leader, tuple(fresh.isr)) if fresh.leader in lv else None
            outcome = await self.partitions.elect([tp], same_leader, live)
            if outcome.get(tp) == ErrorCode.NONE:
                return
        # No live leader to keep: still tell the new replicas about the partition.
        c.propagate([tp])

    async def _complete(self, tp: TP) -> None:
        """Every target replica is in the ISR: move the leader if needed, cut the ISR, delete the rest."""
        c = self.core
        ctx = c.ctx
        a = ctx.assignments[tp]
        st = ctx.leaders[tp]
        plan = next_step(a, st.leader, st.isr, self.partitions.eligible())
        if plan.step is Step.CATCH_UP:
            return
        if plan.step is Step.NO_LEADER:
            log.warning("Reassignment of %s caught up but no live in-sync target replica of %s can lead; waiting",
                        _name(tp), list(a.target))
            return
        final = Assignment(a.target)
        ctx.assignments[tp] = final  # LeaderAndIsr/UpdateMetadata now carry the target replicas only

        def finish(_tp: TP, fresh: PartitionState, _a: Assignment, live: set[int]) -> elect.Election | None:
            return finish_state(final.replicas, fresh.leader, fresh.isr, live)

        outcome = await self.partitions.elect([tp], finish, offline_on_failure=False)
        if outcome.get(tp) != ErrorCode.NONE:
            ctx.assignments[tp] = a
            log.warning("Could not finish reassignment of %s (%s); will retry", _name(tp), outcome.get(tp))
            return
        live = ctx.live_ids
        ctx.move_replicas([(*tp, r) for r in final.replicas if r in live], RS.ONLINE)
        self._drop_replicas(tp, plan.removed)
        await self._write_assignments(tp[0], {tp[1]: final})
        self.ongoing.discard(tp)
        await self._remove_from_znode(lambda p, replicas: p == tp and tuple(replicas) == final.replicas)
        log.info("Reassignment of %s completed: replicas %s, leader %d", _name(tp), list(final.replicas),
                 ctx.leaders[tp].leader)

    async def _stop_replicas(self, tp: TP, replicas: Sequence[int]) -> None:
        """Replicas a new target no longer wants: out of the ISR, then stopped and deleted."""
        c = self.core
        ctx = c.ctx
        await self.partitions.remove_from_isr(set(replicas), [tp])
        st = ctx.leaders.get(tp)
        if st is not None and st.leader < 0:
            await self.partitions.elect([tp], self.partitions.offline_strategy)
        self._drop_replicas(tp, replicas)

    def _drop_replicas(self, tp: TP, replicas: Sequence[int]) -> None:
        """stopRemovedReplicasOfReassignedPartition: walk the replicas to NON_EXISTENT, delete their logs."""
        c = self.core
        keys = [(*tp, r) for r in replicas]
        # Only the replicas whose every move is allowed get their log deleted.
        for state in (RS.OFFLINE, RS.DELETION_STARTED, RS.DELETED, RS.NON_EXISTENT):
            keys = c.ctx.move_replicas(keys, state)
        live = c.ctx.live_ids
        for _t, _p, r in keys:
            if r in live:
                c.send_stop_replica(r, [tp], delete=True)

    async def _write_assignments(self, topic: str, changes: Mapping[int, Assignment]) -> None:
        """Rewrite the topic znode with these partitions changed (others as ZooKeeper has them)."""
        c = self.core
        got = await c.zk_call(c.ops.assignments, [topic])
        ta = got.get(topic)
        if ta is None:
            raise RuntimeError(f"topic znode of {topic} vanished")
        parts, adding, removing = dict(ta.partitions), dict(ta.adding_replicas), dict(ta.removing_replicas)
        for p, a in changes.items():
            parts[p], adding[p], removing[p] = a.replicas, a.adding, a.removing
        topic_id = ta.topic_id or c.ctx.topic_ids.get(topic)
        await c.zk_call(c.ops.write_assignment, topic, TopicAssignment(parts, topic_id, adding, removing))

    # -- the legacy znode -------------------------------------------------------------------------

    async def _on_znode_created(self) -> None:
        if self.core.is_active:
            await self._process_znode()

    async def _process_znode(self) -> tuple[int | None, set[TP]]:
        """processZkPartitionReassignment: start what /admin/reassign_partitions asks for.

        Returns the znode's czxid (None if absent) and the partitions it started. As in Kafka the
        targets are not validated here (the tools do that before writing); partitions that fail
        to start are removed from the znode.
        """
        c = self.core
        got = await c.zk_call(c.zk.get_or_none, paths.reassign_partitions())
        if got is None:
            return None, set()
        try:
            request = ReassignPartitions.decode(got[0])
        except ValueError as exc:
            log.error("Ignoring and deleting malformed %s: %s", paths.reassign_partitions(), exc)
            await c.zk_call(c.zk.delete_reassign_partitions, c.ops.epoch_zk_version)
            return got[1].czxid, set()
        ctx = c.ctx
        to_apply: dict[TP, Assignment] = {}
        for tp, replicas in request.partitions.items():
            new = build_reassignment(ctx.assignments.get(tuple(tp), Assignment(())), list(replicas))
            if new is not None:
                to_apply[(tp.topic, tp.partition)] = new
        results = await self._trigger(to_apply)
        failed = {tp for tp, (code, _) in results.items() if code != ErrorCode.NONE}
        if failed:
            log.warning("Failed reassignment through zk with the following errors: %s",
                        ", ".join(f"{_name(tp)}: {results[tp][0].name}" for tp in sorted(failed)))
            await self._remove_from_znode(lambda tp, _replicas: tuple(tp) in failed)
        return got[1].czxid, set(results) - failed

    async def _remove_from_znode(self, drop: Callable[[TP, Sequence[int]], bool]) -> None:
        """maybeRemoveFromZkReassignment: rewrite the znode without some partitions; delete it when empty."""
        c = self.core
        got = await c.zk_call(c.zk.get_reassign_partitions)
        if got is None:
            return
        request, _version = got
        keep = {tp: reps for tp, reps in request.partitions.items() if not drop((tp.topic, tp.partition), reps)}
        if len(keep) == len(request.partitions):
            return
        if keep:
            await c.zk_call(lambda: c.zk.set_reassign_partitions(
                ReassignPartitions(keep), controller_epoch_zk_version=c.ops.epoch_zk_version))
        else:
            log.info("No more partitions need to be reassigned. Deleting zk path %s", paths.reassign_partitions())
            await c.zk_call(c.zk.delete_reassign_partitions, c.ops.epoch_zk_version)
