"""Newest offsets of the partitions a group coordinator's groups committed to (kafka_exporter's lag).

Lag is the partition's newest offset (its high watermark, what ListOffsets(latest) answers) minus
the committed offset. Partitions led here are read directly; the others are asked of their
leaders with ListOffsets in the background, and a scrape reports the last answer (so a partition
led elsewhere shows up from the scrape after its group first committed to it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Coroutine, Protocol

from pylog.client.aio import AsyncBrokerConnection
from pylog.common.errors import ErrorCode
from pylog.protocol.api import ApiKey, request_class

if TYPE_CHECKING:
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.replica_manager import ReplicaManager

log = logging.getLogger("pylog.metrics")

_VERSION = 4
_MIN_INTERVAL_S = 1.0  # at most one round of ListOffsets per second, however often Prometheus scrapes


class LagSources(Protocol):
    """What lag needs of a broker: its partitions, the cluster's metadata, and a task of its own."""

    broker_id: int
    replicas: ReplicaManager | None
    metadata: MetadataCache

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        """Run a task the broker owns."""


class EndOffsets:
    """High watermarks for lag: local ones now, remote ones from a background ListOffsets round."""

    def __init__(self, sources: LagSources) -> None:
        self.sources = sources
        self.remote: dict[tuple[str, int], int] = {}
        self._conns: dict[int, AsyncBrokerConnection] = {}
        self._task: asyncio.Task | None = None
        self._last = 0.0

    def current(self, tps: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Newest offsets known for `tps` (called on the event loop); starts a refresh of the remote ones."""
        out: dict[tuple[str, int], int] = {}
        missing: set[tuple[str, int]] = set()
        partitions = self.sources.replicas.partitions if self.sources.replicas is not None else {}
        for tp in tps:
            p = partitions.get(tp)
            if p is not None and p.is_leader:
                out[tp] = p.high_watermark
            else:
                missing.add(tp)
                if tp in self.remote:
                    out[tp] = self.remote[tp]
        if missing and (self._task is None or self._task.done()) and time.monotonic() - self._last >= _MIN_INTERVAL_S:
            self._last = time.monotonic()
            self._task = self.sources.spawn(self._refresh(missing))
        return out

    async def _refresh(self, tps: set[tuple[str, int]]) -> None:
        by_leader: dict[int, list[tuple[str, int]]] = {}
        for topic, index in tps:
            info = self.sources.metadata.partition(topic, index)
            if info is not None and info.leader in self.sources.metadata.brokers:
                by_leader.setdefault(info.leader, []).append((topic, index))
        await asyncio.gather(*(self._ask(leader, sorted(parts)) for leader, parts in by_leader.items()))

    async def _ask(self, leader: int, tps: list[tuple[str, int]]) -> None:
        ep = self.sources.metadata.brokers[leader]
        conn = self._conns.get(leader)
        if conn is None or (conn.host, conn.port) != (ep.host, ep.port):
            conn = self._conns[leader] = AsyncBrokerConnection(ep.host, ep.port, f"broker-{self.sources.broker_id}-lag")
        cls = request_class(ApiKey.ListOffsets)[_VERSION]
        topics: dict[str, list] = {}
        for topic, index in tps:
            topics.setdefault(topic, []).append(cls.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=index, current_leader_epoch=-1, timestamp=-1))
        req = cls(replica_id=-1, isolation_level=0, topics=[cls.ListOffsetsTopic(name=t, partitions=ps)
                                                            for t, ps in topics.items()])
        try:
            resp = await conn.request(req, _VERSION, timeout=5)
        except Exception as exc:  # leader gone: keep the last values; the next scrape asks again
            log.debug("ListOffsets to broker %d for lag failed: %r", leader, exc)
            await conn.close()
            self._conns.pop(leader, None)
            return
        for t in resp.topics:
            for pr in t.partitions:
                if pr.error_code == ErrorCode.NONE:
                    self.remote[(t.name, pr.partition_index)] = pr.offset
