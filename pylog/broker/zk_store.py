"""The leader's own ZooKeeper writes: ISR changes, conditional on the partition epoch.

Before AlterPartition (Kafka 2.7), leaders wrote ISR changes to the partition state znode
themselves and left a notification under /isr_change_notification for the controller to
propagate; pylog does the same. The write is conditional on the zkVersion the leader last saw,
so it can never overwrite a newer decision of the controller.
"""

from __future__ import annotations

import asyncio
import logging

from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import PartitionState, TopicPartition
from pylog.zk.errors import BadVersionError, NoNodeError

log = logging.getLogger("pylog.replica")


class BrokerZkStore:
    """ISR writes and batched change notifications for one broker."""

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk
        self._changed: set[tuple[str, int]] = set()

    async def write_isr(self, topic: str, partition: int, leader: int, leader_epoch: int, isr: list[int],
                        controller_epoch: int, expected_version: int) -> int | None:
        """Write the new ISR; the new zkVersion, or None when the znode moved on (stale view)."""
        state = PartitionState(leader, leader_epoch, tuple(isr), controller_epoch)
        try:
            version = await asyncio.get_running_loop().run_in_executor(None, self._set, topic, partition, state,
                                                                       expected_version)
        except (BadVersionError, NoNodeError):
            return None
        self._changed.add((topic, partition))
        return version

    def _set(self, topic: str, partition: int, state: PartitionState, expected_version: int) -> int:
        stat = self.zk.set(paths.partition_state(topic, partition), state.encode(), expected_version)
        return stat.version

    async def flush_isr_changes(self) -> None:
        """Tell the controller which ISRs changed (one sequential znode per batch)."""
        if not self._changed:
            return
        changed, self._changed = sorted(self._changed), set()
        try:
            await asyncio.get_running_loop().run_in_executor(
                None, self.zk.propagate_isr_changes, [TopicPartition(t, p) for t, p in changed])
        except Exception as exc:
            log.warning("Could not propagate ISR changes of %d partitions: %s", len(changed), exc)
            self._changed.update(changed)
