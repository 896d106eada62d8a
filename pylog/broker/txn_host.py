"""The broker side of the transaction coordinator: `__transaction_state` as its log, and FindCoordinator.

The coordinator (pylog/coordinator/transaction/) sees the `TxnLog` seam implemented by
InternalTopicHost over `__transaction_state` (appends acks=all, waiting up to request.timeout.ms
as Kafka's TransactionStateManager does), the `MarkerWriter` that sends WriteTxnMarkers to
partition leaders, and producer ids from the blocks this broker reserves in ZooKeeper. A
partition is loaded as soon as this broker becomes its leader (the coordinator epoch is the
leader epoch it became leader at), so half-finished commits and aborts are completed without
waiting for their producer to come back.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Awaitable, Callable

from pylog.broker.internal_topic import InternalTopicHost, Spawn
from pylog.broker.txn_marker_append import MarkerSet, OffsetsMarker, append_markers
from pylog.broker.txn_markers import TxnMarkerChannel
from pylog.coordinator.ownership import partition_for
from pylog.coordinator.transaction.coordinator import TRANSACTION_STATE_TOPIC, TransactionCoordinator, TxnConfig
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.replica_manager import ReplicaManager
    from pylog.broker.topic_admin import TopicAdmin
    from pylog.common.config import BrokerConfig

log = logging.getLogger("pylog.coordinator.transaction")

__all__ = ["TxnHost", "TRANSACTION_STATE_TOPIC", "fenced_as", "abortable_as", "older_as"]


class TxnHost(InternalTopicHost):
    """Hosts a TransactionCoordinator over this broker's replicas of `__transaction_state`."""

    topic = TRANSACTION_STATE_TOPIC
    partitions_key = "transaction.state.log.num.partitions"
    replication_key = "transaction.state.log.replication.factor"
    full_replication_only = False  # pylog's documented rule: one replica per live broker while fewer are alive
    append_timeout_key = "request.timeout.ms"

    def __init__(self, config: BrokerConfig, metadata: MetadataCache, replicas: ReplicaManager,
                 topic_admin: TopicAdmin, spawn: Spawn, broker_id: int,
                 new_producer_id: Callable[[], Awaitable[int]], offsets_marker: OffsetsMarker | None) -> None:
        super().__init__(config, metadata, replicas, topic_admin, spawn, partition_for)  # Kafka hashes
        # transactional ids as it hashes group ids
        self.broker_id = broker_id
        self.offsets_marker = offsets_marker  # the group coordinator settles transactional offset commits
        self.markers = TxnMarkerChannel(broker_id, metadata, self._append_own_markers)
        cfg = TxnConfig(max_timeout_ms=int(self.config.get("transaction.max.timeout.ms")))
        self.coordinator = TransactionCoordinator(self, self.markers, new_producer_id, partition_for, cfg)

    async def _append_own_markers(self, markers: MarkerSet) -> dict[tuple[str, int], ErrorCode]:
        (result,) = await append_markers(self.replicas, [markers], self.offsets_marker)
        return result

    def on_leadership_change(self, partition: int) -> None:
        """Load the partition's transactions (finishing any half-done ones), or forget them."""
        self.coordinator.on_leadership_change(partition)

    def topic_configs(self, replication_factor: int) -> dict[str, str]:
        """Kafka's settings of `__transaction_state`; min ISR is capped at the replication factor, which
        is itself capped at the live brokers, so a small cluster can still commit."""
        min_isr = min(int(self.config.get("transaction.state.log.min.isr")), replication_factor)
        return {"cleanup.policy": "compact", "compression.type": "uncompressed", "unclean.leader.election.enable":
                "false", "min.insync.replicas": str(min_isr),
                "segment.bytes": str(self.config.get("transaction.state.log.segment.bytes"))}

    async def abort_timed_out(self) -> None:
        """Periodic transaction.abort.timed.out.transaction.cleanup.interval.ms check."""
        started = await self.coordinator.abort_timed_out()
        if started:
            log.info("Aborting %d transactions that outlived their transaction.timeout.ms", started)

    async def expire_transactional_ids(self) -> None:
        """Periodic transaction.remove.expired.transaction.cleanup.interval.ms check."""
        removed = await self.coordinator.expire_transactional_ids(int(self.config.get("transactional.id.expiration.ms")))
        if removed:
            log.info("Removed %d expired transactional ids", removed)

    async def close(self) -> None:
        """Stop the marker tasks and close the connections to partition leaders."""
        await self.coordinator.close()
        await self.markers.close()


def fenced_as(err: ErrorCode, version: int, since: int) -> ErrorCode:
    """PRODUCER_FENCED as a request version before `since` knows it: INVALID_PRODUCER_EPOCH (KafkaApis)."""
    return ErrorCode.INVALID_PRODUCER_EPOCH if err == ErrorCode.PRODUCER_FENCED and version < since else err


def abortable_as(err: ErrorCode, version: int, since: int) -> ErrorCode:
    """TRANSACTION_ABORTABLE (KIP-890) as a request version before `since` knows it: INVALID_TXN_STATE,
    the abortable error those clients already handle."""
    return ErrorCode.INVALID_TXN_STATE if err == ErrorCode.TRANSACTION_ABORTABLE and version < since else err


def older_as(err: ErrorCode, version: int, fenced_since: int, abortable_since: int) -> ErrorCode:
    """An error as this request version knows it (PRODUCER_FENCED and TRANSACTION_ABORTABLE both mapped)."""
    return abortable_as(fenced_as(err, version, fenced_since), version, abortable_since)
