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
from typing import Callable

from pylog.common.errors import ErrorCode
from pylog.coordinator.consumer import decisions as rules
from pylog.coordinator.consumer.decisions import (
    CancelTimer, ConsumerConfig, HeartbeatRequest, HeartbeatResult, Outcome, SetTimer, TimerKey, Write,
)
from pylog.coordinator.consumer.model import ConsumerGroup, TopicsView
from pylog.coordinator.consumer.records import ConsumerReplay
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

    def install(self, p: int, replay: ConsumerReplay) -> None:
        """A loaded partition's consumer groups take over; every member's session starts afresh (as Kafka)."""
        for gid, group in replay.groups.items():
            self.groups[gid] = group
            for mid in group.members:
                self._set_timer(("session", gid, mid), self.config.session_timeout_ms)
        if replay.groups:
            log.info("__consumer_offsets-%d holds %d consumer groups", p, len(replay.groups))

    def drop(self, p: int) -> None:
        """The partition moved away: forget its consumer groups and stop their timers."""
        for gid in [g for g in self.groups if self.partition_of(g) == p]:
            del self.groups[gid]
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

    def check_commit(self, group_id: str, member_id: str, epoch: int, instance_id: str | None,
                     transactional: bool) -> ErrorCode:
        """OffsetCommit v9's or TxnOffsetCommit's member and epoch check."""
        return rules.check_commit(self.groups.get(group_id), member_id, epoch, instance_id, transactional)

    def check_fetch(self, group_id: str, member_id: str, epoch: int) -> ErrorCode:
        """OffsetFetch v9's member and epoch check."""
        return rules.check_fetch(self.groups.get(group_id), member_id, epoch)

    async def _carry(self, gid: str, out: Outcome) -> ErrorCode:
        """Install the rule's group, then carry out its effects in order; the write's error, if any."""
        if out.group is not None:
            self.groups[gid] = out.group
        if out.note:
            log.info("%s", out.note)
            GROUP_METRICS.rebalances += 1
        err = E.NONE
        for fx in out.effects:
            if isinstance(fx, SetTimer):
                self._set_timer(fx.key, fx.delay_ms)
            elif isinstance(fx, CancelTimer):
                handle = self._timers.pop(fx.key, None)
                if handle is not None:
                    handle.cancel()
            elif isinstance(fx, Write):
                err = client_error(await self.store.append(self.partition_of(gid), fx.records))
                if err != E.NONE:
                    log.warning("Could not store %d records of consumer group %s: %s", len(fx.records), gid, err.name)
        return err

    def _set_timer(self, key: TimerKey, delay_ms: int) -> None:
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, self._fired, key)

    def _fired(self, key: TimerKey) -> None:
        self._timers.pop(key, None)
        group = self.groups.get(key[1])
        out = rules.timer_fired(group, key) if group is not None else None
        if out is not None:
            task = asyncio.get_running_loop().create_task(self._carry(key[1], out))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
