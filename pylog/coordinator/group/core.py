"""What every coordinator operation shares: which groups this broker owns, loading, timers, persistence.

Ownership is checked per request against the broker's current leadership of the group's
`__consumer_offsets` partition: not the leader answers NOT_COORDINATOR (and forgets the
partition's groups); a leader epoch newer than the one loaded starts a reload and answers
COORDINATOR_LOAD_IN_PROGRESS until it is done. So a missed leadership callback can't leave
stale state serving requests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable

from pylog.common.clock import now_ms as wall_ms
from pylog.coordinator.group.api import CoordinatorConfig, SyncResult
from pylog.coordinator.group.group import Group, Member
from pylog.coordinator.group.hashing import partition_for
from pylog.coordinator.group.pending import PendingTxnOffsets, complete
from pylog.coordinator.group.records import (
    GroupKey, GroupValue, MemberValue, OffsetValue, encode_group_key, encode_group_value,
)
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import OffsetsLog, Replayed, client_error
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.coordinator.group")


class CoordinatorCore:
    """State and bookkeeping shared by the membership and offset operations."""

    def __init__(self, store: OffsetsLog, config: CoordinatorConfig, now_ms: Callable[[], int] = wall_ms) -> None:
        self.store = store
        self.config = config
        self.now_ms = now_ms
        self.groups: dict[str, Group] = {}
        self.offsets: dict[str, dict[tuple[str, int], OffsetValue]] = {}
        self.positions: dict[str, dict[tuple[str, int], int]] = {}  # log offset of each committed offset's batch
        self.pending = PendingTxnOffsets()  # transactional offsets waiting for their marker
        self.inflight: dict[tuple[str, tuple[str, int]], int] = {}  # plain commits being appended, per partition
        self.markers_while_loading: dict[int, list[tuple[int, bool, int]]] = {}  # p -> (producer, commit, offset)
        self.loaded: dict[int, int] = {}  # partition -> leader epoch its state was loaded at
        self._loading: dict[int, tuple[int, asyncio.Task]] = {}
        self._timers: dict[tuple, asyncio.TimerHandle] = {}
        self.initial_delay: set[str] = set()  # groups in their initial-rebalance delay
        self._background: set[asyncio.Task] = set()

    # -- ownership ------------------------------------------------------------------------

    def partition_of(self, group_id: str) -> int:
        """The `__consumer_offsets` partition that holds this group."""
        return partition_for(group_id, self.store.num_partitions())

    def check(self, group_id: str | None) -> ErrorCode:
        """NONE when this broker coordinates the group now, else the error the client should see."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        return self.check_partition(self.partition_of(group_id))

    def check_partition(self, p: int) -> ErrorCode:
        """NONE when this broker leads partition `p` and has loaded it."""
        epoch = self.store.leader_epoch(p)
        if epoch is None:
            if p in self.loaded or p in self._loading:
                self.unload(p)
            return ErrorCode.NOT_COORDINATOR
        if self.loaded.get(p) == epoch:
            return ErrorCode.NONE
        self.start_load(p, epoch)
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

    def owned_partitions(self) -> list[int]:
        """Partitions loaded and still led here."""
        return [p for p in list(self.loaded) if self.check_partition(p) == ErrorCode.NONE]

    def loading_any(self) -> bool:
        """Whether some partition is still being loaded."""
        return bool(self._loading)

    def start_load(self, p: int, epoch: int) -> None:
        """Load partition `p` (at leader `epoch`) in the background, unless that load is under way."""
        current = self._loading.get(p)
        if current is not None and current[0] == epoch:
            return
        if current is not None:
            current[1].cancel()
        self.unload(p)
        self._loading[p] = (epoch, self.background(self._load(p, epoch)))

    async def _load(self, p: int, epoch: int) -> None:
        t0 = time.monotonic()
        state = Replayed()
        try:
            async for record in self.store.read(p):
                state.apply(*record)
        except Exception:
            log.exception("Loading __consumer_offsets-%d failed; the next request retries", p)
            self._loading.pop(p, None)
            return
        if self._loading.get(p, (None,))[0] != epoch or self.store.leader_epoch(p) != epoch:
            return  # leadership moved while we read
        del self._loading[p]
        for gid, offsets in state.offsets.items():
            self.offsets[gid] = offsets
            self.positions[gid] = state.positions.get(gid, {})
            self.groups.setdefault(gid, Group(gid, state_timestamp_ms=self.now_ms()))
        for pid, groups in state.pending.by_producer.items():
            for gid, parts in groups.items():
                self.groups.setdefault(gid, Group(gid, state_timestamp_ms=self.now_ms()))
                for tp, (value, position) in parts.items():
                    self.pending.add(pid, gid, tp, value, position)
        for gid, value in state.groups.items():
            self.groups[gid] = self._group_from(gid, value)
        self.loaded[p] = epoch
        for pid, commit, offset in self.markers_while_loading.pop(p, []):
            if offset > state.last_offset:  # written after the part of the log we read
                self.complete_markers(p, pid, commit)
        log.info("Loaded __consumer_offsets-%d at epoch %d: %d groups, %d offsets in %.0f ms", p, epoch,
                 sum(1 for g in self.groups if self.partition_of(g) == p),
                 sum(len(o) for g, o in self.offsets.items() if self.partition_of(g) == p),
                 (time.monotonic() - t0) * 1000)

    def _group_from(self, gid: str, v: GroupValue) -> Group:
        g = Group(gid, generation=v.generation, protocol_type=v.protocol_type or None, protocol_name=v.protocol,
                  leader_id=v.leader, state_timestamp_ms=v.current_state_timestamp)
        for mv in v.members:
            protocols = [(v.protocol, mv.subscription)] if v.protocol else []
            m = Member(mv.member_id, mv.instance_id, mv.client_id, mv.client_host, mv.rebalance_timeout,
                       mv.session_timeout, v.protocol_type, protocols, mv.assignment)
            g.members[m.member_id] = m
            if m.instance_id:
                g.static_members[m.instance_id] = m.member_id
            self.schedule_heartbeat(g, m)
        if g.members:
            g.state = GroupState.STABLE  # members must heartbeat within their session to stay
        return g

    def unload(self, p: int) -> None:
        """Forget partition `p`'s groups: parked requests get NOT_COORDINATOR, timers stop."""
        was_loaded = self.loaded.pop(p, None) is not None
        loading = self._loading.pop(p, None)
        if loading is not None:
            loading[1].cancel()
        self.markers_while_loading.pop(p, None)
        gone = {g for g in self.groups if self.partition_of(g) == p}
        self.pending.drop_groups(gone)
        for gid in gone:
            self.positions.pop(gid, None)
            group = self.groups.pop(gid)
            for m in group.members.values():
                self.answer_join(m, None, ErrorCode.NOT_COORDINATOR)
                self.answer_sync(m, SyncResult(ErrorCode.NOT_COORDINATOR))
            for key in [k for k in self._timers if k[1] == gid]:
                self._timers.pop(key).cancel()
            self.initial_delay.discard(gid)
            self.offsets.pop(gid, None)
        if was_loaded:
            log.info("Unloaded the groups of __consumer_offsets-%d", p)

    def complete_markers(self, p: int, producer_id: int, commit: bool) -> int:
        """Apply a transaction marker of `producer_id` written to partition `p`: its pending offsets in
        that partition's groups become committed (COMMIT) or are dropped (ABORT). How many were committed."""
        groups = {g for g in self.pending.groups_of(producer_id) if self.partition_of(g) == p}
        applied = complete(self.pending, self.offsets, self.positions, producer_id, commit, groups)
        if groups:
            log.info("%s the transactional offsets of producer %d in group(s) %s", "Committed" if commit else
                     "Aborted", producer_id, ", ".join(sorted(groups)))
        return applied

    def background(self, coro: Any) -> asyncio.Task:
        """Run a coroutine without waiting for it (a reference is kept until it ends)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- timers ---------------------------------------------------------------------------

    def schedule(self, key: tuple, delay_ms: int, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` after `delay_ms`, replacing the timer under the same key."""
        self.cancel(key)

        def fire() -> None:
            self._timers.pop(key, None)
            fn(*args)
        self._timers[key] = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, fire)

    def cancel(self, key: tuple) -> None:
        """Stop a timer if it is set."""
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

    def has_timer(self, key: tuple) -> bool:
        """Whether a timer is set under `key`."""
        return key in self._timers

    def schedule_heartbeat(self, group: Group, m: Member) -> None:
        """(Re)start a member's session timer."""
        self.schedule(("hb", group.group_id, m.member_id), m.session_timeout_ms, self.on_session_expired,
                      group, m.member_id)

    def on_session_expired(self, group: Group, member_id: str) -> None:
        """A member stopped heartbeating (defined by the membership operations)."""
        raise NotImplementedError

    # -- parked requests --------------------------------------------------------------------

    @staticmethod
    def answer_join(m: Member, result: Any, error: ErrorCode | None = None) -> None:
        """Complete a member's parked JoinGroup, if any, with a result or an error."""
        fut, m.join_waiter = m.join_waiter, None
        if fut is not None and not fut.done():
            fut.set_result(result if error is None else error)

    @staticmethod
    def answer_sync(m: Member, result: Any) -> None:
        """Complete a member's parked SyncGroup, if any."""
        fut, m.sync_waiter = m.sync_waiter, None
        if fut is not None and not fut.done():
            fut.set_result(result)

    # -- persistence ----------------------------------------------------------------------

    async def persist_group(self, group: Group) -> ErrorCode:
        """Write the group's metadata record (members with subscriptions and assignments)."""
        members = tuple(MemberValue(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                    m.session_timeout_ms, m.metadata_for(group.protocol_name)
                                    if group.protocol_name else b"", m.assignment)
                        for m in group.members.values())
        value = GroupValue(group.protocol_type or "", group.generation, group.protocol_name, group.leader_id,
                           group.state_timestamp_ms, members)
        err = await self.store.append(self.partition_of(group.group_id),
                                      [(encode_group_key(GroupKey(group.group_id)), encode_group_value(value))])
        if err != ErrorCode.NONE:
            log.warning("Could not store the metadata of group %s (generation %d): %s", group.group_id,
                        group.generation, err.name)
        return client_error(err)
