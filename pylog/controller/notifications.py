"""Notifications the controller consumes: ISR changes made by leaders, config changes made by tools.

Leaders write ISR changes themselves and leave /isr_change_notification entries; the
controller refreshes those partitions and propagates them with UpdateMetadata. Config changes
matter to the controller for unclean.leader.election.enable: turning it on elects leaders for
partitions that were offline for lack of an in-sync replica.
"""

from __future__ import annotations

import logging
from pylog.common.types import TP
from pylog.controller.core import ControllerCore, ControllerListener
from pylog.controller.partitions import PartitionChanges
from pylog.controller.states import PartitionLifecycle as PS
from pylog.zk import paths

log = logging.getLogger("pylog.controller")


class Notifications:
    """Processes /isr_change_notification and /config/changes for the controller."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges, listeners: ControllerListener) -> None:
        self.core = core
        self.partitions = partitions
        self.listeners = listeners
        self.last_seq = -1

    async def start(self) -> None:
        """Skip config notifications older than this term; load the cluster-default broker config."""
        existing = await self.core.zk_call(self.core.ops.children, paths.config_changes())
        self.last_seq = max((paths.sequence_number(c) for c in existing), default=-1)
        self.core.dynamic_default = await self.core.zk_call(self.core.ops.broker_config, paths.DEFAULT_ENTITY)

    async def on_isr_change(self) -> None:
        """Leaders changed ISRs: refresh them and tell every broker."""
        children = await self.core.zk_call(self.core.ops.children, paths.isr_change_notifications())
        if not children:
            return
        tps = await self.core.zk_call(self._read_isr_notifications, sorted(children))
        tps = [tp for tp in tps if tp in self.core.ctx.assignments]
        fresh = await self.core.zk_call(self.core.ops.partition_states, tps)
        self.core.ctx.leaders.update(fresh)
        self.core.send_update_metadata(self.core.ctx.live_ids, list(fresh))
        await self.listeners.on_isr_change(list(fresh))

    def _read_isr_notifications(self, children: list[str]) -> list[TP]:
        """Partitions named by ISR change notifications, which are deleted once read."""
        notes = self.core.zk.get_isr_change_notifications(children)
        self.core.zk.delete_isr_change_notifications(children, self.core.ops.epoch_zk_version)
        return sorted({(tp.topic, tp.partition) for n in notes.values() for tp in n.partitions})

    async def on_config_change(self) -> None:
        """Apply topic and cluster-default config changes the controller cares about (unclean)."""
        children = await self.core.zk_call(self.core.ops.children, paths.config_changes())
        fresh = sorted(c for c in children if paths.sequence_number(c) > self.last_seq)
        if not fresh:
            return
        self.last_seq = paths.sequence_number(fresh[-1])
        notes = await self.core.zk_call(self.core.zk.get_config_change_notifications, fresh)
        topics = sorted({n.entity_name for n in notes.values() if n.entity_type == "topics"} & self.core.ctx.topics())
        if any(n.entity_type == "brokers" for n in notes.values()):
            self.core.dynamic_default = await self.core.zk_call(self.core.ops.broker_config, paths.DEFAULT_ENTITY)
            topics = sorted(self.core.ctx.topics())
        self.core.ctx.topic_configs.update(await self.core.zk_call(self.core.ops.topic_configs, topics))
        offline = [tp for tp, st in self.core.ctx.partition_states.items()
                   if st == PS.OFFLINE and tp[0] in topics and self.partitions.unclean_enabled(tp[0])]
        if offline:
            log.info("Controller %d: unclean leader election enabled for %s; electing", self.core.broker_id,
                     sorted({t for t, _ in offline}))
            await self.partitions.elect(offline, self.partitions.offline_strategy)
