"""Failed log dirs (KIP-112): which replicas a broker can no longer serve, and moving leaders off them.

A broker whose log dir fails writes /log_dir_event_notification/log_dir_event_<seq>. The controller
reads and deletes those notifications and sends the broker a LeaderAndIsr for every replica it
hosts; the partitions it answers with KAFKA_STORAGE_ERROR are its offline replicas (any
LeaderAndIsr response may name them, e.g. after a restart with a dir still broken). An offline
replica leaves every ISR and can not be elected; the partitions it led get a leader elsewhere.
A broker that restarts or dies is forgotten here: its next LeaderAndIsr responses tell afresh.
"""

from __future__ import annotations

import logging
from typing import Any

from pylog.common.types import TP
from pylog.controller.core import ControllerCore
from pylog.controller.partitions import PartitionChanges
from pylog.controller.states import ReplicaLifecycle as RS
from pylog.protocol.errors import ErrorCode
from pylog.zk import paths

log = logging.getLogger("pylog.controller")


def storage_errors(resp: Any, names: dict[Any, str]) -> list[TP]:
    """The partitions a LeaderAndIsr response reports KAFKA_STORAGE_ERROR for (`names`: topic id -> name)."""
    if resp.error_code != ErrorCode.NONE:
        return []
    out: list[TP] = []
    for t in resp.topics or []:
        topic = getattr(t, "topic_name", None) or names.get(t.topic_id)
        for pe in t.partition_errors:
            if pe.error_code == ErrorCode.KAFKA_STORAGE_ERROR and topic is not None:
                out.append((topic, pe.partition_index))
    return out


class LogDirFailures:
    """The controller's part for /log_dir_event_notification and replicas on offline dirs."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges) -> None:
        self.core = core
        self.partitions = partitions

    async def on_event(self) -> None:
        """Read and delete the notifications; ask each named live broker which of its replicas are offline."""
        children = sorted(await self.core.zk_call(self.core.ops.children, paths.log_dir_event_notifications()))
        if not children:
            return
        notes = await self.core.zk_call(self.core.zk.get_log_dir_event_notifications, children)
        await self.core.zk_call(self.core.zk.delete_log_dir_event_notifications, children,
                                self.core.ops.epoch_zk_version)
        ctx = self.core.ctx
        for bid in sorted({n.broker_id for n in notes.values()} & ctx.live_ids):
            log.info("Controller %d: a log dir of broker %d failed; sending it LeaderAndIsr for its replicas",
                     self.core.broker_id, bid)
            tps = [tp for tp in ctx.partitions_on(bid) if tp in ctx.leaders and tp[0] not in ctx.topics_to_delete]
            self.core.send_leader_and_isr(bid, tps)

    async def on_offline_replicas(self, bid: int, tps: list[TP]) -> None:
        """A broker answered KAFKA_STORAGE_ERROR for these replicas: elect leaders elsewhere, shrink ISRs."""
        ctx = self.core.ctx
        if bid not in ctx.live:
            return
        known = ctx.offline_replicas.setdefault(bid, set())
        new = sorted(tp for tp in set(tps) if tp not in known and tp in ctx.assignments)
        if not new:
            return
        known.update(new)
        log.info("Controller %d: replicas of %s on broker %d are offline (failed log dir)", self.core.broker_id,
                 ",".join(f"{t}-{p}" for t, p in new), bid)
        new = [(t, p) for t, p, _r in ctx.move_replicas([(*tp, bid) for tp in new], RS.OFFLINE)]
        if not new:
            return
        led = [tp for tp in new if ctx.leaders.get(tp) and ctx.leaders[tp].leader == bid]
        if led:
            await self.partitions.elect(led, self.partitions.offline_strategy)
        await self.partitions.remove_from_isr({bid}, new)
        self.core.send_update_metadata(ctx.live_ids, new)

    def forget(self, ids: set[int]) -> None:
        """Brokers that restarted or died: what they report next counts."""
        for bid in ids:
            self.core.ctx.offline_replicas.pop(bid, None)
