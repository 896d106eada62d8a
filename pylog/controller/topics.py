"""Topics and partitions appearing in ZooKeeper: load their assignments, bring them online.

The tools create a topic by writing /brokers/topics/<t> (and add partitions by rewriting it);
the controller reads the assignment, moves the new partitions and replicas to NEW and lets
PartitionChanges elect their first leaders (Kafka's onNewPartitionCreation).
"""

from __future__ import annotations

import logging
from typing import Iterable

from pylog.common.types import TP
from pylog.controller.context import Assignment
from pylog.controller.core import ControllerCore
from pylog.controller.partitions import PartitionChanges
from pylog.controller.states import PartitionLifecycle as PS
from pylog.controller.states import ReplicaLifecycle as RS
from pylog.zk.codecs import TopicAssignment
from pylog.zk.uuids import random_uuid

log = logging.getLogger("pylog.controller")


class TopicChanges:
    """Reacts to /brokers/topics children and topic znode changes."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges) -> None:
        self.core = core
        self.partitions = partitions

    async def load(self, topics: Iterable[str]) -> list[TP]:
        """Read assignments of topics new to the context and watch them; returns their partitions."""
        core = self.core
        ctx = core.ctx
        assignments = await core.zk_call(core.ops.assignments, list(topics))
        added: list[TP] = []
        for topic, ta in assignments.items():
            if ta.topic_id is None:
                # Topics created by older tools lack ids: give them one, as Kafka's controller does.
                ta = TopicAssignment(ta.partitions, random_uuid(), ta.adding_replicas, ta.removing_replicas)
                await core.zk_call(core.ops.write_assignment, topic, ta)
            ctx.topic_ids[topic] = ta.topic_id
            for p, reps in ta.partitions.items():
                ctx.assignments[(topic, p)] = Assignment(tuple(reps), ta.adding(p), ta.removing(p))
                added.append((topic, p))
            await core.zk_call(core.watch_topic, topic)
        ctx.topic_configs.update(await core.zk_call(core.ops.topic_configs, list(assignments)))
        return added

    async def on_change(self) -> None:
        """/brokers/topics changed: forget vanished topics, bring new ones online."""
        core = self.core
        ctx = core.ctx
        topics = set(await core.zk_call(core.ops.topics))
        for t in ctx.topics() - topics:
            ctx.remove_topic(t)
        new = topics - ctx.topics()
        if not new:
            return
        added = await self.load(sorted(new))
        log.info("Controller %d: new topics %s", core.broker_id, sorted(new))
        await self.partitions.init_new(self._mark_new(added))

    async def on_modified(self, topic: str) -> None:
        """A topic znode changed: bring partitions added to it online."""
        core = self.core
        ctx = core.ctx
        if topic in ctx.topics_to_delete or topic not in ctx.topic_ids:
            return
        got = await core.zk_call(core.ops.assignments, [topic])
        ta = got.get(topic)
        if ta is None:
            return
        added = []
        for p, reps in ta.partitions.items():
            if (topic, p) not in ctx.assignments:
                ctx.assignments[(topic, p)] = Assignment(tuple(reps), ta.adding(p), ta.removing(p))
                added.append((topic, p))
        if added:
            log.info("Controller %d: new partitions %s", core.broker_id, added)
            await self.partitions.init_new(self._mark_new(added))

    def _mark_new(self, tps: list[TP]) -> list[TP]:
        """NON_EXISTENT -> NEW for new partitions and their replicas (onNewPartitionCreation's first steps);
        returns the partitions that moved, the only ones to get a first leader."""
        ctx = self.core.ctx
        moved = ctx.move_partitions(tps, PS.NEW)
        ctx.move_replicas([(*tp, r) for tp in moved for r in ctx.assignments[tp].replicas], RS.NEW)
        return moved
