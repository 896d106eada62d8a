"""Transactional offset commits waiting for their transaction's marker (KIP-98, KIP-447).

Kafka's GroupMetadata keeps them per producer id apart from the committed offsets: OffsetFetch
does not see them (with require_stable it reports UNSTABLE_OFFSET_COMMIT for their partitions),
a COMMIT marker makes them committed and an ABORT marker drops them. Every offset carries the
log offset of the batch that holds it, so a commit only replaces an offset written earlier in the
log (Kafka's `olderThan`): a plain commit written after the transactional one wins. Pure data,
shared by the live coordinator and the loader.
"""

from __future__ import annotations

from pylog.coordinator.group.records import OffsetValue

TopicPartition = tuple[str, int]
IN_FLIGHT = -1  # the transactional batch is being appended: no log position yet
Pending = dict[str, dict[TopicPartition, tuple[OffsetValue, int]]]  # group -> partition -> (offset, position)


class PendingTxnOffsets:
    """Pending transactional offsets by producer id, then group, then partition."""

    def __init__(self) -> None:
        self.by_producer: dict[int, Pending] = {}

    def add(self, producer_id: int, group_id: str, tp: TopicPartition, value: OffsetValue, position: int) -> None:
        """Stage one offset of a producer's open transaction (a later one for the partition replaces it)."""
        self.by_producer.setdefault(producer_id, {}).setdefault(group_id, {})[tp] = (value, position)

    def settle(self, producer_id: int, group_id: str, tp: TopicPartition, value: OffsetValue, position: int) -> None:
        """The staged `value` is in the log now, in the batch at `position` (unless it was dropped meanwhile)."""
        parts = self.by_producer.get(producer_id, {}).get(group_id, {})
        if tp in parts and parts[tp][0] == value:
            parts[tp] = (value, position)

    def remove(self, producer_id: int, group_id: str, tp: TopicPartition, value: OffsetValue | None = None) -> None:
        """Drop a staged offset (a failed append when `value` is the one staged; a tombstone in a transaction)."""
        groups = self.by_producer.get(producer_id, {})
        staged = groups.get(group_id, {}).get(tp)
        if staged is not None and (value is None or staged[0] == value):
            del groups[group_id][tp]
            if not groups[group_id]:
                del groups[group_id]
            if not groups:
                self.by_producer.pop(producer_id, None)

    def has(self, group_id: str, tp: TopicPartition) -> bool:
        """Whether some open transaction holds an offset for this group's partition."""
        return any(tp in groups.get(group_id, {}) for groups in self.by_producer.values())

    def groups_of(self, producer_id: int) -> set[str]:
        """The groups a producer has pending offsets in."""
        return set(self.by_producer.get(producer_id, {}))

    def take(self, producer_id: int, group_ids: set[str] | None = None) -> Pending:
        """Remove and return a producer's pending offsets (only those of `group_ids` when given)."""
        groups = self.by_producer.get(producer_id, {})
        if group_ids is None:
            return self.by_producer.pop(producer_id, {})
        out = {g: groups.pop(g) for g in list(groups) if g in group_ids}
        if not groups:
            self.by_producer.pop(producer_id, None)
        return out

    def discard(self, group_id: str, tps: list[TopicPartition]) -> None:
        """Forget every producer's pending offsets of these partitions of a group (their offsets were deleted)."""
        for pid in list(self.by_producer):
            for tp in tps:
                self.remove(pid, group_id, tp)

    def drop_groups(self, group_ids: set[str]) -> None:
        """Forget the pending offsets of these groups (their partition was unloaded)."""
        for pid in list(self.by_producer):
            self.take(pid, group_ids)


def apply_commit(offsets: dict[str, dict[TopicPartition, OffsetValue]], positions: dict[str, dict[TopicPartition, int]],
                 group_id: str, tp: TopicPartition, value: OffsetValue, position: int) -> bool:
    """Make `value` the group's committed offset unless the current one was written later in the log."""
    current = positions.get(group_id, {}).get(tp)
    if group_id in offsets and tp in offsets[group_id] and current is not None and current > position:
        return False
    offsets.setdefault(group_id, {})[tp] = value
    positions.setdefault(group_id, {})[tp] = position
    return True


def complete(pending: PendingTxnOffsets, offsets: dict[str, dict[TopicPartition, OffsetValue]],
             positions: dict[str, dict[TopicPartition, int]], producer_id: int, commit: bool,
             group_ids: set[str] | None = None) -> int:
    """A marker for `producer_id`: COMMIT makes its pending offsets committed, ABORT drops them.

    Returns how many offsets became committed.
    """
    applied = 0
    for group_id, parts in pending.take(producer_id, group_ids).items():
        if not commit:
            continue
        for tp, (value, position) in sorted(parts.items(), key=lambda kv: kv[1][1]):
            applied += apply_commit(offsets, positions, group_id, tp, value, position)
    return applied
