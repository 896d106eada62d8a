"""The group coordinator a broker hosts: a thin async shell that carries out the pure decisions.

Composed of: the ownership of `__consumer_offsets` partitions (pylog/coordinator/ownership.py, shared
with the transaction coordinator), the in-memory table of groups and offsets (table.py), the rules
(decisions.py), and the offset and admin operations (offsets.py). The shell owns what the rules
may not: the parked JoinGroup/SyncGroup futures, the timers, and the writes through the broker's
`OffsetsLog` seam (store.py). Kafka's classic protocol: the assignors run in the clients (the
leader's SyncGroup brings the assignment); the coordinator stores and hands it out. KIP-848 consumer
groups (pylog/coordinator/consumer/) are composed in: same partitions, load and committed offsets, their
own rules, timers and records; a group id is one or the other, never both at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from pylog.common.clock import now_ms as wall_ms
from pylog.coordinator.consumer import decisions as consumer_rules
from pylog.coordinator.consumer.coordinator import ConsumerCoordinator
from pylog.coordinator.consumer.decisions import ConsumerConfig, HeartbeatRequest, HeartbeatResult
from pylog.coordinator.consumer.model import ConsumerGroup, TopicsView
from pylog.coordinator.consumer import migration
from pylog.coordinator.consumer.embedded import EmbeddedProtocolError
from pylog.coordinator.consumer.records import group_tombstones
from pylog.coordinator.group import decisions as rules
from pylog.coordinator.group.api import (
    CommitRequest, CoordinatorConfig, FetchResult, GroupSummary, JoinRequest, JoinResult, SyncResult, TopicPartition,
    TxnCommitRequest,
)
from pylog.coordinator.group.effects import (
    CancelTimer, Decision, Effect, Note, ParkJoin, ParkSync, Persist, ReplyJoin, ReplySync, SetTimer, TimerKey,
    session_timer,
)
from pylog.coordinator.group.group import Group, new_member_id
from pylog.coordinator.group.offsets import OffsetOps
from pylog.coordinator.group.pending import PendingTxnOffsets
from pylog.coordinator.group.records import OFFSETS_TOPIC, GroupKey, OffsetValue, encode_group_key, offset_key_bytes
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import OffsetsLog, Replayed, client_error
from pylog.coordinator.group.table import GroupTable, metadata_record
from pylog.coordinator.ownership import Ownership, partition_for
from pylog.protocol.errors import ErrorCode
from pylog.metrics.recorders import GROUPS as GROUP_METRICS

log = logging.getLogger("pylog.coordinator.group")
E = ErrorCode


class GroupCoordinator:
    """Kafka's group coordinator (classic groups, and KIP-848 groups through `self.consumer`) for the
    `__consumer_offsets` partitions this broker leads."""

    def __init__(self, store: OffsetsLog, config: CoordinatorConfig, now_ms: Callable[[], int] = wall_ms,
                 consumer_config: ConsumerConfig = ConsumerConfig(), topics: Callable[[], TopicsView] = dict) -> None:
        self.store, self.config, self.now_ms = store, config, now_ms
        self.table = GroupTable(self.partition_of)
        self.ownership: Ownership[Replayed] = Ownership(OFFSETS_TOPIC, store.leader_epoch, self._read,
                                                        self._install, self._drop)
        # KIP-848 groups: same partitions, load and offsets; their own rules and timers.
        self.consumer = ConsumerCoordinator(store, consumer_config, self.partition_of, topics)
        self.consumer.downgraded = self._adopt_downgraded
        self.offset_ops = OffsetOps(self.table, store, config, self.check, now_ms, self._apply, self._commit_check)
        self._timers: dict[TimerKey, asyncio.TimerHandle] = {}
        self._joins: dict[tuple[str, str], asyncio.Future] = {}  # (group, member) -> parked JoinGroup
        self._syncs: dict[tuple[str, str], asyncio.Future] = {}  # (group, member) -> parked SyncGroup
        self._background: set[asyncio.Task] = set()

    # -- ownership --------------------------------------------------------------------------------

    @property
    def groups(self) -> dict[str, Group]:
        """The groups of the partitions served here."""
        return self.table.groups

    @property
    def offsets(self) -> dict[str, dict[TopicPartition, OffsetValue]]:
        """The committed offsets of the groups served here (read only: lag metrics read them)."""
        return self.table.offsets

    @property
    def pending(self) -> PendingTxnOffsets:
        """The transactional offsets waiting for their marker."""
        return self.table.pending

    def partition_of(self, group_id: str) -> int:
        """The `__consumer_offsets` partition that holds this group."""
        return partition_for(group_id, self.store.num_partitions())

    def check(self, group_id: str | None) -> ErrorCode:
        """NONE when this broker coordinates the group now, else the error the client should see."""
        if not group_id:
            return E.INVALID_GROUP_ID
        return self.ownership.check(self.partition_of(group_id))

    def check_partition(self, p: int) -> ErrorCode:
        """NONE when this broker leads partition `p` and has loaded it (else it loads or forgets it)."""
        return self.ownership.check(p)

    def on_leadership_change(self, partition: int) -> None:
        """The broker became (or stopped being) leader of an offsets partition: load or unload now."""
        self.ownership.check(partition)

    async def _read(self, p: int) -> Replayed:
        state = Replayed()
        async for record in self.store.read(p):
            state.apply(*record)
        return state

    def _install(self, p: int, epoch: int, state: Replayed) -> None:
        self.consumer.install(p, state.consumer)
        for group in self.table.install(p, state, self.now_ms()):
            self._apply(group, [session_timer(group, m) for m in group.members.values()])
        log.info("__consumer_offsets-%d holds %d groups, %d offsets", p, len(self.table.groups_of(p)),
                 sum(len(self.table.offsets.get(g.group_id, {})) for g in self.table.groups_of(p)))

    def _drop(self, p: int) -> None:
        """Parked requests of the partition's groups get NOT_COORDINATOR, their timers stop."""
        self.consumer.drop(p)
        for group in self.table.drop(p):
            gid = group.group_id
            for parked, answer in ((self._joins, E.NOT_COORDINATOR), (self._syncs, SyncResult(E.NOT_COORDINATOR))):
                for key in [k for k in parked if k[0] == gid]:
                    _resolve(parked.pop(key), answer)
            for key in [k for k in self._timers if k[1] == gid]:
                self._timers.pop(key).cancel()

    # -- the shell: carrying out decisions ------------------------------------------------------

    def _apply(self, group: Group, effects: list[Effect]) -> asyncio.Future | None:
        """Carry out a decision's effects in order; the future of a request it parked, if any."""
        parked = None
        gid = group.group_id
        for fx in effects:
            if isinstance(fx, SetTimer):
                self._set_timer(fx.key, fx.delay_ms)
            elif isinstance(fx, CancelTimer):
                handle = self._timers.pop(fx.key, None)
                if handle is not None:
                    handle.cancel()
            elif isinstance(fx, ReplyJoin):
                _resolve(self._joins.pop((gid, fx.member_id), None), fx.result)
            elif isinstance(fx, ReplySync):
                _resolve(self._syncs.pop((gid, fx.member_id), None), fx.result)
            elif isinstance(fx, (ParkJoin, ParkSync)):
                parked = asyncio.get_running_loop().create_future()
                (self._joins if isinstance(fx, ParkJoin) else self._syncs)[(gid, fx.member_id)] = parked
            elif isinstance(fx, Persist):
                self._spawn(self._persist(group, fx))
            elif isinstance(fx, Note):
                log.info("%s", fx.text)
                if fx.rebalance:
                    GROUP_METRICS.rebalances += 1
        return parked

    def _set_timer(self, key: TimerKey, delay_ms: int) -> None:
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, self._fired, key)

    def _fired(self, key: TimerKey) -> None:
        self._timers.pop(key, None)
        group = self.table.groups.get(key[1])
        if group is not None:
            self._apply(group, rules.timer_fired(group, key, self.config, self.now_ms()).effects)

    async def _persist(self, group: Group, fx: Persist) -> None:
        err = client_error(await self.store.append(self.partition_of(group.group_id), [metadata_record(group)]))
        if err != E.NONE:
            log.warning("Could not store the metadata of group %s (generation %d): %s", group.group_id,
                        fx.generation, err.name)
        if fx.assignment and self.table.groups.get(group.group_id) is group:
            self._apply(group, rules.assignment_stored(group, fx.generation, err, self.config, self.now_ms()).effects)

    def _spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def _decided(self, group: Group | None, d: Decision) -> asyncio.Future | None:
        if d.created is not None:
            group = self.table.groups[d.created.group_id] = d.created
        return self._apply(group, d.effects) if group is not None else None

    # -- membership requests --------------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        """Handle a JoinGroup; may wait for the rest of the group."""
        err = self.check(req.group_id)
        if err != E.NONE:
            return JoinResult(err, member_id=req.member_id)
        consumer = self.consumer.groups.get(req.group_id)
        if consumer is not None and consumer.members:  # a classic member of a consumer group (Kafka: any policy)
            if not self.config.min_session_timeout_ms <= req.session_timeout_ms <= self.config.max_session_timeout_ms:
                return JoinResult(E.INVALID_SESSION_TIMEOUT, member_id=req.member_id)
            known_id_required = req.require_known_member_id and not req.member_id and not req.instance_id
            return await self.consumer.classic_join(req, known_id_required)
        if consumer is not None:  # an empty consumer group gives way (Kafka's maybeDeleteEmptyConsumerGroup)
            await self.consumer.drop_empty(req.group_id)
        group = self.table.groups.get(req.group_id)
        d = rules.join(group, req, new_member_id(req.client_id, req.instance_id), self.config, self.now_ms())
        parked = self._decided(group, d)
        result = d.reply if parked is None else await parked
        return JoinResult(result, member_id=req.member_id) if isinstance(result, ErrorCode) else result

    async def sync(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
                   protocol_type: str | None, protocol_name: str | None,
                   assignments: dict[str, bytes]) -> SyncResult:
        """Handle a SyncGroup: the leader brings the assignment, everyone gets theirs."""
        err = self.check(group_id)
        if err != E.NONE:
            return SyncResult(err)
        if group_id in self.consumer.groups:
            if not self.consumer.groups[group_id].members:
                return SyncResult(E.UNKNOWN_MEMBER_ID)
            return self.consumer.classic_sync(group_id, generation, member_id, instance_id, protocol_type,
                                              protocol_name)
        group = self.table.groups.get(group_id)
        d = rules.sync(group, generation, member_id, instance_id, protocol_type, protocol_name, assignments)
        parked = self._decided(group, d)
        return d.reply if parked is None else await parked

    def heartbeat(self, group_id: str, generation: int, member_id: str, instance_id: str | None) -> ErrorCode:
        """Handle a Heartbeat: keep the member's session alive, tell it about a rebalance."""
        err = self.check(group_id)
        if err != E.NONE:
            return err
        if group_id in self.consumer.groups:
            return self.consumer.classic_heartbeat(group_id, generation, member_id, instance_id)
        group = self.table.groups.get(group_id)
        d = rules.heartbeat(group, generation, member_id, instance_id)
        self._decided(group, d)
        return d.reply

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """Handle a LeaveGroup (batched since v3): a group error, else one error per member."""
        err = self.check(group_id)
        if err != E.NONE:
            return err, []
        if group_id in self.consumer.groups:
            return self.consumer.classic_leave(group_id, members)
        group = self.table.groups.get(group_id)
        d = rules.leave(group, members, self.config, self.now_ms())
        self._decided(group, d)
        return d.reply

    # -- KIP-848 consumer groups (pylog/coordinator/consumer/) ------------------------------------

    async def consumer_heartbeat(self, req: HeartbeatRequest) -> HeartbeatResult:
        """Handle a ConsumerGroupHeartbeat; a group id a classic group uses is refused as Kafka does."""
        err = self.check(req.group_id)
        if err != E.NONE:
            return HeartbeatResult(err, member_epoch=req.member_epoch)
        classic = self.table.groups.get(req.group_id)
        if classic is not None and classic.state not in (GroupState.EMPTY, GroupState.DEAD):
            why = self._upgrade_refused(classic, req.member_epoch)
            if why is not None:
                log.info("Cannot upgrade classic group %s to a consumer group: %s", req.group_id, why)
                return HeartbeatResult(E.GROUP_ID_NOT_FOUND, f"Group {req.group_id} is not a consumer group.",
                                       member_epoch=req.member_epoch)
            err = await self._upgrade(classic)
            if err != E.NONE:
                return HeartbeatResult(err, member_epoch=req.member_epoch)
        return await self.consumer.heartbeat(req)

    def _upgrade_refused(self, classic: Group, member_epoch: int) -> str | None:
        """Why a ConsumerGroupHeartbeat may not turn this classic group into a consumer group (None: it may)."""
        if member_epoch != 0:
            return "only a joining member (epoch 0) converts a group"
        if not self.consumer.config.upgrade_enabled():
            return f"group.consumer.migration.policy is {self.consumer.config.migration_policy}"
        return migration.upgradable(classic, self.consumer.config.max_size)

    async def _upgrade(self, classic: Group) -> ErrorCode:
        """Kafka's convertToConsumerGroup: parked JoinGroups and SyncGroups learn of the new rebalance, the classic
        side forgets the group (not its offsets), and the consumer side takes it over."""
        gid = classic.group_id
        try:
            migration.from_classic(classic, self.consumer.topics())
        except EmbeddedProtocolError:
            return E.GROUP_ID_NOT_FOUND
        rebalancing = SyncResult(E.REBALANCE_IN_PROGRESS)
        for parked, answer in ((self._joins, E.REBALANCE_IN_PROGRESS), (self._syncs, rebalancing)):
            for key in [k for k in parked if k[0] == gid]:
                _resolve(parked.pop(key), answer)
        for key in [k for k in self._timers if k[1] == gid]:
            self._timers.pop(key).cancel()
        if self.table.groups.get(gid) is classic:
            del self.table.groups[gid]
        err = await self.consumer.upgrade(classic, [(encode_group_key(GroupKey(gid)), None)])
        if err != E.NONE and gid not in self.table.groups:  # nothing was written: the classic group stays
            self.table.groups[gid] = classic
            self._apply(classic, [session_timer(classic, m) for m in classic.members.values()])
        return err

    def _adopt_downgraded(self, group: Group) -> None:
        """A consumer group of classic members only became this classic group: store it, restart its members'
        sessions, and rebalance so they rejoin and their leader assigns (Kafka's convertToClassicGroup)."""
        group.state_timestamp_ms = self.now_ms()
        self.table.groups[group.group_id] = group
        self._apply(group, [session_timer(group, m) for m in group.members.values()] + [Persist(group.generation)])
        reason = f"Downgrade group {group.group_id} from consumer to classic."
        self._apply(group, rules.rebalance(group, reason, self.config, self.now_ms()).effects)

    def describe_consumer_group(self, group_id: str) -> tuple[ErrorCode, ConsumerGroup | None, dict]:
        """ConsumerGroupDescribe for one group: (error, the group, topic id -> name for its partitions)."""
        err = self.check(group_id)
        group = self.consumer.groups.get(group_id) if err == E.NONE else None
        if group is None:
            return (E.GROUP_ID_NOT_FOUND if err == E.NONE else err), None, {}
        return E.NONE, group, {tid: name for name, (tid, _) in self.consumer.topics().items()}

    def list_consumer_groups(self) -> list[tuple[str, str]]:
        """(group id, state) of the KIP-848 groups coordinated here (ListGroups' type "consumer")."""
        owned = set(self.ownership.owned())
        return sorted((gid, g.state()) for gid, g in self.consumer.groups.items() if self.partition_of(gid) in owned)

    def _member_check(self, group_id: str, member_id: str, epoch: int) -> ErrorCode | None:
        """None for groups that are not KIP-848 consumer groups, else OffsetFetch's member and epoch check."""
        if group_id not in self.consumer.groups:
            return None
        return self.consumer.check_fetch(group_id, member_id, epoch)

    def _commit_check(self, group_id: str, member_id: str, epoch: int, instance_id: str | None,
                      transactional: bool) -> ErrorCode | None:
        """None for groups that are not KIP-848 consumer groups, else a commit's member and epoch check."""
        if group_id not in self.consumer.groups:
            return None
        return self.consumer.check_commit(group_id, member_id, epoch, instance_id, transactional)

    # -- offsets and administration (offsets.py) ------------------------------------------------

    async def commit(self, req: CommitRequest) -> dict[TopicPartition, ErrorCode]:
        """Handle an OffsetCommit: one error per partition (all the same when the group refused it)."""
        return await self.offset_ops.commit(req)

    async def txn_commit(self, req: TxnCommitRequest) -> dict[TopicPartition, ErrorCode]:
        """Handle a TxnOffsetCommit: one error per partition; the offsets stay pending until the marker."""
        return await self.offset_ops.txn_commit(req)

    def on_txn_marker(self, partition: int, producer_id: int, commit: bool, marker_offset: int) -> None:
        """A COMMIT/ABORT marker of `producer_id` is now durable at `marker_offset` of an offsets partition."""
        if self.ownership.loading(partition):  # the loader may not have read that far: apply it once loaded
            self.table.markers_while_loading.setdefault(partition, []).append((producer_id, commit, marker_offset))
        elif partition in self.ownership.loaded:
            self.table.complete_markers(partition, producer_id, commit)

    def fetch(self, group_id: str, partitions: list[TopicPartition] | None,
              require_stable: bool = False, member: tuple[str, int] | None = None) -> FetchResult:
        """Handle an OffsetFetch for one group (see OffsetOps.fetch); `member` (id, epoch) from v9 on is checked
        against a consumer group's member."""
        if member is not None and self.check(group_id) == E.NONE:
            err = self._member_check(group_id, *member)
            if err not in (None, E.NONE):
                return FetchResult(err)
        return self.offset_ops.fetch(group_id, partitions, require_stable)

    def describe(self, group_id: str) -> GroupSummary:
        """DescribeGroups for one group (an unknown group is reported Dead, as Kafka does). A consumer group is not a
        classic group: Kafka 4.0 answers Dead without an error below DescribeGroups v6 (v6: GROUP_ID_NOT_FOUND)."""
        if group_id in self.consumer.groups and self.check(group_id) == E.NONE:
            return GroupSummary(group_id, E.NONE)
        return self.offset_ops.describe(group_id)

    def list_groups(self, states: set[GroupState] | None) -> tuple[ErrorCode, list[tuple[str, str, str]]]:
        """(error, [(group id, protocol type, state)]) for the groups coordinated here."""
        owned = set(self.ownership.owned())
        out = [(g.group_id, g.protocol_type or "", g.state.value) for g in self.table.groups.values()
               if self.partition_of(g.group_id) in owned and (not states or g.state in states)
               and g.group_id not in self.consumer.groups]  # (offsets alone leave an empty entry here)
        return (E.COORDINATOR_LOAD_IN_PROGRESS if self.ownership.loading() else E.NONE), sorted(out)

    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups for one group: only an Empty group; its offsets and metadata get tombstones."""
        consumer = self.consumer.groups.get(group_id)
        if consumer is None or self.check(group_id) != E.NONE:
            return await self.offset_ops.delete_group(group_id)
        if consumer.members:
            return E.NON_EMPTY_GROUP
        records = [(offset_key_bytes(group_id, *tp), None) for tp in self.table.offsets.get(group_id, {})]
        records += group_tombstones(group_id)
        err = client_error(await self.store.append(self.partition_of(group_id), records))
        if err == E.NONE and self.consumer.groups.get(group_id) is consumer and not consumer.members:
            del self.consumer.groups[group_id]
            self.table.forget(group_id)
            log.info("Deleted consumer group %s", group_id)
        return err

    async def delete_offsets(self, group_id: str, partitions: list[TopicPartition]
                             ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: refused per partition for topics the (non-empty) group still consumes."""
        return await self.offset_ops.delete_offsets(group_id, partitions)

    async def expire_offsets(self) -> int:
        """offsets.retention.minutes: drop the offsets of groups that have been Empty that long (of consumer groups:
        those of topics nobody subscribes to, that long after their commit)."""
        owned = self.ownership.owned()
        expired = await self.offset_ops.expire(owned)
        now = self.now_ms()
        for gid, group in list(self.consumer.groups.items()):
            p = self.partition_of(gid)
            offsets = self.table.offsets.get(gid, {})
            gone = consumer_rules.expired_offsets(group, {tp: v.commit_timestamp for tp, v in offsets.items()}, now,
                                                  self.config.retention_ms) if p in owned else []
            if gone and await self.store.append(p, [(offset_key_bytes(gid, *tp), None) for tp in gone]) == E.NONE:
                for tp in gone:
                    offsets.pop(tp, None)
                expired += len(gone)
                log.info("Expired %d offsets of consumer group %s", len(gone), gid)
        return expired

    async def partitions_deleted(self, deleted: list[TopicPartition]) -> int:
        """Topics were deleted: drop their committed offsets from every group coordinated here."""
        return await self.offset_ops.partitions_deleted(deleted, self.ownership.owned())


def _resolve(fut: asyncio.Future | None, result: Any) -> None:
    if fut is not None and not fut.done():
        fut.set_result(result)
