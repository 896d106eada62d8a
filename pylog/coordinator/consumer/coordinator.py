"""The KIP-848 consumer-group coordinator: a thin async shell over the pure rules (decisions.py).

It lives beside the classic coordinator (pylog/coordinator/group/coordinator.py), which owns the
`__consumer_offsets` partitions (ownership.py), committed offsets and the load; this shell keeps the
consumer groups of the partitions served here, their timers (member sessions, revocation deadlines), and
writes the rules' records through the same `OffsetsLog` seam before it answers, as Kafka does.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Callable, Coroutine

from pylog.common.errors import ErrorCode
from pylog.coordinator.consumer import classic as classic_rules, decisions as rules, migration
from pylog.coordinator.consumer.decisions import (
    CancelTimer, ConsumerConfig, HeartbeatRequest, HeartbeatResult, Outcome, SetTimer, TimerKey, Write,
)
from pylog.coordinator.consumer.model import ConsumerGroup, TopicsView
from pylog.coordinator.consumer.records import ConsumerReplay, group_tombstones
from pylog.coordinator.group.api import JoinRequest, JoinResult, SyncResult
from pylog.coordinator.group.group import Group
from pylog.coordinator.group.store import OffsetsLog, client_error
from pylog.metrics.recorders import GROUPS as GROUP_METRICS

log = logging.getLogger("pylog.coordinator.consumer")
E = ErrorCode


class ConsumerCoordinator:
    """KIP-848 consumer groups of the `__consumer_offsets` partitions this broker serves."""

    def __init__(self, store: OffsetsLog, config: ConsumerConfig, partition_of: Callable[[str], int],
                 topics: Callable[[], TopicsView]) -> None:
        self.store, self.config, self.partition_of, self.topics = store, config, partition_of, topics
        self.groups: dict[str, ConsumerGroup] = {}
        self._timers: dict[TimerKey, asyncio.TimerHandle] = {}
        self._background: set[asyncio.Task] = set()
        # A group that went back to classic (downgrade) is handed to the classic coordinator through this.
        self.downgraded: Callable[[Group], None] = lambda group: None

    def install(self, p: int, replay: ConsumerReplay) -> None:
        """A loaded partition's consumer groups take over; every member's session starts afresh (as Kafka)."""
        for gid, group in replay.groups.items():
            self.groups[gid] = group
            for mid, m in group.members.items():
                self._set_timer(("session", gid, mid), rules.session_ms(m, self.config))
        if replay.groups:
            log.info("__consumer_offsets-%d holds %d consumer groups", p, len(replay.groups))

    def drop(self, p: int) -> None:
        """The partition moved away: forget its consumer groups and stop their timers."""
        for gid in [g for g in self.groups if self.partition_of(g) == p]:
            del self.groups[gid]
            self._cancel_all(gid)

    def _cancel_all(self, gid: str) -> None:
        for key in [k for k in self._timers if k[1] == gid]:
            self._timers.pop(key).cancel()

    async def heartbeat(self, req: HeartbeatRequest) -> HeartbeatResult:
        """A ConsumerGroupHeartbeat (the caller checked ownership and that no classic group has the id)."""
        out = rules.heartbeat(self.groups.get(req.group_id), req, self.topics(), self.config, str(uuid.uuid4()))
        err = await self._carry(req.group_id, out)
        if err != E.NONE:
            return HeartbeatResult(err, f"Could not store the group's records: {err.name}",
                                   member_epoch=req.member_epoch)
        return out.reply

    # -- classic members of consumer groups (classic.py) and the migration between protocols (migration.py) --

    async def classic_join(self, req: JoinRequest, known_id_required: bool) -> JoinResult:
        """A classic member's JoinGroup to a non-empty consumer group (the caller checked both)."""
        group = self.groups[req.group_id]
        out = classic_rules.join(group, req, self.topics(), self.config, str(uuid.uuid4()), known_id_required)
        err = await self._carry(req.group_id, out)
        return JoinResult(err, member_id=req.member_id) if err != E.NONE else out.reply

    def classic_sync(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
                     protocol_type: str | None, protocol_name: str | None) -> SyncResult:
        """A classic member's SyncGroup: its partitions of the consumer group."""
        out = classic_rules.sync(self.groups[group_id], generation, member_id, instance_id, protocol_type,
                                 protocol_name)
        self._timers_of(out)
        return out.reply

    def classic_heartbeat(self, group_id: str, generation: int, member_id: str, instance_id: str | None
                          ) -> ErrorCode:
        """A classic member's Heartbeat in a consumer group."""
        out = classic_rules.heartbeat(self.groups[group_id], generation, member_id, instance_id)
        self._timers_of(out)
        return out.reply

    def classic_leave(self, group_id: str, members: list[tuple[str, str | None]]
                      ) -> tuple[ErrorCode, list[ErrorCode]]:
        """A LeaveGroup of classic members of a consumer group; the group changes now, its records follow."""
        out = classic_rules.leave(self.groups[group_id], members)
        if out.effects:
            self._spawn(self._carry(group_id, out))
        return out.reply

    async def upgrade(self, classic: Group, records: list) -> ErrorCode:
        """A classic group becomes a consumer group (the caller checked the policy and emptied the classic side):
        write the classic tombstone and the consumer group's records, then serve it with its members' sessions."""
        group = migration.from_classic(classic, self.topics())
        err = client_error(await self.store.append(self.partition_of(group.group_id),
                                                   records + migration.consumer_records(group)))
        if err != E.NONE:
            return err
        self.groups[group.group_id] = group
        for mid, m in group.members.items():
            self._set_timer(("session", group.group_id, mid), rules.session_ms(m, self.config))
        log.info("Classic group %s became a consumer group at epoch %d with %d classic members", group.group_id,
                 group.group_epoch, len(group.members))
        GROUP_METRICS.rebalances += 1
        return E.NONE

    async def drop_empty(self, group_id: str) -> None:
        """An empty consumer group gives way to a classic group of the same id (its offsets stay)."""
        group = self.groups.get(group_id)
        if group is None or group.members:
            return
        err = client_error(await self.store.append(self.partition_of(group_id), group_tombstones(group_id)))
        if err == E.NONE and self.groups.get(group_id) is group and not group.members:
            del self.groups[group_id]
            self._cancel_all(group_id)
            log.info("Empty consumer group %s gave way to a classic group", group_id)

    def check_commit(self, group_id: str, member_id: str, epoch: int, instance_id: str | None,
                     transactional: bool) -> ErrorCode:
        """OffsetCommit v9's or TxnOffsetCommit's member and epoch check."""
        return rules.check_commit(self.groups.get(group_id), member_id, epoch, instance_id, transactional)

    def check_fetch(self, group_id: str, member_id: str, epoch: int) -> ErrorCode:
        """OffsetFetch v9's member and epoch check."""
        return rules.check_fetch(self.groups.get(group_id), member_id, epoch)

    def _carry(self, gid: str, out: Outcome) -> Coroutine[Any, Any, ErrorCode]:
        """Install the rule's group (or hand a downgraded one over) and set its timers now, so no later request
        sees the group as it was; the coroutine returned writes the rule's records in order (its error, if any)."""
        if out.group is not None:
            self.groups[gid] = out.group
        elif out.classic is not None:  # a downgrade: the classic coordinator takes the group over
            self.groups.pop(gid, None)
            self._cancel_all(gid)
            self.downgraded(out.classic)
        if out.note:
            log.info("%s", out.note)
            GROUP_METRICS.rebalances += 1
        self._timers_of(out)
        return self._write(gid, [fx.records for fx in out.effects if isinstance(fx, Write)])

    async def _write(self, gid: str, batches: list[list]) -> ErrorCode:
        err = E.NONE
        for records in batches:
            err = client_error(await self.store.append(self.partition_of(gid), records))
            if err != E.NONE:
                log.warning("Could not store %d records of consumer group %s: %s", len(records), gid, err.name)
        return err

    def _timers_of(self, out: Outcome) -> None:
        """Carry out an outcome that only sets and cancels timers (a classic member's SyncGroup or Heartbeat)."""
        for fx in out.effects:
            if isinstance(fx, SetTimer):
                self._set_timer(fx.key, fx.delay_ms)
            elif isinstance(fx, CancelTimer):
                handle = self._timers.pop(fx.key, None)
                if handle is not None:
                    handle.cancel()

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _set_timer(self, key: TimerKey, delay_ms: int) -> None:
        if key[0] == "join" and key in self._timers:
            return  # Kafka's scheduleConsumerGroupJoinTimeoutIfAbsent: the first rejoin deadline holds
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, self._fired, key)

    def _fired(self, key: TimerKey) -> None:
        self._timers.pop(key, None)
        group = self.groups.get(key[1])
        out = rules.timer_fired(group, key, self.config) if group is not None else None
        if out is not None:
            self._spawn(self._carry(key[1], out))
