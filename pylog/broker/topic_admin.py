"""Topic creation, growth and deletion on behalf of clients (ZkAdminManager's role in Kafka).

The broker validates, places replicas with Kafka's algorithm over the live brokers, writes the
znodes through AdminZkClient and waits (up to the request timeout) until the controller's
UpdateMetadata shows the result, so a client can use a topic as soon as CreateTopics returns.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from pylog.broker.metadata_cache import MetadataCache
from pylog.broker.zk_calls import run_zk
from pylog.common.config import BrokerConfig, ConfigError, validate_topic_config
from pylog.common.errors import KafkaError
from pylog.common.metrics_format import METRICS_TOPIC
from pylog.planner import assignment as placement
from pylog.protocol.errors import ErrorCode
from pylog.zk import admin as zk_admin
from pylog.zk.client import ZkClient

log = logging.getLogger("pylog.admin")


@dataclass(slots=True)
class TopicResult:
    """Outcome of one topic in a CreateTopics/CreatePartitions/DeleteTopics request."""

    name: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    topic_id: str | None = None
    configs: dict[str, str] = field(default_factory=dict)


def _validator(config: Mapping[str, str]) -> None:
    validate_topic_config(dict(config))


class TopicAdmin:
    """Admin operations that go through ZooKeeper, run off the event loop."""

    def __init__(self, zk: ZkClient, metadata: MetadataCache, config: BrokerConfig, broker_id: int, rack: str | None) -> None:
        self.zk = zk
        self.metadata = metadata  # the live brokers to place on; UpdateMetadata shows a change applied
        self.config = config
        self.broker_id = broker_id  # with its rack: the placement when no broker is known yet
        self.rack = rack
        self._changed = asyncio.Event()

    def _admin(self) -> zk_admin.AdminZkClient:
        return zk_admin.AdminZkClient(self.zk, _validator)

    async def _run(self, fn: Callable[..., Any], *args: Any, timeout_ms: int = 0) -> Any:
        return await run_zk(self.zk.connect, fn, *args, timeout_ms=timeout_ms)

    def metadata_changed(self) -> None:
        """Wake requests waiting for the controller to apply their change."""
        self._changed.set()

    async def wait_until(self, cond: Callable[[], bool], timeout_s: float) -> bool:
        """Wait for a metadata condition (re-checked after every UpdateMetadata)."""
        deadline = time.monotonic() + timeout_s
        while not cond():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(left, 0.5))
            except asyncio.TimeoutError:
                pass
        return True

    def _live_brokers(self) -> list[tuple[int, str | None]]:
        brokers = self.metadata.brokers
        if not brokers:
            return [(self.broker_id, self.rack)]
        return [(b.id, b.rack) for b in sorted(brokers.values(), key=lambda b: b.id)]

    def topic_ready(self, name: str, partitions: int) -> bool:
        """Whether the metadata cache shows every partition of a topic with a leader."""
        parts = self.metadata.topics.get(name, {})
        return len(parts) >= partitions and all(p.leader >= 0 for p in parts.values())

    # -- create -------------------------------------------------------------------------------

    def plan(self, name: str, num_partitions: int, replication_factor: int,
             manual: Mapping[int, Sequence[int]] | None, rack_aware: bool = True) -> dict[int, list[int]]:
        """The assignment of a new topic: the manual one (checked) or Kafka's placement."""
        cfg = self.config
        brokers = self._live_brokers()
        if manual:
            live = {b for b, _ in brokers}
            for p, reps in manual.items():
                missing = sorted(set(reps) - live)
                if missing:
                    raise placement.BrokerNotAvailableError(
                        f"Some brokers specified for partition id {p} are not available. Specified brokers: "
                        f"{', '.join(map(str, reps))}, available brokers: {', '.join(str(b) for b, _ in brokers)}.")
            return {int(p): list(r) for p, r in manual.items()}
        n = num_partitions if num_partitions > 0 else int(cfg.get("num.partitions"))
        rf = replication_factor if replication_factor > 0 else int(cfg.get("default.replication.factor"))
        if not rack_aware or any(r is None for _, r in brokers):
            brokers = [(b, None) for b, _ in brokers]
        return placement.assign_replicas_to_brokers(brokers, n, rf)

    async def create_topic(self, name: str, num_partitions: int, replication_factor: int,
                           manual: Mapping[int, Sequence[int]] | None, configs: Mapping[str, str],
                           validate_only: bool, timeout_ms: int) -> TopicResult:
        """Create one topic (or only validate it) and wait for its leaders."""
        res = TopicResult(name)
        try:
            if name in self.metadata.topics:
                raise zk_admin.TopicExistsError(f"Topic '{name}' already exists.")
            assignment = self.plan(name, num_partitions, replication_factor, manual)
            admin = self._admin()

            def write() -> str | None:  # one executor job: ZooKeeper's part fits in one timeout_ms
                admin.validate_topic_create(name, assignment, dict(configs))
                return None if validate_only else admin.create_topic(name, assignment, dict(configs), validate=False)
            topic_id = await self._run(write, timeout_ms=timeout_ms)
            res.num_partitions = len(assignment)
            res.replication_factor = len(assignment[0]) if assignment else -1
            if validate_only:
                return res
            res.topic_id = topic_id
            log.info("Creating topic %s with configuration %s and initial partition assignment %s", name,
                     dict(configs), assignment)
        except KafkaError as exc:
            res.error, res.message = exc.code, str(exc)
            return res
        except ConfigError as exc:
            res.error, res.message = ErrorCode.INVALID_CONFIG, str(exc)
            return res
        if not await self.wait_until(lambda: self.topic_ready(name, res.num_partitions), timeout_ms / 1000):
            res.error = ErrorCode.REQUEST_TIMED_OUT
            res.message = f"Topic {name} was created but its leaders were not elected within {timeout_ms} ms"
        return res

    async def auto_create(self, name: str) -> ErrorCode:
        """Metadata's auto-creation: LEADER_NOT_AVAILABLE while leaders are elected, or the error."""
        if not self.metadata.brokers:
            # Just started (perhaps not registered yet): the controller has not told us the live
            # brokers or the topics, so the topic may well exist and there is nothing to place
            # replicas on. The client retries, as it does while leaders are elected.
            return ErrorCode.LEADER_NOT_AVAILABLE
        try:
            zk_admin.validate_topic_name(name)
        except zk_admin.InvalidTopicError:
            return ErrorCode.INVALID_TOPIC_EXCEPTION
        rf = -1
        if name == METRICS_TOPIC:
            rf = int(self.config.get("metrics.topic.replication.factor"))
        res = await self.create_topic(name, -1, rf, None, {}, False, 0)
        if res.error in (ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.TOPIC_ALREADY_EXISTS):
            return ErrorCode.LEADER_NOT_AVAILABLE
        log.info("Auto-creation of topic %s failed: %s", name, res.message)
        return res.error

    # -- partitions ---------------------------------------------------------------------------

    async def create_partitions(self, name: str, count: int, manual: Sequence[Sequence[int]] | None,
                                validate_only: bool, timeout_ms: int) -> TopicResult:
        """Grow a topic to `count` partitions, placing new replicas like Kafka."""
        res = TopicResult(name)
        try:
            admin = self._admin()
            current = await self._run(admin.get_topic_assignments, [name], timeout_ms=timeout_ms)
            if name not in current:
                raise zk_admin.UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
            existing = {p: list(r) for p, r in current[name].partitions.items()}
            if name in await self._run(admin.get_topics_marked_for_deletion, timeout_ms=timeout_ms):
                raise zk_admin.InvalidTopicError(f"The topic '{name}' is queued for deletion.")
            if count <= len(existing):
                raise zk_admin.InvalidPartitionsError(
                    f"Topic currently has {len(existing)} partitions, which is higher than the requested {count}."
                    if count < len(existing) else f"Topic already has {len(existing)} partitions.")
            brokers = self._live_brokers()
            manual_map = None
            if manual is not None:
                manual_map = {len(existing) + i: list(r) for i, r in enumerate(manual)}
            added = placement.new_partitions_assignment(name, existing, brokers, count, manual_map)
            if validate_only:
                return res
            await self._run(admin.add_partitions, name, count, added, [b for b, _ in brokers], timeout_ms=timeout_ms)
        except KafkaError as exc:
            res.error, res.message = exc.code, str(exc)
            return res
        if not await self.wait_until(lambda: self.topic_ready(name, count), timeout_ms / 1000):
            res.error = ErrorCode.REQUEST_TIMED_OUT
            res.message = f"Partitions of {name} were created but not all leaders were elected in {timeout_ms} ms"
        return res

    # -- delete -------------------------------------------------------------------------------

    async def delete_topic(self, name: str, timeout_ms: int) -> TopicResult:
        """Mark a topic for deletion and wait until the controller removed it."""
        res = TopicResult(name)
        if not self.config.get("delete.topic.enable"):
            res.error, res.message = ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled."
            return res
        try:
            await self._run(self._admin().delete_topic, name, timeout_ms=timeout_ms)
        except KafkaError as exc:  # zk_admin.AdminError, or ZooKeeper not answering
            if exc.code != ErrorCode.NONE:  # NONE: already marked for deletion, which Kafka reports as success
                res.error, res.message = exc.code, str(exc)
                return res
        if not await self.wait_until(lambda: name not in self.metadata.topics, timeout_ms / 1000):
            res.error = ErrorCode.REQUEST_TIMED_OUT
        return res
