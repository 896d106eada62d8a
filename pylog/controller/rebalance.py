"""Automatic leader rebalancing (auto.leader.rebalance.enable), as Kafka's
KafkaController.checkAndTriggerAutoLeaderRebalance does it in ZooKeeper mode.

Every leader.imbalance.check.interval.seconds (first check 5 s after becoming controller, or
sooner if the interval is shorter) the controller groups partitions by their preferred replica
(the first assigned one). For each broker B:

    imbalance(B) = |partitions preferring B whose leader is not B| / |partitions preferring B|

and when imbalance(B) > leader.imbalance.per.broker.percentage / 100 it runs a preferred election
for those partitions, skipping all of them while any reassignment is in progress, partitions of
topics being deleted, and partitions whose preferred replica is not live and in the ISR.
Partitions of topics queued for deletion are left out of the ratio too.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import AbstractSet, Any, Mapping, Sequence

from pylog.common.types import TP
from pylog.controller.admin_znodes import post_call
from pylog.controller.election import preferred_leader
from pylog.controller.core import ControllerCore, ControllerListener
from pylog.controller.partitions import PartitionChanges
from pylog.controller.preferred import PREFERRED, PreferredLeaderElection

log = logging.getLogger("pylog.controller")
FIRST_CHECK_DELAY_S = 5.0  # Kafka schedules the first check 5 s after failover


@dataclass(frozen=True, slots=True)
class BrokerImbalance:
    """One preferred broker's partitions and the ones it does not lead."""

    broker: int
    preferred: tuple[TP, ...]
    not_led: tuple[TP, ...]

    @property
    def ratio(self) -> float:
        """Kafka's leader imbalance ratio for this broker."""
        return len(self.not_led) / len(self.preferred) if self.preferred else 0.0


def imbalance_by_broker(replicas: Mapping[TP, Sequence[int]], leaders: Mapping[TP, int],
                        deleting: AbstractSet[str] = frozenset()) -> dict[int, BrokerImbalance]:
    """Group partitions by preferred replica and count those whose leader is someone else.

    Partitions without a known leader (no state yet) count in the denominator only, as in Kafka
    (partitionLeadershipInfo(tp).exists(...)).
    """
    grouped: dict[int, list[TP]] = {}
    for tp, reps in replicas.items():
        if reps and tp[0] not in deleting:
            grouped.setdefault(reps[0], []).append(tp)
    out = {}
    for broker, tps in grouped.items():
        tps.sort()
        not_led = tuple(tp for tp in tps if tp in leaders and leaders[tp] != broker)
        out[broker] = BrokerImbalance(broker, tuple(tps), not_led)
    return out


def rebalance_candidates(replicas: Mapping[TP, Sequence[int]], leaders: Mapping[TP, int],
                         isrs: Mapping[TP, Sequence[int]], live: AbstractSet[int], percentage: int,
                         deleting: AbstractSet[str] = frozenset(), reassigning: bool = False) -> list[TP]:
    """The partitions a rebalance check elects preferred leaders for (pure; sorted)."""
    if reassigning:
        return []
    out: list[TP] = []
    for imb in imbalance_by_broker(replicas, leaders, deleting).values():
        if imb.ratio > percentage / 100:
            out.extend(tp for tp in imb.not_led
                       if preferred_leader(replicas[tp], isrs.get(tp, ()), live) is not None)
    return sorted(out)


class AutoLeaderRebalance(ControllerListener):
    """Controller extension: the periodic imbalance check while this broker is the controller."""

    def __init__(self, core: ControllerCore, partitions: PartitionChanges,
                 elections: PreferredLeaderElection) -> None:
        self.core = core
        self.partitions = partitions
        self.elections = elections
        self._task: asyncio.Task | None = None

    def _setting(self, key: str) -> Any:
        return self.core.config.get(key)

    async def on_failover(self) -> None:
        """Start the periodic check if auto.leader.rebalance.enable is set."""
        if not self._setting("auto.leader.rebalance.enable"):
            return
        interval = float(self._setting("leader.imbalance.check.interval.seconds"))
        self._task = asyncio.get_running_loop().create_task(
            self._schedule(self.core.generation, min(FIRST_CHECK_DELAY_S, interval), interval),
            name=f"auto-leader-rebalance-{self.core.broker_id}")

    async def on_resign(self) -> None:
        """Stop checking."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _schedule(self, generation: int, first: float, interval: float) -> None:
        await asyncio.sleep(first)
        while self.core.generation == generation:
            post_call(self.core, self.check, generation)
            await asyncio.sleep(interval)

    async def check(self) -> list[TP]:
        """One imbalance check (controller task); returns the partitions it elected for."""
        c = self.core
        if not c.is_active:
            return []
        ctx = c.ctx
        reassigning = any(a.reassigning for a in ctx.assignments.values())
        candidates = rebalance_candidates(
            {tp: a.replicas for tp, a in ctx.assignments.items()},
            {tp: st.leader for tp, st in ctx.leaders.items()},
            {tp: st.isr for tp, st in ctx.leaders.items()},
            self.partitions.eligible(), int(self._setting("leader.imbalance.per.broker.percentage")),
            ctx.topics_to_delete, reassigning)
        candidates = [tp for tp in candidates if tp[0] in ctx.topic_ids]
        if not candidates:
            return []
        log.info("Controller %d: leader imbalance over %s%%; electing preferred leaders for %s", c.broker_id,
                 self._setting("leader.imbalance.per.broker.percentage"),
                 ", ".join(f"{t}-{p}" for t, p in candidates))
        await self.elections.run_election(candidates, PREFERRED)
        return candidates
