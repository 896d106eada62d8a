"""OffsetCommit, TxnOffsetCommit, OffsetFetch, DescribeGroups, DeleteGroups, OffsetDelete and offset expiry.

A commit is validated against the group (decisions.commit, Kafka's ClassicGroup.validateOffsetCommit),
written to the group's `__consumer_offsets` partition with acks=all, and only then visible to
OffsetFetch. A transactional commit (KIP-98, KIP-447) is staged as pending for its producer and
written as one transactional batch with the producer's id and epoch, so the COMMIT or ABORT marker
the transaction coordinator later writes there settles it; until then OffsetFetch does not return it.
"""

from __future__ import annotations

import logging
from typing import Callable

from pylog.coordinator.group import decisions as rules
from pylog.coordinator.group.api import (
    CommitRequest, CoordinatorConfig, FetchResult, GroupSummary, MemberSummary, TopicPartition, TxnCommitRequest,
)
from pylog.coordinator.group.effects import Decision, Effect
from pylog.coordinator.group.group import Group
from pylog.coordinator.group.pending import IN_FLIGHT, apply_commit
from pylog.coordinator.group.records import (
    GroupKey, OffsetKey, encode_group_key, encode_offset_key, encode_offset_value, offset_key_bytes,
)
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import OffsetsLog, client_error
from pylog.coordinator.group.table import GroupTable
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.coordinator.group")
S = GroupState
E = ErrorCode


# (group id, member id, generation or member epoch, group instance id, transactional) -> the KIP-848 group's
# verdict, None when the group is not a KIP-848 consumer group
MemberCheck = Callable[[str, str, int, str | None, bool], ErrorCode | None]


