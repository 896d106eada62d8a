"""The group coordinator a broker hosts: membership (membership.py) plus offsets and admin (offsets.py)."""

from __future__ import annotations

from pylog.coordinator.group.offsets import OffsetOps


class GroupCoordinator(OffsetOps):
    """Kafka's classic group coordinator for the `__consumer_offsets` partitions this broker leads."""

    def on_leadership_change(self, partition: int) -> None:
        """The broker became (or stopped being) leader of an offsets partition: load or unload now."""
        self.check_partition(partition)
