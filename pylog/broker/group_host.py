"""The broker side of the group coordinator: `__consumer_offsets` as its store, and FindCoordinator.

The coordinator (pylog/coordinator/group/) only sees the `OffsetsLog` seam implemented here
(pylog/broker/internal_topic.py): leadership of an offsets partition, appends through the replica
manager with acks=all (the commit answers once every ISR member has the record, or fails after
offsets.commit.timeout.ms; a TxnOffsetCommit as a transactional batch of its producer), and reading
a partition back, with its transaction markers, when this broker becomes its leader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncIterator

from pylog.broker.internal_topic import InternalTopicHost, Spawn
from pylog.coordinator.consumer.decisions import ConsumerConfig
from pylog.coordinator.consumer.model import TopicsView
from pylog.coordinator.group.api import CoordinatorConfig
from pylog.coordinator.group.coordinator import GroupCoordinator
from pylog.coordinator.group.records import OFFSETS_TOPIC
from pylog.coordinator.group.store import StoredRecord
from pylog.coordinator.ownership import partition_for
from pylog.log.control import ControlRecordError, ControlType, read_marker
from pylog.protocol import records

if TYPE_CHECKING:
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.replica_manager import ReplicaManager
    from pylog.broker.topic_admin import TopicAdmin
    from pylog.common.config import BrokerConfig

__all__ = ["GroupHost", "OFFSETS_TOPIC"]


class GroupHost(InternalTopicHost):
    """Hosts a GroupCoordinator over this broker's replicas of `__consumer_offsets`."""

    topic = OFFSETS_TOPIC
    partitions_key = "offsets.topic.num.partitions"
    replication_key = "offsets.topic.replication.factor"
    full_replication_only = True  # Kafka: COORDINATOR_NOT_AVAILABLE until that many brokers are alive
    append_timeout_key = "offsets.commit.timeout.ms"

    def __init__(self, config: BrokerConfig, metadata: MetadataCache, replicas: ReplicaManager,
                 topic_admin: TopicAdmin, spawn: Spawn) -> None:
        super().__init__(config, metadata, replicas, topic_admin, spawn, partition_for)
        self.coordinator = GroupCoordinator(self, CoordinatorConfig.from_broker(self.config.get),
                                            consumer_config=ConsumerConfig.from_broker(self.config.get),
                                            topics=self.topics_view)

    def topics_view(self) -> TopicsView:
        """KIP-848 assignors' view of the cluster: each topic with an id, and its partition count."""
        ids = self.metadata.topic_ids
        return {name: (ids[name], len(parts)) for name, parts in self.metadata.topics.items() if name in ids}

    def on_leadership_change(self, partition: int) -> None:
        """The coordinator loads the partition's groups, or forgets them."""
        self.coordinator.on_leadership_change(partition)

    def topic_configs(self, replication_factor: int) -> dict[str, str]:
        """Kafka's settings of `__consumer_offsets`."""
        return {"cleanup.policy": "compact", "compression.type": "producer",
                "segment.bytes": str(self.config.get("offsets.topic.segment.bytes"))}

    def topics_deleted(self, partitions: list[tuple[str, int]]) -> None:
        """UpdateMetadata removed these partitions: their groups' committed offsets go (in the background,
        as Kafka's onPartitionsDeleted does, so the controller's request is not held up by the appends)."""
        user = [tp for tp in partitions if tp[0] != OFFSETS_TOPIC]
        if user:
            self.spawn(self.coordinator.partitions_deleted(user))

    async def read(self, partition: int) -> AsyncIterator[StoredRecord]:  # type: ignore[override]
        """Every record and transaction marker from the log start to the log end offset (what Kafka's loader
        reads): transactional offset commits stay pending until their marker."""
        async for h, batch, offset in self.read_batches(partition):
            for rec in _stored(h, batch, offset):
                yield rec

    async def expire_offsets(self) -> None:
        """Periodic offsets.retention.minutes check."""
        await self.coordinator.expire_offsets()


def _stored(h: records.BatchHeader, batch: memoryview, offset: int) -> list[StoredRecord]:
    """The records of one batch from `offset` on, as the loader folds them (a marker is one entry)."""
    if h.is_control:
        try:
            marker = read_marker(h, batch)
        except ControlRecordError:
            return []
        if marker is None or h.base_offset < offset:
            return []
        return [StoredRecord(None, None, h.base_offset, h.producer_id, True, marker.control_type == ControlType.COMMIT)]
    return [StoredRecord(r.key, r.value, h.base_offset, h.producer_id, h.is_transactional)
            for r in records.read_records(batch) if r.offset >= offset and r.key is not None]