class OffsetOps:
    """Committed offsets and group administration over the coordinator's table."""

    def __init__(self, table: GroupTable, store: OffsetsLog, config: CoordinatorConfig,
                 check: Callable[[str], ErrorCode], now_ms: Callable[[], int],
                 apply: Callable[[Group, list[Effect]], object],
                 member_check: MemberCheck = lambda g, m, e, i, t: None) -> None:
        self.table, self.store, self.config = table, store, config
        self.check, self.now_ms, self.apply = check, now_ms, apply
        self.member_check = member_check  # KIP-848 groups: the member epoch check (None: not such a group)

    def _decided(self, d: Decision, group_id: str) -> None:
        if d.created is not None:
            self.table.groups[group_id] = d.created
        group = self.table.groups.get(group_id)
        if group is not None and d.effects:
            self.apply(group, d.effects)

    async def commit(self, req: CommitRequest) -> dict[TopicPartition, ErrorCode]:
        """Handle an OffsetCommit: one error per partition (all the same when the group refused it)."""
        group_id = req.group_id
        err = self.check(group_id)
        if err != E.NONE:
            return {tp: err for tp in req.offsets}
        verdict = self.member_check(group_id, req.member_id, req.generation, req.instance_id, False)
        if verdict is None:
            d = rules.commit(self.table.groups.get(group_id), req, self.config, self.now_ms())
            self._decided(d, group_id)
            err, out = d.reply
        else:  # a consumer group: the member epoch is the generation (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID)
            err, out = verdict, rules.too_large(req, self.config)
        if err != E.NONE:
            return {tp: err for tp in req.offsets}
        staged = [(group_id, tp) for tp in req.offsets if tp not in out]
        if not staged:
            return out
        records = [(offset_key_bytes(group_id, *tp), encode_offset_value(req.offsets[tp])) for _, tp in staged]
        inflight = self.table.inflight
        for key in staged:  # an OffsetFetch with require_stable waits for these (Kafka's pendingOffsetCommits)
            inflight[key] = inflight.get(key, 0) + 1
        try:
            stored, position = await self.store.append_records(self.table.partition_of(group_id), records)
        finally:
            for key in staged:
                left = inflight.pop(key) - 1
                if left:
                    inflight[key] = left
        stored = client_error(stored)
        for _, tp in staged:
            out[tp] = stored
            if stored == E.NONE and (group_id in self.table.groups or verdict is not None):
                apply_commit(self.table.offsets, self.table.positions, group_id, tp, req.offsets[tp], position)
        return out

    async def txn_commit(self, req: TxnCommitRequest) -> dict[TopicPartition, ErrorCode]:
        """Handle a TxnOffsetCommit: one error per partition; the offsets stay pending until the marker."""
        err = self.check(req.group_id)
        if err != E.NONE:
            return {tp: err for tp in req.offsets}
        verdict = self.member_check(req.group_id, req.member_id, req.generation, req.instance_id, True)
        if verdict is None:
            d = rules.txn_commit(self.table.groups.get(req.group_id), req, self.config, self.now_ms())
            self._decided(d, req.group_id)
            err, out = d.reply
        else:  # a consumer group (send_offsets_to_transaction of a group.protocol=consumer member)
            err, out = verdict, rules.too_large(req, self.config)
        if err != E.NONE:
            return {tp: err for tp in req.offsets}
        pending = self.table.pending
        staged = {tp: v for tp, v in req.offsets.items() if tp not in out}
        for tp, value in staged.items():
            pending.add(req.producer_id, req.group_id, tp, value, IN_FLIGHT)
        if not staged:
            return out
        records = [(encode_offset_key(OffsetKey(req.group_id, *tp)), encode_offset_value(v)) for tp, v in staged.items()]
        stored, position = await self.store.append_records(self.table.partition_of(req.group_id), records,
                                                           (req.producer_id, req.producer_epoch))
        stored = client_error(stored, transactional=True)
        for tp, value in staged.items():
            out[tp] = stored
            if stored == E.NONE:  # the batch's position orders it against other commits of the partition
                pending.settle(req.producer_id, req.group_id, tp, value, position)
            else:
                pending.remove(req.producer_id, req.group_id, tp, value)
        if stored != E.NONE:
            log.info("Transactional offset commit of group %s by producer %d (epoch %d) failed: %s", req.group_id,
                     req.producer_id, req.producer_epoch, stored.name)
        return out

    def fetch(self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False) -> FetchResult:
        """Handle an OffsetFetch for one group: every committed offset when `partitions` is None; with
        `require_stable`, the asked partitions with a commit still pending are listed as unstable, each
        still with its last committed offset."""
        err = self.check(group_id)
        if err != E.NONE:
            return FetchResult(err)
        committed = self.table.offsets.get(group_id, {})
        if partitions is None:
            return FetchResult(E.NONE, dict(sorted(committed.items())))
        unstable = {tp for tp in partitions if (group_id, tp) in self.table.inflight
                    or self.table.pending.has(group_id, tp)} if require_stable else set()
        # Kafka answers an unstable partition with offset -1, but librdkafka (2.16, see test_txn_offsets) starts a
        # partition whose UNSTABLE_OFFSET_COMMIT answer came after its assignment changed at the offset that answer
        # carried: -1 meant auto.offset.reset, and a ctp worker re-read a whole partition (bug 7). Every client
        # retries on the error, so the committed offset only matters in that race, where it is the right one.
        return FetchResult(E.NONE, {tp: committed[tp] for tp in partitions if tp in committed}, unstable)

    def describe(self, group_id: str) -> GroupSummary:
        """DescribeGroups for one group (an unknown group is reported Dead, as Kafka does)."""
        err = self.check(group_id)
        group = self.table.groups.get(group_id) if err == E.NONE else None
        if group is None:
            return GroupSummary(group_id, err)
        stable = group.state == S.STABLE
        members = [MemberSummary(m.member_id, m.instance_id, m.client_id, m.client_host,
                                 m.metadata_for(group.protocol_name) if stable and group.protocol_name else b"",
                                 m.assignment if stable else b"") for m in group.members.values()]
        return GroupSummary(group_id, E.NONE, group.state.value, group.protocol_type or "",
                            group.protocol_name or "" if group.state != S.EMPTY else "", members)

    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups for one group: only an Empty group; its offsets and metadata get tombstones."""
        err = self.check(group_id)
        if err != E.NONE:
            return err
        group = self.table.groups.get(group_id)
        if group is None or group.state == S.DEAD:
            return E.GROUP_ID_NOT_FOUND
        if group.state != S.EMPTY:
            return E.NON_EMPTY_GROUP
        records = [(encode_offset_key(OffsetKey(group_id, *tp)), None) for tp in self.table.offsets.get(group_id, {})]
        records.append((encode_group_key(GroupKey(group_id)), None))
        err = client_error(await self.store.append(self.table.partition_of(group_id), records))
        if err == E.NONE and self.table.groups.get(group_id) is group and group.state == S.EMPTY:
            group.to(S.DEAD, self.now_ms())
            self.table.forget(group_id)
            log.info("Deleted group %s", group_id)
        return err

    async def delete_offsets(self, group_id: str, partitions: list[TopicPartition]
                             ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: refused per partition for topics the (non-empty) group still consumes."""
        err = self.check(group_id)
        if err != E.NONE:
            return err, {}
        group = self.table.groups.get(group_id)
        if group is None or group.state == S.DEAD:
            return E.GROUP_ID_NOT_FOUND, {}
        if group.state != S.EMPTY and group.protocol_type != "consumer":
            return E.NON_EMPTY_GROUP, {}
        subscribed = group.subscribed_topics() if group.state != S.EMPTY else set()
        out: dict[TopicPartition, ErrorCode] = {}
        for tp in partitions:
            out[tp] = E.GROUP_SUBSCRIBED_TO_TOPIC if subscribed is None or tp[0] in subscribed else E.NONE
        offsets = self.table.offsets.get(group_id, {})
        gone = [tp for tp, e in out.items() if e == E.NONE and tp in offsets]
        if gone:
            tombstones = [(encode_offset_key(OffsetKey(group_id, *tp)), None) for tp in gone]
            stored = client_error(await self.store.append(self.table.partition_of(group_id), tombstones))
            if stored != E.NONE:
                return stored, {}
            for tp in gone:
                self.table.offsets.get(group_id, {}).pop(tp, None)
            self.table.pending.discard(group_id, gone)
        return E.NONE, out

    async def expire(self, owned: list[int]) -> int:
        """offsets.retention.minutes: drop the offsets of groups that have been Empty that long."""
        now = self.now_ms()
        expired = 0
        for p in owned:
            for group in self.table.groups_of(p):
                offsets = self.table.offsets.get(group.group_id, {})
                base = rules.offsets_expire_at(group, offsets, now)
                if base is None or now - base < self.config.retention_ms:
                    continue
                records = [(encode_offset_key(OffsetKey(group.group_id, *tp)), None) for tp in offsets]
                if await self.store.append(p, records) == E.NONE:
                    expired += len(records)
                    self.table.offsets.pop(group.group_id, None)
                    self.table.pending.discard(group.group_id, list(offsets))
                    log.info("Expired %d offsets of group %s (empty for %d ms)", len(records), group.group_id,
                             now - base)
        return expired

    async def partitions_deleted(self, deleted: list[TopicPartition], owned: list[int]) -> int:
        """Topics were deleted: drop their committed offsets from every group coordinated here and write
        tombstones for them (Kafka's cleanupGroupMetadata); an Empty group left with nothing dies."""
        gone = set(deleted)
        removed = 0
        table = self.table
        for p in owned:
            records = []
            for gid in [g for g in list(table.offsets) if table.partition_of(g) == p]:
                offsets = table.offsets[gid]
                dropped = [tp for tp in offsets if tp in gone]
                for tp in dropped:
                    del offsets[tp]
                table.pending.discard(gid, dropped)  # as the tombstones do when replayed
                records += [(encode_offset_key(OffsetKey(gid, *tp)), None) for tp in dropped]
                group = table.groups.get(gid)
                if group is not None and dropped and not offsets and group.state == S.EMPTY \
                        and group.generation == 0:
                    group.to(S.DEAD, self.now_ms())  # Kafka: an Empty group at generation 0 holds nothing else
                    del table.groups[gid]
                    del table.offsets[gid]
                    records.append((encode_group_key(GroupKey(gid)), None))
            if records:
                err = await self.store.append(p, records)
                removed += len(records)
                log.info("Removed %d expired or deleted offsets and groups of __consumer_offsets-%d after a "
                         "topic deletion%s", len(records), p, "" if err == E.NONE else f" (append: {err.name})")
        return removed
