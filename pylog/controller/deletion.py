"""Topic deletion (/admin/delete_topics/<t>): stop and delete every replica, then the znodes.

A topic's replicas are deleted with StopReplica(delete) and epoch -2; the znodes go only after
every replica confirmed, so a broker that was down during the deletion gets the request when it
returns instead of keeping a stray log forever.
"""

from __future__ import annotations

import logging
from typing import Any

from pylog.controller.core import ControllerCore
from pylog.controller.events import DeletionConfirmed
from pylog.controller.states import PartitionLifecycle as PS
from pylog.controller.states import ReplicaLifecycle as RS
from pylog.zk import paths

log = logging.getLogger("pylog.controller.deletion")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() == "true"


class TopicDeletionManager:
    """Tracks topics queued for deletion and the replicas still to confirm."""

    def __init__(self, core: ControllerCore) -> None:
        self.core = core

    async def on_marked(self) -> None:
        """Pick up /admin/delete_topics children."""
        c = self.core
        ctx = c.ctx
        marked = set(await c.zk_call(c.ops.children, paths.delete_topics()))
        for topic in sorted(marked):
            if topic not in ctx.topic_ids:
                log.info("Removing deletion marker of unknown topic %s", topic)
                await c.zk_call(c.ops.delete_path, paths.delete_topic(topic))
            elif not _truthy(c.config.get("delete.topic.enable")):
                log.info("Ignoring deletion of %s: delete.topic.enable is false", topic)
                await c.zk_call(c.ops.delete_path, paths.delete_topic(topic))
            elif topic not in ctx.topics_to_delete:
                ctx.topics_to_delete.add(topic)
                await self._start(topic)

    async def _start(self, topic: str) -> None:
        c = self.core
        ctx = c.ctx
        tps = ctx.partitions_of(topic)
        log.info("Controller %d: deleting topic %s (%d partitions)", c.broker_id, topic, len(tps))
        c.send_update_metadata(ctx.live_ids, [], deleting=tps)
        ctx.deletion_pending_replicas[topic] = {(p, r) for (_t, p) in tps for r in ctx.assignments[(_t, p)].replicas}
        ctx.move_partitions(tps, PS.OFFLINE)
        await self.resume()

    async def resume(self) -> None:
        """Send deletions to live replicas still pending; finish topics with none left."""
        c = self.core
        ctx = c.ctx
        live = ctx.live_ids
        for topic in sorted(ctx.topics_to_delete):
            pending = ctx.deletion_pending_replicas.get(topic, set())
            if not pending:
                await self._finish(topic)
                continue
            to_start = sorted((topic, p, r) for p, r in pending
                              if r in live and ctx.replica_states.get((topic, p, r)) != RS.DELETION_STARTED)
            # Kafka's onPartitionDeletion: OfflineReplica, then ReplicaDeletionStarted. Only replicas
            # that made both moves are asked to delete; a refused one stays pending (and its topic
            # undeleted) and is tried again at the next resume, as Kafka's ineligible replicas are.
            started = ctx.move_replicas(ctx.move_replicas(to_start, RS.OFFLINE), RS.DELETION_STARTED)
            by_broker: dict[int, list] = {}
            for _t, p, r in started:
                by_broker.setdefault(r, []).append((topic, p))
            for bid, tps in sorted(by_broker.items()):
                c.send_stop_replica(bid, tps, delete=True, deleting_topic=True,
                                    callback=lambda b, resp, t=topic, g=c.generation: c.post(DeletionConfirmed(t, b, resp), g))

    async def on_confirmed(self, topic: str, broker_id: int, resp: Any) -> None:
        """A broker answered a deletion StopReplica."""
        ctx = self.core.ctx
        pending = ctx.deletion_pending_replicas.get(topic)
        if pending is None:
            return
        if resp.error_code != 0:
            log.warning("Broker %d refused to delete replicas of %s (error %d)", broker_id, topic, resp.error_code)
            return
        for pe in resp.partition_errors:
            key = (pe.topic_name, pe.partition_index, broker_id)
            if pe.error_code == 0:
                # Deleted only if its state agrees (Kafka's ReplicaDeletionSuccessful); a refused one
                # stays pending, so the topic's znodes stay until it is deleted again.
                if ctx.move_replicas([key], RS.DELETED):
                    pending.discard((pe.partition_index, broker_id))
            else:
                ctx.move_replicas([key], RS.OFFLINE)  # retried on the next resume
        if not pending:
            await self._finish(topic)

    async def _finish(self, topic: str) -> None:
        c = self.core
        await c.zk_call(c.ops.delete_topic_znodes, topic)
        ctx = c.ctx
        ctx.move_replicas([k for k in ctx.replica_states if k[0] == topic], RS.NON_EXISTENT)
        ctx.move_partitions(ctx.partitions_of(topic), PS.NON_EXISTENT)
        ctx.remove_topic(topic)
        log.info("Controller %d: deletion of topic %s completed", c.broker_id, topic)

