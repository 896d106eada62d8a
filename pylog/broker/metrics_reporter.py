"""Publishes per-partition load samples to `__pylog_metrics` (the way Cruise Control's reporter does).

Every metrics.sample.interval.ms the broker samples each replica it hosts (log size, and for
leaders the produce/consume byte and message rates since the last sample) and produces one
record per replica to the internal topic, through the topic's leader like any client. The
Spark planner reads these samples to weigh partitions by their real load.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from pylog.client.aio import AsyncBrokerConnection, BrokerUnavailable
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.zk.errors import ZkError

if TYPE_CHECKING:
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.replica_manager import ReplicaManager
    from pylog.broker.stats import PartitionStats
    from pylog.broker.topic_admin import TopicAdmin

log = logging.getLogger("pylog.metrics")

PRODUCE_VERSION = 8


class MetricsReporter:
    """Samples replicas and produces the samples to the metrics topic."""

    def __init__(self, broker_id: int, metadata: MetadataCache, replicas: ReplicaManager, stats: PartitionStats,
                 topic_admin: TopicAdmin, interval_ms: int) -> None:
        self.broker_id = broker_id
        self.metadata = metadata  # the metrics topic's leader
        self.replicas = replicas  # what is sampled
        self.stats = stats
        self.topic_admin = topic_admin  # creates the metrics topic on first use
        self.interval_s = interval_ms / 1000
        self._last: dict[tuple[str, int], tuple[int, int, int]] = {}
        self._last_time = time.monotonic()
        self._conns: dict[int, AsyncBrokerConnection] = {}
        self._pending_baseline: tuple[dict, float] = ({}, self._last_time)

    def sample(self, now_ms: int) -> list:
        """One MetricSample per hosted replica, with rates since the last published sample."""
        from pylog.common.metrics_format import MetricSample

        now = time.monotonic()
        elapsed = max(now - self._last_time, 1e-3)
        counters = self.stats.snapshot()
        out = []
        for (topic, index), p in sorted(self.replicas.partitions.items()):
            cur = counters.get((topic, index), (0, 0, 0))
            prev = self._last.get((topic, index), (0, 0, 0))  # traffic before the first sample counts
            rates = [max(c - q, 0) / elapsed for c, q in zip(cur, prev)]
            out.append(MetricSample(self.broker_id, topic, index, now_ms, p.log.size_bytes,
                                    rates[0], rates[1], rates[2], p.is_leader))
        self._pending_baseline = (counters, now)
        return out

    def _commit(self) -> None:
        """The samples were published: the next rates start from them (else they keep accumulating)."""
        self._last, self._last_time = self._pending_baseline

    async def publish(self, samples: list) -> bool:
        """Produce samples to partition 0 of the metrics topic; False when it isn't available yet."""
        from pylog.common.metrics_format import METRICS_TOPIC, encode_sample

        meta = self.metadata.partition(METRICS_TOPIC, 0)
        if meta is None:
            await self.topic_admin.auto_create(METRICS_TOPIC)
            return False
        leader = self.metadata.brokers.get(meta.leader)
        if leader is None:
            return False
        batch = records.build_batch([(*encode_sample(s), [], s.timestamp_ms) for s in samples])
        cls = request_class(ApiKey.Produce)[PRODUCE_VERSION]
        req = cls(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[cls.TopicProduceData(
            name=METRICS_TOPIC, partition_data=[cls.TopicProduceData.PartitionProduceData(index=0, records=batch)])])
        conn = self._conns.get(leader.id)
        if conn is None or (conn.host, conn.port) != (leader.host, leader.port):
            conn = self._conns[leader.id] = AsyncBrokerConnection(leader.host, leader.port,
                                                                  f"broker-{self.broker_id}-metrics")
        resp = await conn.request(req, PRODUCE_VERSION, timeout=15)
        err = resp.responses[0].partition_responses[0].error_code
        if err:
            log.debug("Publishing metrics failed with error %d", err)
        return err == 0

    async def run(self) -> None:
        """Sample and publish until cancelled."""
        while True:
            await asyncio.sleep(self.interval_s)
            samples = self.sample(int(time.time() * 1000))
            if not samples:
                continue
            try:
                if await self.publish(samples):
                    self._commit()
            except (BrokerUnavailable, OSError, asyncio.TimeoutError) as exc:
                log.debug("Could not publish metrics: %s", exc)
            except ZkError as exc:  # creating the topic during a session expiry: the next round retries
                log.warning("Could not publish metrics: %s: %s", type(exc).__name__, exc)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("Metrics reporter failed")
