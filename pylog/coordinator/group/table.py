"""What the group coordinator holds in memory for the partitions it serves, and how it is rebuilt and dropped.

Plain data with no I/O: the groups, their committed offsets (with the log position of each, so a
later write wins), the transactional offsets pending their marker, and the commits being appended.
`install` puts a replayed partition in place; `drop` forgets one.
"""

from __future__ import annotations

import logging
from typing import Callable

from pylog.coordinator.group.group import Group, Member
from pylog.coordinator.group.pending import PendingTxnOffsets, complete
from pylog.coordinator.group.records import (
    GroupKey, GroupValue, MemberValue, OffsetValue, encode_group_key, encode_group_value,
)
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import Record, Replayed

log = logging.getLogger("pylog.coordinator.group")
TopicPartition = tuple[str, int]


class GroupTable:
    """The groups and offsets of the `__consumer_offsets` partitions this broker serves."""

    def __init__(self, partition_of: Callable[[str], int]) -> None:
        self.partition_of = partition_of
        self.groups: dict[str, Group] = {}
        self.offsets: dict[str, dict[TopicPartition, OffsetValue]] = {}
        self.positions: dict[str, dict[TopicPartition, int]] = {}  # log offset of each committed offset's batch
        self.pending = PendingTxnOffsets()  # transactional offsets waiting for their marker
        self.inflight: dict[tuple[str, TopicPartition], int] = {}  # plain commits being appended, per partition
        self.markers_while_loading: dict[int, list[tuple[int, bool, int]]] = {}  # p -> (producer, commit, offset)

    def groups_of(self, p: int) -> list[Group]:
        """The groups that live on partition `p`."""
        return [g for g in self.groups.values() if self.partition_of(g.group_id) == p]

    def install(self, p: int, state: Replayed, now: int) -> list[Group]:
        """Take partition `p`'s replayed state; the groups with members (whose sessions start now)."""
        for gid, offsets in state.offsets.items():
            self.offsets[gid] = offsets
            self.positions[gid] = state.positions.get(gid, {})
            self.groups.setdefault(gid, Group(gid, state_timestamp_ms=now))
        for pid, groups in state.pending.by_producer.items():
            for gid, parts in groups.items():
                self.groups.setdefault(gid, Group(gid, state_timestamp_ms=now))
                for tp, (value, position) in parts.items():
                    self.pending.add(pid, gid, tp, value, position)
        live = []
        for gid, value in state.groups.items():
            group = self.groups[gid] = group_from(gid, value)
            if group.members:
                live.append(group)
        for pid, commit, offset in self.markers_while_loading.pop(p, []):
            if offset > state.last_offset:  # written after the part of the log we read
                self.complete_markers(p, pid, commit)
        return live

    def drop(self, p: int) -> list[Group]:
        """Forget partition `p`'s groups, offsets and pending offsets; the groups dropped."""
        self.markers_while_loading.pop(p, None)
        gone = [g for g in self.groups_of(p)]
        self.pending.drop_groups({g.group_id for g in gone})
        for g in gone:
            del self.groups[g.group_id]
            self.positions.pop(g.group_id, None)
            self.offsets.pop(g.group_id, None)
        return gone

    def complete_markers(self, p: int, producer_id: int, commit: bool) -> int:
        """Apply a transaction marker of `producer_id` written to partition `p`: its pending offsets in
        that partition's groups become committed (COMMIT) or are dropped (ABORT). How many were committed."""
        groups = {g for g in self.pending.groups_of(producer_id) if self.partition_of(g) == p}
        applied = complete(self.pending, self.offsets, self.positions, producer_id, commit, groups)
        if groups:
            log.info("%s the transactional offsets of producer %d in group(s) %s", "Committed" if commit else
                     "Aborted", producer_id, ", ".join(sorted(groups)))
        return applied

    def forget(self, group_id: str) -> None:
        """A deleted group: its metadata, offsets and open transactions' offsets go (as Kafka: they commit nothing)."""
        self.groups.pop(group_id, None)
        self.offsets.pop(group_id, None)
        self.positions.pop(group_id, None)
        self.pending.drop_groups({group_id})


def group_from(gid: str, v: GroupValue) -> Group:
    """A group as its metadata record left it: members that must heartbeat within their session to stay."""
    g = Group(gid, generation=v.generation, protocol_type=v.protocol_type or None, protocol_name=v.protocol,
              leader_id=v.leader, state_timestamp_ms=v.current_state_timestamp)
    for mv in v.members:
        protocols = [(v.protocol, mv.subscription)] if v.protocol else []
        m = Member(mv.member_id, mv.instance_id, mv.client_id, mv.client_host, mv.rebalance_timeout,
                   mv.session_timeout, v.protocol_type, protocols, mv.assignment)
        g.members[m.member_id] = m
        if m.instance_id:
            g.static_members[m.instance_id] = m.member_id
    if g.members:
        g.state = GroupState.STABLE
    return g


def metadata_record(group: Group) -> Record:
    """The group's metadata record (members with subscriptions and assignments), as Kafka writes it."""
    members = tuple(MemberValue(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                m.session_timeout_ms, m.metadata_for(group.protocol_name)
                                if group.protocol_name else b"", m.assignment)
                    for m in group.members.values())
    value = GroupValue(group.protocol_type or "", group.generation, group.protocol_name, group.leader_id,
                       group.state_timestamp_ms, members)
    return encode_group_key(GroupKey(group.group_id)), encode_group_value(value)
