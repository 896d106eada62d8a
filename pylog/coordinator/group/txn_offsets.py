"""TxnOffsetCommit and the transaction markers that settle it (Kafka's GroupCoordinator.handleTxnCommitOffsets,
GroupMetadataManager.storeOffsets for a producer, and handleTxnCompletion).

The offsets are validated (KIP-447: a v3 commit names its generation and member, so a zombie
member of an older generation is fenced), staged as pending for the producer, and written to the
group's `__consumer_offsets` partition as one transactional batch with the producer's id and
epoch, so the COMMIT or ABORT marker the transaction coordinator later writes there applies to
it. Only the marker makes them committed; until then OffsetFetch does not return them.
"""

from __future__ import annotations

import logging

from pylog.coordinator.group.api import TopicPartition, TxnCommitRequest
from pylog.coordinator.group.group import Group
from pylog.coordinator.group.offsets import OffsetOps
from pylog.coordinator.group.pending import IN_FLIGHT
from pylog.coordinator.group.records import OffsetKey, encode_offset_key, encode_offset_value
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import client_error
from pylog.protocol.errors import ErrorCode as E

log = logging.getLogger("pylog.coordinator.group")


class TxnOffsetOps(OffsetOps):
    """Transactional offset commits and their completion by markers."""

    def _validate_txn_commit(self, group: Group, req: TxnCommitRequest) -> E:
        """Kafka's validateOffsetCommit for a transactional commit: no group-state rule, only fencing."""
        if group.state == GroupState.DEAD:
            return E.COORDINATOR_NOT_AVAILABLE
        if req.generation >= 0 or req.member_id or req.instance_id:
            err, _ = self._validate_member(group, req.member_id, req.instance_id, req.generation)
            return err
        return E.NONE

    async def txn_commit(self, req: TxnCommitRequest) -> dict[TopicPartition, E]:
        """Handle a TxnOffsetCommit: one error per partition; the offsets stay pending until the marker."""
        err = self.check(req.group_id)
        group = None
        if err == E.NONE:
            group = self.groups.get(req.group_id)
            if group is None:  # as Kafka: a transactional commit creates an Empty group
                group = self.groups[req.group_id] = Group(req.group_id, state_timestamp_ms=self.now_ms())
            err = self._validate_txn_commit(group, req)
        if err != E.NONE:
            return {tp: err for tp in req.offsets}
        out: dict[TopicPartition, E] = {}
        staged = {}
        for tp, value in req.offsets.items():
            if len(value.metadata.encode()) > self.config.metadata_max_bytes:
                out[tp] = E.OFFSET_METADATA_TOO_LARGE
            else:
                staged[tp] = value
                self.pending.add(req.producer_id, req.group_id, tp, value, IN_FLIGHT)
        if not staged:
            return out
        records = [(encode_offset_key(OffsetKey(req.group_id, *tp)), encode_offset_value(v)) for tp, v in staged.items()]
        stored, position = await self.store.append_records(self.partition_of(req.group_id), records,
                                                           (req.producer_id, req.producer_epoch))
        stored = client_error(stored, transactional=True)
        for tp, value in staged.items():
            out[tp] = stored
            if stored == E.NONE:  # the batch's position orders it against other commits of the partition
                self.pending.settle(req.producer_id, req.group_id, tp, value, position)
            else:
                self.pending.remove(req.producer_id, req.group_id, tp, value)
        if stored != E.NONE:
            log.info("Transactional offset commit of group %s by producer %d (epoch %d) failed: %s", req.group_id,
                     req.producer_id, req.producer_epoch, stored.name)
        return out

    def on_txn_marker(self, partition: int, producer_id: int, commit: bool, marker_offset: int) -> None:
        """A COMMIT/ABORT marker of `producer_id` is now durable at `marker_offset` of an offsets partition."""
        if partition in self._loading:  # the loader may not have read that far: apply it once loaded
            self.markers_while_loading.setdefault(partition, []).append((producer_id, commit, marker_offset))
        elif partition in self.loaded:
            self.complete_markers(partition, producer_id, commit)
