"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup over the group state machine (Kafka's classic protocol).

A JoinGroup parks (a future on its member) until the join phase completes: when every known
member has rejoined and no KIP-394 member id is pending, or when the group's rebalance timeout
(the initial-rebalance delay for a group leaving Empty) fires. Then the generation moves on, the
leader alone gets the member list, and followers' SyncGroups park until the leader's SyncGroup
brings the assignment, which is stored (acks=all) before anyone gets it.
"""

from __future__ import annotations

import asyncio
import logging

from pylog.coordinator.group.api import JoinRequest, JoinResult, SyncResult
from pylog.coordinator.group.core import CoordinatorCore
from pylog.coordinator.group.group import Group, Member, new_member_id
from pylog.coordinator.group.state import GroupState
from pylog.metrics.recorders import GROUPS as GROUP_METRICS
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.coordinator.group")
S = GroupState
E = ErrorCode


class MembershipOps(CoordinatorCore):
    """The rebalance protocol."""

    # -- JoinGroup ------------------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        """Handle a JoinGroup; may wait for the rest of the group."""
        err = self.check(req.group_id)
        if err != E.NONE:
            return JoinResult(err, member_id=req.member_id)
        cfg = self.config
        if not cfg.min_session_timeout_ms <= req.session_timeout_ms <= cfg.max_session_timeout_ms:
            return JoinResult(E.INVALID_SESSION_TIMEOUT, member_id=req.member_id)
        group = self.groups.get(req.group_id)
        if group is None:
            if req.member_id:
                return JoinResult(E.UNKNOWN_MEMBER_ID, member_id=req.member_id)
            group = self.groups[req.group_id] = Group(req.group_id, state_timestamp_ms=self.now_ms())
        if group.state == S.DEAD:
            return JoinResult(E.COORDINATOR_NOT_AVAILABLE if not req.member_id else E.UNKNOWN_MEMBER_ID,
                              member_id=req.member_id)
        if not group.supports(req.protocol_type, req.protocols):
            return JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=req.member_id)
        fut = asyncio.get_running_loop().create_future()
        if not req.member_id:
            immediate = self._join_new(group, req, fut)
        else:
            immediate = self._join_known(group, req, fut)
        if immediate is not None:
            return immediate
        result = await fut
        return JoinResult(result, member_id=req.member_id) if isinstance(result, ErrorCode) else result

    def _is_full(self, group: Group) -> bool:
        return len(group.members) + len(group.pending_members) >= self.config.max_size

    def _join_new(self, group: Group, req: JoinRequest, fut: asyncio.Future) -> JoinResult | None:
        member_id = new_member_id(req.client_id, req.instance_id)
        if req.instance_id and req.instance_id in group.static_members:
            return self._rejoin_static(group, req, group.static_members[req.instance_id], member_id, fut)
        if self._is_full(group):
            return JoinResult(E.GROUP_MAX_SIZE_REACHED, member_id="")
        if not req.instance_id and req.require_known_member_id:
            group.pending_members.add(member_id)
            self.schedule(("pending", group.group_id, member_id), req.session_timeout_ms,
                          self._pending_expired, group, member_id)
            return JoinResult(E.MEMBER_ID_REQUIRED, member_id=member_id)
        self._add_and_rebalance(group, req, member_id, fut)
        return None

    def _join_known(self, group: Group, req: JoinRequest, fut: asyncio.Future) -> JoinResult | None:
        mid = req.member_id
        if req.instance_id:
            known = group.static_members.get(req.instance_id)
            if known is not None and known != mid:
                return JoinResult(E.FENCED_INSTANCE_ID, member_id=mid)
        if mid in group.pending_members:
            if len(group.members) >= self.config.max_size:
                group.pending_members.discard(mid)
                return JoinResult(E.GROUP_MAX_SIZE_REACHED, member_id=mid)
            self.cancel(("pending", group.group_id, mid))
            self._add_and_rebalance(group, req, mid, fut)
            return None
        m = group.members.get(mid)
        if m is None or group.state in (S.EMPTY, S.DEAD):
            return JoinResult(E.UNKNOWN_MEMBER_ID, member_id=mid)
        if group.state == S.PREPARING_REBALANCE:
            self._update_member(group, m, req, fut)
            self.try_complete_join(group)
            return None
        if group.state == S.COMPLETING_REBALANCE and m.matches(req.protocols):
            return self._current(group, m)  # a resend of the join whose answer was lost
        if group.state == S.STABLE and mid != group.leader_id and m.matches(req.protocols):
            return self._current(group, m)
        self._update_member(group, m, req, fut)
        self.prepare_rebalance(group, f"member {mid} rejoined with new metadata or as the leader")
        return None

    def _rejoin_static(self, group: Group, req: JoinRequest, old_id: str, new_id: str,
                       fut: asyncio.Future) -> JoinResult | None:
        """KIP-345: a known group.instance.id joins without its member id (a restart)."""
        old = group.members[old_id]
        self.answer_join(old, None, E.FENCED_INSTANCE_ID)
        self.answer_sync(old, SyncResult(E.FENCED_INSTANCE_ID))
        self.cancel(("hb", group.group_id, old_id))
        proto = group.protocol_name
        unchanged = proto is not None and dict(req.protocols).get(proto) == dict(old.protocols).get(proto)
        m = group.replace_static(req.instance_id or "", old_id, new_id)
        m.client_id, m.client_host = req.client_id, req.client_host
        m.session_timeout_ms, m.rebalance_timeout_ms = req.session_timeout_ms, req.rebalance_timeout_ms
        log.info("Static member %s of group %s rejoined as %s (was %s)", req.instance_id, group.group_id, new_id,
                 old_id)
        if group.state == S.STABLE and unchanged:
            m.protocols = list(req.protocols)
            self.schedule_heartbeat(group, m)
            return self._current(group, m)  # no rebalance: the member keeps its assignment
        self._update_member(group, m, req, fut)
        if group.state == S.PREPARING_REBALANCE:
            self.try_complete_join(group)
        else:
            self.prepare_rebalance(group, f"static member {req.instance_id} rejoined")
        return None

    def _current(self, group: Group, m: Member) -> JoinResult:
        self.schedule_heartbeat(group, m)
        members = self._member_list(group) if m.member_id == group.leader_id else []
        return JoinResult(E.NONE, group.generation, group.protocol_type, group.protocol_name,
                          group.leader_id or "", m.member_id, members)

    @staticmethod
    def _member_list(group: Group) -> list[tuple[str, str | None, bytes]]:
        name = group.protocol_name or ""
        return [(x.member_id, x.instance_id, x.metadata_for(name)) for x in group.members.values()
                if name in {n for n, _ in x.protocols}]

    def _add_and_rebalance(self, group: Group, req: JoinRequest, member_id: str, fut: asyncio.Future) -> None:
        m = Member(member_id, req.instance_id, req.client_id, req.client_host, req.rebalance_timeout_ms,
                   req.session_timeout_ms, req.protocol_type, list(req.protocols), is_new=True, join_waiter=fut)
        group.add(m)
        group.new_member_added = True
        self.schedule_heartbeat(group, m)
        if group.state == S.PREPARING_REBALANCE:
            self.try_complete_join(group)
        else:
            self.prepare_rebalance(group, f"adding new member {member_id}")

    def _update_member(self, group: Group, m: Member, req: JoinRequest, fut: asyncio.Future) -> None:
        if m.join_waiter is not None and m.join_waiter is not fut:
            self.answer_join(m, None, E.REBALANCE_IN_PROGRESS)
        m.protocols = list(req.protocols)
        m.session_timeout_ms, m.rebalance_timeout_ms = req.session_timeout_ms, req.rebalance_timeout_ms
        m.join_waiter = fut
        self.schedule_heartbeat(group, m)

    # -- the join phase -------------------------------------------------------------------

    def prepare_rebalance(self, group: Group, reason: str) -> None:
        """Start a join phase: parked syncs fail, the join timer starts."""
        if group.state == S.COMPLETING_REBALANCE:
            for m in group.members.values():
                m.assignment = b""
                self.answer_sync(m, SyncResult(E.REBALANCE_IN_PROGRESS))
        timeout = group.rebalance_timeout_ms()
        if group.state == S.EMPTY:
            delay = min(self.config.initial_rebalance_delay_ms, timeout)
            group.new_member_added = False
            self.initial_delay.add(group.group_id)
            self.schedule(("join", group.group_id), delay, self._initial_delay_fired, group, delay,
                          max(timeout - delay, 0))
        else:
            self.schedule(("join", group.group_id), timeout, self.complete_join, group)
        log.info("Preparing to rebalance group %s in state %s with old generation %d (reason: %s)",
                 group.group_id, group.state.value, group.generation, reason)
        group.to(S.PREPARING_REBALANCE, self.now_ms())
        self.try_complete_join(group)  # e.g. the last member left: nothing to wait for

    def _initial_delay_fired(self, group: Group, delay: int, remaining: int) -> None:
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            step = min(delay, remaining)
            self.schedule(("join", group.group_id), step, self._initial_delay_fired, group, delay, remaining - step)
        else:
            self.initial_delay.discard(group.group_id)
            self.complete_join(group)

    def try_complete_join(self, group: Group) -> None:
        """Finish the join phase early once everybody is in (not during the initial delay)."""
        if group.state != S.PREPARING_REBALANCE or not group.has_all_joined():
            return
        if group.group_id in self.initial_delay:
            return  # Kafka never ends the initial-rebalance delay early: more members may be coming
        self.cancel(("join", group.group_id))
        self.complete_join(group)

    def complete_join(self, group: Group) -> None:
        """End the join phase: drop dynamic members that did not rejoin, move to the next generation."""
        if group.state != S.PREPARING_REBALANCE:
            return
        self.cancel(("join", group.group_id))
        self.initial_delay.discard(group.group_id)
        for m in [m for m in group.members.values() if m.join_waiter is None and not m.instance_id]:
            log.info("Removing member %s of group %s: it did not rejoin in time", m.member_id, group.group_id)
            self.cancel(("hb", group.group_id, m.member_id))
            group.remove(m.member_id)
        if group.members and not any(m.join_waiter is not None for m in group.members.values()):
            # Only static members that have not rejoined are left: wait another round for them.
            self.schedule(("join", group.group_id), group.rebalance_timeout_ms(), self.complete_join, group)
            return
        group.next_generation(self.now_ms())
        GROUP_METRICS.rebalances += 1
        log.info("Group %s moved to generation %d (%s) with %d members", group.group_id, group.generation,
                 group.state.value, len(group.members))
        if group.state == S.EMPTY:
            self.background(self.persist_group(group))
            return
        if group.leader_id not in group.members or group.members[group.leader_id].join_waiter is None:
            group.leader_id = next(m.member_id for m in group.members.values() if m.join_waiter is not None)
        members = self._member_list(group)
        for m in group.members.values():
            m.is_new = False
            result = JoinResult(E.NONE, group.generation, group.protocol_type, group.protocol_name,
                                group.leader_id, m.member_id, members if m.member_id == group.leader_id else [])
            self.answer_join(m, result)
            self.schedule_heartbeat(group, m)

    # -- SyncGroup ------------------------------------------------------------------------

    def _validate_member(self, group: Group | None, member_id: str, instance_id: str | None,
                         generation: int | None) -> tuple[ErrorCode, Member | None]:
        """The fencing every member request goes through (static id, member id, generation)."""
        if group is None or group.state == S.DEAD:
            return E.UNKNOWN_MEMBER_ID, None
        if instance_id:
            known = group.static_members.get(instance_id)
            if known is not None and known != member_id:
                return E.FENCED_INSTANCE_ID, None
        m = group.members.get(member_id)
        if m is None:
            return E.UNKNOWN_MEMBER_ID, None
        if generation is not None and generation != group.generation:
            return E.ILLEGAL_GENERATION, m
        return E.NONE, m

    async def sync(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
                   protocol_type: str | None, protocol_name: str | None,
                   assignments: dict[str, bytes]) -> SyncResult:
        """Handle a SyncGroup: the leader brings the assignment, everyone gets theirs."""
        err = self.check(group_id)
        if err != E.NONE:
            return SyncResult(err)
        group = self.groups.get(group_id)
        err, m = self._validate_member(group, member_id, instance_id, generation)
        if err != E.NONE or m is None or group is None:
            return SyncResult(err)
        if (protocol_type and protocol_type != group.protocol_type) or \
                (protocol_name and protocol_name != group.protocol_name):
            return SyncResult(E.INCONSISTENT_GROUP_PROTOCOL)
        if group.state == S.PREPARING_REBALANCE:
            return SyncResult(E.REBALANCE_IN_PROGRESS)
        self.schedule_heartbeat(group, m)
        if group.state == S.STABLE:
            return SyncResult(E.NONE, group.protocol_type, group.protocol_name, m.assignment)
        if group.state != S.COMPLETING_REBALANCE:
            return SyncResult(E.UNKNOWN_MEMBER_ID)
        fut = asyncio.get_running_loop().create_future()
        if m.sync_waiter is not None:
            self.answer_sync(m, SyncResult(E.REBALANCE_IN_PROGRESS))
        m.sync_waiter = fut
        if member_id == group.leader_id:
            await self._store_assignment(group, assignments)
        return await fut

    async def _store_assignment(self, group: Group, assignments: dict[str, bytes]) -> None:
        generation = group.generation
        for mid, m in group.members.items():
            m.assignment = assignments.get(mid, b"")
        err = await self.persist_group(group)
        if group.generation != generation or group.state != S.COMPLETING_REBALANCE \
                or self.groups.get(group.group_id) is not group:
            return  # the group moved on while we wrote; its waiters were answered by that change
        if err != E.NONE:
            for m in group.members.values():
                m.assignment = b""
                self.answer_sync(m, SyncResult(err))
            self.prepare_rebalance(group, f"storing the assignment failed with {err.name}")
            return
        group.to(S.STABLE, self.now_ms())
        for m in group.members.values():
            self.answer_sync(m, SyncResult(E.NONE, group.protocol_type, group.protocol_name, m.assignment))

    # -- Heartbeat ------------------------------------------------------------------------

    def heartbeat(self, group_id: str, generation: int, member_id: str, instance_id: str | None) -> ErrorCode:
        """Handle a Heartbeat: keep the member's session alive, tell it about a rebalance."""
        err = self.check(group_id)
        if err != E.NONE:
            return err
        group = self.groups.get(group_id)
        if group is not None and group.state == S.EMPTY:
            return E.UNKNOWN_MEMBER_ID
        err, m = self._validate_member(group, member_id, instance_id, generation)
        if m is not None and group is not None and err in (E.NONE, E.ILLEGAL_GENERATION):
            self.schedule_heartbeat(group, m)
        if err != E.NONE or group is None:
            return err
        return E.REBALANCE_IN_PROGRESS if group.state == S.PREPARING_REBALANCE else E.NONE

    # -- LeaveGroup and failures ----------------------------------------------------------

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """Handle a LeaveGroup (batched since v3): a group error, else one error per member."""
        err = self.check(group_id)
        if err != E.NONE:
            return err, []
        group = self.groups.get(group_id)
        if group is None or group.state == S.DEAD:
            return E.UNKNOWN_MEMBER_ID, []
        out = []
        for member_id, instance_id in members:
            if instance_id:
                known = group.static_members.get(instance_id)
                if known is None:
                    out.append(E.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and member_id != known:
                    out.append(E.FENCED_INSTANCE_ID)
                    continue
                member_id = known
            if member_id in group.pending_members:
                group.pending_members.discard(member_id)
                self.cancel(("pending", group_id, member_id))
                self.try_complete_join(group)
                out.append(E.NONE)
            elif member_id in group.members:
                self.remove_member(group, member_id, "the consumer left the group")
                out.append(E.NONE)
            else:
                out.append(E.UNKNOWN_MEMBER_ID)
        return E.NONE, out

    def remove_member(self, group: Group, member_id: str, reason: str) -> None:
        """Drop a member and let the group rebalance without it."""
        m = group.members.get(member_id)
        if m is None:
            return
        self.cancel(("hb", group.group_id, member_id))
        self.answer_join(m, None, E.UNKNOWN_MEMBER_ID)
        self.answer_sync(m, SyncResult(E.UNKNOWN_MEMBER_ID))
        group.remove(member_id)
        log.info("Member %s left group %s (%s)", member_id, group.group_id, reason)
        if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self.prepare_rebalance(group, f"removing member {member_id}: {reason}")
        elif group.state == S.PREPARING_REBALANCE:
            self.try_complete_join(group)

    def on_session_expired(self, group: Group, member_id: str) -> None:
        """No heartbeat within the session timeout: the member is gone, unless it waits in a join or sync."""
        m = group.members.get(member_id)
        if m is None or self.groups.get(group.group_id) is not group:
            return
        if m.join_waiter is not None or m.sync_waiter is not None:
            self.schedule_heartbeat(group, m)  # a parked JoinGroup or SyncGroup keeps its member alive (as Kafka)
            return
        self.remove_member(group, member_id, f"its session timed out after {m.session_timeout_ms} ms")

    def _pending_expired(self, group: Group, member_id: str) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            log.info("Pending member %s of group %s never joined; dropped", member_id, group.group_id)
            self.try_complete_join(group)
