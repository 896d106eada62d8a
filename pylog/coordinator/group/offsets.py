"""OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups, OffsetDelete and offset expiry.

A commit is validated against the group (Kafka's ClassicGroup.validateOffsetCommit), written to
the group's `__consumer_offsets` partition with acks=all, and only then visible to OffsetFetch.
"""

from __future__ import annotations

import logging

from pylog.coordinator.group.api import CommitRequest, FetchResult, GroupSummary, MemberSummary, TopicPartition
from pylog.coordinator.group.group import Group
from pylog.coordinator.group.membership import MembershipOps
from pylog.coordinator.group.pending import apply_commit
from pylog.coordinator.group.records import (
    GroupKey, OffsetKey, encode_group_key, encode_offset_key, encode_offset_value, offset_key_bytes,
)
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import client_error
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.coordinator.group")
S = GroupState
E = ErrorCode


class OffsetOps(MembershipOps):
    """Committed offsets and group administration."""

    def _validate_commit(self, req: CommitRequest) -> tuple[ErrorCode, Group | None]:
        group = self.groups.get(req.group_id)
        if group is None:
            if req.generation >= 0 or req.member_id:
                return E.ILLEGAL_GENERATION if req.generation >= 0 else E.UNKNOWN_MEMBER_ID, None
            group = self.groups[req.group_id] = Group(req.group_id, state_timestamp_ms=self.now_ms())
            return E.NONE, group  # a simple group: assign() consumers and admin tools
        if group.state == S.DEAD:
            return E.COORDINATOR_NOT_AVAILABLE, group
        if req.generation < 0 and group.state == S.EMPTY:
            return E.NONE, group
        if req.member_id or req.instance_id or req.generation >= 0:
            err, m = self._validate_member(group, req.member_id, req.instance_id, req.generation)
            if err != E.NONE:
                return err, group
            if m is not None:
                self.schedule_heartbeat(group, m)
        elif group.state != S.EMPTY:
            return E.UNKNOWN_MEMBER_ID, group
        if group.state == S.COMPLETING_REBALANCE:
            return E.REBALANCE_IN_PROGRESS, group
        return E.NONE, group

    async def commit(self, req: CommitRequest) -> dict[TopicPartition, ErrorCode]:
        """Handle an OffsetCommit: one error per partition (all the same when the group refused it)."""
        group_id = req.group_id
        err = self.check(group_id)
        if err == E.NONE:
            err, _ = self._validate_commit(req)
        if err != E.NONE:
            return {tp: err for tp in req.offsets}
        out: dict[TopicPartition, ErrorCode] = {}
        records = []
        limit = self.config.metadata_max_bytes
        for tp, value in req.offsets.items():
            meta = value.metadata
            if len(meta) * 4 > limit and len(meta.encode()) > limit:  # (UTF-8 takes at most 4 bytes a character)
                out[tp] = E.OFFSET_METADATA_TOO_LARGE
                continue
            records.append((offset_key_bytes(group_id, *tp), encode_offset_value(value)))
        if not records:
            return out
        staged = [(group_id, tp) for tp in req.offsets if tp not in out]
        for key in staged:  # an OffsetFetch with require_stable waits for these (Kafka's pendingOffsetCommits)
            self.inflight[key] = self.inflight.get(key, 0) + 1
        try:
            stored, position = await self.store.append_records(self.partition_of(group_id), records)
        finally:
            for key in staged:
                left = self.inflight.pop(key) - 1
                if left:
                    self.inflight[key] = left
        stored = client_error(stored)
        for _, tp in staged:
            out[tp] = stored
            if stored == E.NONE and req.group_id in self.groups:
                apply_commit(self.offsets, self.positions, req.group_id, tp, req.offsets[tp], position)
        return out

    def fetch(self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False) -> FetchResult:
        """Handle an OffsetFetch for one group: every committed offset when `partitions` is None; with
        `require_stable`, the asked partitions with a commit still pending are listed as unstable."""
        err = self.check(group_id)
        if err != E.NONE:
            return FetchResult(err)
        committed = self.offsets.get(group_id, {})
        if partitions is None:
            return FetchResult(E.NONE, dict(sorted(committed.items())))
        unstable = {tp for tp in partitions if (group_id, tp) in self.inflight or self.pending.has(group_id, tp)
                    } if require_stable else set()
        return FetchResult(E.NONE, {tp: committed[tp] for tp in partitions if tp in committed and tp not in unstable},
                           unstable)

    def describe(self, group_id: str) -> GroupSummary:
        """DescribeGroups for one group (an unknown group is reported Dead, as Kafka does)."""
        err = self.check(group_id)
        group = self.groups.get(group_id) if err == E.NONE else None
        if group is None:
            return GroupSummary(group_id, err)
        stable = group.state == S.STABLE
        members = [MemberSummary(m.member_id, m.instance_id, m.client_id, m.client_host,
                                 m.metadata_for(group.protocol_name) if stable and group.protocol_name else b"",
                                 m.assignment if stable else b"") for m in group.members.values()]
        return GroupSummary(group_id, E.NONE, group.state.value, group.protocol_type or "",
                            group.protocol_name or "" if group.state != S.EMPTY else "", members)

    def list_groups(self, states: set[GroupState] | None) -> tuple[ErrorCode, list[tuple[str, str, str]]]:
        """(error, [(group id, protocol type, state)]) for the groups coordinated here."""
        owned = set(self.owned_partitions())
        out = [(g.group_id, g.protocol_type or "", g.state.value) for g in self.groups.values()
               if self.partition_of(g.group_id) in owned and (not states or g.state in states)]
        return (E.COORDINATOR_LOAD_IN_PROGRESS if self.loading_any() else E.NONE), sorted(out)

    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups for one group: only an Empty group; its offsets and metadata get tombstones."""
        err = self.check(group_id)
        if err != E.NONE:
            return err
        group = self.groups.get(group_id)
        if group is None or group.state == S.DEAD:
            return E.GROUP_ID_NOT_FOUND
        if group.state != S.EMPTY:
            return E.NON_EMPTY_GROUP
        records = [(encode_offset_key(OffsetKey(group_id, *tp)), None) for tp in self.offsets.get(group_id, {})]
        records.append((encode_group_key(GroupKey(group_id)), None))
        err = client_error(await self.store.append(self.partition_of(group_id), records))
        if err == E.NONE and self.groups.get(group_id) is group and group.state == S.EMPTY:
            group.to(S.DEAD, self.now_ms())
            del self.groups[group_id]
            self.offsets.pop(group_id, None)
            self.positions.pop(group_id, None)
            self.pending.drop_groups({group_id})  # as Kafka: the deleted group's open transactions commit nothing
            log.info("Deleted group %s", group_id)
        return err

    async def delete_offsets(self, group_id: str, partitions: list[TopicPartition]
                             ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: refused per partition for topics the (non-empty) group still consumes."""
        err = self.check(group_id)
        if err != E.NONE:
            return err, {}
        group = self.groups.get(group_id)
        if group is None or group.state == S.DEAD:
            return E.GROUP_ID_NOT_FOUND, {}
        if group.state != S.EMPTY and group.protocol_type != "consumer":
            return E.NON_EMPTY_GROUP, {}
        subscribed = group.subscribed_topics() if group.state != S.EMPTY else set()
        out: dict[TopicPartition, ErrorCode] = {}
        for tp in partitions:
            out[tp] = E.GROUP_SUBSCRIBED_TO_TOPIC if subscribed is None or tp[0] in subscribed else E.NONE
        gone = [tp for tp, e in out.items() if e == E.NONE and tp in self.offsets.get(group_id, {})]
        if gone:
            stored = client_error(await self.store.append(
                self.partition_of(group_id), [(encode_offset_key(OffsetKey(group_id, *tp)), None) for tp in gone]))
            if stored != E.NONE:
                return stored, {}
            for tp in gone:
                self.offsets.get(group_id, {}).pop(tp, None)
            self.pending.discard(group_id, gone)
        return E.NONE, out

    async def expire_offsets(self) -> int:
        """offsets.retention.minutes: drop the offsets of groups that have been Empty that long."""
        now = self.now_ms()
        expired = 0
        for p in self.owned_partitions():
            for group in [g for g in self.groups.values() if self.partition_of(g.group_id) == p]:
                offsets = self.offsets.get(group.group_id, {})
                if group.state != S.EMPTY or not offsets:
                    continue
                base = group.state_timestamp_ms if group.protocol_type else max(
                    (v.commit_timestamp for v in offsets.values()), default=now)
                if base < 0 or now - base < self.config.retention_ms:
                    continue
                records = [(encode_offset_key(OffsetKey(group.group_id, *tp)), None) for tp in offsets]
                if await self.store.append(p, records) == E.NONE:
                    expired += len(records)
                    self.offsets.pop(group.group_id, None)
                    self.pending.discard(group.group_id, list(offsets))
                    log.info("Expired %d offsets of group %s (empty for %d ms)", len(records), group.group_id,
                             now - base)
        return expired

    async def partitions_deleted(self, deleted: list[TopicPartition]) -> int:
        """Topics were deleted: drop their committed offsets from every group coordinated here and write
        tombstones for them (Kafka's cleanupGroupMetadata); an Empty group left with nothing dies."""
        gone = set(deleted)
        removed = 0
        for p in self.owned_partitions():
            records = []
            for gid in [g for g in list(self.offsets) if self.partition_of(g) == p]:
                offsets = self.offsets[gid]
                dropped = [tp for tp in offsets if tp in gone]
                for tp in dropped:
                    del offsets[tp]
                self.pending.discard(gid, dropped)  # as the tombstones do when replayed
                records += [(encode_offset_key(OffsetKey(gid, *tp)), None) for tp in dropped]
                group = self.groups.get(gid)
                if group is not None and dropped and not offsets and group.state == S.EMPTY \
                        and group.generation == 0:
                    group.to(S.DEAD, self.now_ms())  # Kafka: an Empty group at generation 0 holds nothing else
                    del self.groups[gid]
                    del self.offsets[gid]
                    records.append((encode_group_key(GroupKey(gid)), None))
            if records:
                err = await self.store.append(p, records)
                removed += len(records)
                log.info("Removed %d expired or deleted offsets and groups of __consumer_offsets-%d after a "
                         "topic deletion%s", len(records), p, "" if err == E.NONE else f" (append: {err.name})")
        return removed
