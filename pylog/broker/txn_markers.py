"""The transaction coordinator's marker channel: WriteTxnMarkers to the leaders of a transaction's partitions.

One attempt per call (the coordinator retries what is not written): partitions are grouped by
their leader in the metadata cache and each leader gets one WriteTxnMarkers v1 over a connection
kept per broker -- except this broker's own partitions, appended in process through `local`
(txn_marker_append.py; the leader's answers and fencing are the same). A partition without a known leader, or whose leader cannot be reached, is
NOT_LEADER_OR_FOLLOWER (retried); a partition this broker's metadata cache no longer has is
UNKNOWN_TOPIC_OR_PARTITION, which the coordinator takes as done, as Kafka does for deleted topics
(TransactionMarkerChannelManager). A leader answering UNKNOWN_TOPIC_OR_PARTITION is only behind
(a restarted broker before its LeaderAndIsr), so that answer is retried, as Kafka's
TransactionMarkerRequestCompletionHandler does; taking it as done would drop an acknowledged
commit's marker and leave the partition's transaction hanging. Its connections also carry a
partition leader's verification questions to coordinators (pylog/broker/txn_verify.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from pylog.broker.txn_marker_append import MarkerSet
from pylog.client.aio import AsyncBrokerConnection
from pylog.common.types import TP
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.coordinator.transaction")
LocalAppend = Callable[[MarkerSet], Awaitable[dict[TP, ErrorCode]]]
VERSION = 1
# The leader does not host the partition yet: retried, unlike a partition gone from our own metadata.
_RETRY_AS = {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.NOT_LEADER_OR_FOLLOWER}
REQUEST_TIMEOUT_S = 35.0  # a little above the leader's own wait for its ISR (handlers/write_txn_markers.py)


class TxnMarkerChannel:
    """Sends markers from this broker to partition leaders (including itself, over loopback)."""

    def __init__(self, broker_id: int, metadata: Any, local: LocalAppend | None = None) -> None:
        self.broker_id = broker_id
        self.metadata = metadata  # MetadataCache: topics -> partitions -> leader, brokers -> endpoints
        self.local = local  # appends this broker's own partitions' markers without a request to itself
        self._conns: dict[int, AsyncBrokerConnection] = {}

    def _leaders(self, partitions: frozenset[TP]) -> tuple[dict[int, list[TP]], dict[TP, ErrorCode]]:
        by_leader: dict[int, list[TP]] = {}
        errors: dict[TP, ErrorCode] = {}
        for topic, idx in sorted(partitions):
            info = self.metadata.topics.get(topic, {}).get(idx)
            if info is None:
                errors[(topic, idx)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif info.leader < 0 or info.leader not in self.metadata.brokers:
                errors[(topic, idx)] = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                by_leader.setdefault(info.leader, []).append((topic, idx))
        return by_leader, errors

    def connection(self, leader: int) -> AsyncBrokerConnection:
        """The kept connection to a broker (its inter-broker endpoint from the metadata cache); ConnectionError
        when the cache no longer lists it (it failed since the caller looked it up: the callers retry)."""
        ep = self.metadata.brokers.get(leader)
        if ep is None:
            raise ConnectionError(f"broker {leader} is not in the metadata cache")
        conn = self._conns.get(leader)
        if conn is None or (conn.host, conn.port) != (ep.host, ep.port):
            conn = self._conns[leader] = AsyncBrokerConnection(ep.host, ep.port, f"broker-{self.broker_id}-txn-markers")
        return conn

    async def _here(self, markers: MarkerSet) -> dict[TP, ErrorCode]:
        """This broker's own partitions, in process; a failure is retried as a failed request would be."""
        assert self.local is not None
        try:
            got = await self.local(markers)
        except Exception:
            log.exception("Appending markers of producer %d here failed; retrying later", markers.producer_id)
            return dict.fromkeys(markers.partitions, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return {tp: _RETRY_AS.get(err, err) for tp, err in got.items()}

    async def _send(self, leader: int, tps: list[TP], producer_id: int, producer_epoch: int,
                    coordinator_epoch: int, commit: bool) -> dict[TP, ErrorCode]:
        cls = request_class(ApiKey.WriteTxnMarkers)[VERSION]
        topics: dict[str, list[int]] = {}
        for topic, idx in tps:
            topics.setdefault(topic, []).append(idx)
        req = cls(markers=[cls.WritableTxnMarker(
            producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=commit,
            coordinator_epoch=coordinator_epoch,
            topics=[cls.WritableTxnMarker.WritableTxnMarkerTopic(name=t, partition_indexes=ps)
                    for t, ps in topics.items()])])
        try:
            resp = await self.connection(leader).request(req, VERSION, REQUEST_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError, ConnectionError) as e:
            log.info("WriteTxnMarkers to broker %d failed (%s); retrying later", leader, e)
            return {tp: ErrorCode.NOT_LEADER_OR_FOLLOWER for tp in tps}
        out = {tp: ErrorCode.NOT_LEADER_OR_FOLLOWER for tp in tps}  # anything the answer leaves out is retried
        for m in resp.markers:
            for t in m.topics:
                for p in t.partitions:
                    err = ErrorCode(p.error_code)
                    out[(t.name, p.partition_index)] = _RETRY_AS.get(err, err)
        return out

    async def write(self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                    partitions: frozenset[TP]) -> dict[TP, ErrorCode]:
        """One attempt at every partition's marker; the error of each (NONE where written)."""
        by_leader, errors = self._leaders(partitions)
        results = await asyncio.gather(*(
            self._here(MarkerSet(producer_id, producer_epoch, coordinator_epoch, commit, tps))
            if leader == self.broker_id and self.local is not None else
            self._send(leader, tps, producer_id, producer_epoch, coordinator_epoch, commit)
            for leader, tps in by_leader.items()))
        for r in results:
            errors.update(r)
        return errors

    async def close(self) -> None:
        """Close the connections to the leaders."""
        for conn in self._conns.values():
            await conn.close()
        self._conns.clear()
