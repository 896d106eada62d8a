"""The group coordinator a broker hosts: membership (membership.py), offsets and admin (offsets.py) and
transactional offset commits (txn_offsets.py)."""

from __future__ import annotations

from pylog.coordinator.group.txn_offsets import TxnOffsetOps


class GroupCoordinator(TxnOffsetOps):
    """Kafka's classic group coordinator for the `__consumer_offsets` partitions this broker leads."""

    def on_leadership_change(self, partition: int) -> None:
        """The broker became (or stopped being) leader of an offsets partition: load or unload now."""
        self.check_partition(partition)
