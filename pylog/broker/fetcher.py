"""Follower replication: one fetcher per source broker pulls from the leaders it follows.

Before fetching, a partition is truncated to the point where its log agrees with the leader's,
found by leader epoch (OffsetForLeaderEpoch, KIP-101 with the KIP-279 refinement), never by the
local high watermark alone.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator

from pylog.broker.metadata_cache import MetadataCache
from pylog.client.aio import AsyncBrokerConnection, BrokerUnavailable
from pylog.client.versions import INTER_BROKER
from pylog.protocol import records, replica_fetch
from pylog.protocol.api import ApiKey, request_class
from pylog.common.config import BrokerConfig
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.throttle import ReplicationThrottle

log = logging.getLogger("pylog.fetcher")

OFFSET_FOR_EPOCH_V = INTER_BROKER[ApiKey.OffsetForLeaderEpoch]
UNDEFINED = -1


def truncation_point(end_offset_for: Callable[[int], tuple[int, int]], leo: int, hw: int,
                     leader_epoch: int, leader_end: int) -> tuple[int, bool]:
    """Where a follower cuts its log, given the leader's answer to OffsetForLeaderEpoch.

    `leader_epoch`/`leader_end` are what the leader returned for our latest epoch (the largest
    epoch <= it that the leader knows, and where that epoch ends on the leader). Returns (offset
    to truncate to, whether truncation is complete). When we don't have the leader's epoch we cut
    back to the end of our largest epoch below it and ask again (KIP-279) instead of trusting
    one round trip; only when the leader knows no epoch at all do we fall back to the HW.
    """
    if leader_epoch == UNDEFINED or leader_end == UNDEFINED:
        return min(hw, leo), True
    f_epoch, f_end = end_offset_for(leader_epoch)
    if f_end == UNDEFINED:
        return min(hw, leo), True
    if f_epoch != leader_epoch:
        return min(f_end, leo), False
    return min(leader_end, f_end, leo), True


@dataclass(slots=True)
class FetchState:
    """A partition's progress in a fetcher."""

    partition: object  # broker.partition.Partition
    leader_epoch: int
    truncating: bool = True
    delayed_until: float = 0.0


class ReplicaFetcher:
    """Pulls every followed partition led by one source broker."""

    def __init__(self, manager: "ReplicaFetcherManager", source: int) -> None:
        self.manager = manager
        self.source = source
        self.states: dict[tuple[str, int], FetchState] = {}
        self.conn: AsyncBrokerConnection | None = None
        self.task: asyncio.Task | None = None
        self.wakeup = asyncio.Event()
        self.stopped = False

    def start(self) -> None:
        """Run the fetch loop in the background."""
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"fetcher-{self.source}")

    async def stop(self) -> None:
        """Stop fetching and close the connection."""
        self.stopped = True
        self.wakeup.set()
        # Python 3.11's wait_for can swallow a cancellation that races with a failed connect, and the loop
        # would carry on retrying (a broker then never finishes shutting down): cancel until it is done.
        while self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.wait({self.task}, timeout=1.0)
        if self.conn is not None:
            await self.conn.close()

    async def _connection(self) -> AsyncBrokerConnection:
        ep = self.manager.endpoint(self.source)
        if ep is None:
            raise BrokerUnavailable(f"broker {self.source} is not among the live brokers")
        if self.conn is None or (self.conn.host, self.conn.port) != ep:
            if self.conn is not None:
                await self.conn.close()
            self.conn = AsyncBrokerConnection(ep[0], ep[1], f"broker-{self.manager.broker_id}-fetcher-{self.source}")
        return self.conn

    async def _run(self) -> None:
        cfg = self.manager.config
        backoff = int(cfg.get("replica.fetch.backoff.ms")) / 1000
        loop = asyncio.get_running_loop()
        while not self.stopped:
            if not self.states:
                self.wakeup.clear()
                await self.wakeup.wait()
                continue
            try:
                conn = await self._connection()
                truncating = {k: s for k, s in self.states.items() if s.truncating and s.delayed_until <= loop.time()}
                if truncating:
                    await self._truncate(conn, truncating)
                throttle = self.manager.throttle  # KIP-73: throttled, out-of-sync partitions wait for quota
                ready = {k: s for k, s in self.states.items() if not s.truncating and s.delayed_until <= loop.time()
                         and not throttle.follower_should_skip(s.partition)}
                if not ready:
                    await asyncio.sleep(min(backoff, 0.1))
                    continue
                await self._fetch(conn, ready)
            except asyncio.CancelledError:
                raise
            except (BrokerUnavailable, OSError, asyncio.TimeoutError) as exc:
                log.info("Fetcher %d -> broker %d: %s; retrying in %.1fs", self.manager.broker_id,
                         self.source, exc, backoff)
                if self.conn is not None:
                    await self.conn.close()
                await asyncio.sleep(backoff)
            except Exception:
                log.exception("Fetcher %d -> broker %d failed; retrying", self.manager.broker_id, self.source)
                await asyncio.sleep(backoff)

    async def _truncate(self, conn: AsyncBrokerConnection, states: dict[tuple[str, int], FetchState]) -> None:
        cls = request_class(ApiKey.OffsetForLeaderEpoch)[OFFSET_FOR_EPOCH_V]
        by_topic: dict[str, list] = {}
        no_epoch = []
        for (topic, idx), st in states.items():
            latest = st.partition.log.epoch_cache.latest_epoch
            if latest is None or latest < 0:
                no_epoch.append(st)
                continue
            by_topic.setdefault(topic, []).append(cls.OffsetForLeaderTopic.OffsetForLeaderPartition(
                partition=idx, current_leader_epoch=st.leader_epoch, leader_epoch=latest))
        for st in no_epoch:
            # Nothing stamped with an epoch: only an empty log can be here; keep whatever the HW covers.
            p = st.partition
            if p.log.log_end_offset > p.high_watermark:
                p.log.truncate_to(p.high_watermark)
            st.truncating = False
        if not by_topic:
            return
        req = cls(replica_id=self.manager.broker_id, topics=[
            cls.OffsetForLeaderTopic(topic=t, partitions=ps) for t, ps in by_topic.items()])
        resp = await conn.request(req, OFFSET_FOR_EPOCH_V, timeout=self.manager.socket_timeout)
        loop = asyncio.get_running_loop()
        for t in resp.topics:
            for pr in t.partitions:
                st = self.states.get((t.topic, pr.partition))
                if st is None or st is not states.get((t.topic, pr.partition)):
                    continue  # removed or replaced meanwhile
                if pr.error_code != 0:
                    st.delayed_until = loop.time() + self.manager.backoff_s
                    log.debug("OffsetForLeaderEpoch for %s-%d from %d: %s", t.topic, pr.partition,
                              self.source, ErrorCode(pr.error_code).name)
                    continue
                self._apply_truncation(st, pr.leader_epoch, pr.end_offset)

    def _apply_truncation(self, st: FetchState, leader_epoch: int, leader_end: int) -> None:
        p = st.partition
        plog = p.log
        target, done = truncation_point(plog.epoch_cache.end_offset_for, plog.log_end_offset, p.high_watermark,
                                        leader_epoch, leader_end)
        if target < plog.log_end_offset:
            log.info("Truncating %s from %d to %d (leader epoch %d ends at %d on broker %d)", p,
                     plog.log_end_offset, target, leader_epoch, leader_end, self.source)
            plog.truncate_to(target)
        st.truncating = not done

    async def _fetch(self, conn: AsyncBrokerConnection, states: dict[tuple[str, int], FetchState]) -> None:
        cfg = self.manager.config
        max_bytes = int(cfg.get("replica.fetch.max.bytes"))
        by_topic: dict[str, list] = {}
        for (topic, idx), st in states.items():
            plog = st.partition.log
            by_topic.setdefault(topic, []).append(replica_fetch.FetchPartitionRequest(
                idx, st.leader_epoch, plog.log_end_offset, plog.log_start_offset, max_bytes))
        wait_ms = int(cfg.get("replica.fetch.wait.max.ms"))
        req = replica_fetch.ReplicaFetch(self.manager.broker_id, wait_ms, int(cfg.get("replica.fetch.min.bytes")),
                                         int(cfg.get("replica.fetch.response.max.bytes")), list(by_topic.items()))
        timeout = self.manager.socket_timeout + wait_ms / 1000
        resp = await conn.request_encoded(functools.partial(replica_fetch.encode_request, req),
                                          replica_fetch.decode_response, timeout=timeout)
        loop = asyncio.get_running_loop()
        for t in resp.responses:
            for pr in t.partitions:
                key = (t.topic, pr.partition_index)
                st = self.states.get(key)
                if st is None or st is not states.get(key):
                    continue
                p = st.partition
                if pr.error_code == ErrorCode.NONE:
                    self._append(p, pr)
                elif pr.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
                    await self._handle_out_of_range(conn, st)
                else:
                    st.delayed_until = loop.time() + self.manager.backoff_s
                    log.debug("Fetch of %s from %d: %s", p, self.source, ErrorCode(pr.error_code).name)

    def _append(self, p, pr) -> None:
        plog = p.log
        data = pr.records
        if data:
            buf = bytearray(data)
            try:
                # Offsets unchecked: batches the leader's cleaner thinned keep their offset range.
                headers = records.validate_batches(buf, check_offsets=False)
            except records.RecordError as exc:
                log.error("Leader %d sent invalid records for %s: %s", self.source, p, exc)
                return
            if headers:
                if headers[0].base_offset < plog.log_end_offset:  # after it: records compacted away
                    log.warning("Leader %d sent %s from offset %d but our LEO is %d; refetching", self.source, p,
                                headers[0].base_offset, plog.log_end_offset)
                    return
                try:
                    for chunk, hs in segment_sized(buf, headers, plog.config.segment_bytes):
                        plog.append_as_follower(chunk, hs)
                except OSError as exc:  # our log dir failed: it goes offline and this replica with it (KIP-112)
                    log.error("Error appending to %s fetched from %d: %s", p, self.source, exc)
                    self.manager.storage_failed(plog.dir, exc)
                    return
        self.manager.throttle.after_follower_append(p, len(data) if data else 0, pr.high_watermark)
        new_hw = min(pr.high_watermark, plog.log_end_offset)
        if new_hw > plog.high_watermark:
            plog.high_watermark = new_hw
        # After the high watermark, as Kafka's fetcher does: a log start offset may not pass it.
        if pr.log_start_offset > plog.log_start_offset:
            plog.maybe_increment_log_start_offset(min(pr.log_start_offset, plog.high_watermark))
        self.manager.on_follower_progress(p)

    async def _handle_out_of_range(self, conn: AsyncBrokerConnection, st: FetchState) -> None:
        """Our fetch offset is outside the leader's log: re-align by epoch or restart at its start."""
        p = st.partition
        earliest, latest = await self.manager.leader_offsets(conn, p, st.leader_epoch)
        if earliest is None:
            st.delayed_until = asyncio.get_running_loop().time() + self.manager.backoff_s
            return
        leo = p.log.log_end_offset
        if leo > latest:
            log.warning("Truncating %s from %d to the leader's end %d", p, leo, latest)
            p.log.truncate_to(latest)
        elif leo < earliest:
            log.warning("Restarting %s at the leader's log start %d (our LEO %d fell behind retention)",
                        p, earliest, leo)
            p.log.truncate_fully_and_start_at(earliest)


class ReplicaFetcherManager:
    """Assigns followed partitions to per-source-broker fetchers."""

    def __init__(self, broker_id: int, config: BrokerConfig, metadata: MetadataCache, throttle: ReplicationThrottle,
                 storage_failed: Callable[[str, BaseException], None]) -> None:
        self.broker_id = broker_id
        self.config = config
        self.metadata = metadata  # where the leaders are
        self.throttle = throttle  # KIP-73, the follower side
        self.storage_failed = storage_failed  # an OSError appending: that log dir goes offline
        # Leaders' addresses from LeaderAndIsr (its live leaders), for those the metadata cache does not know yet.
        self.leader_endpoints: dict[int, tuple[str, int]] = {}
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self.socket_timeout = int(self.config.get("replica.socket.timeout.ms")) / 1000
        self.backoff_s = int(self.config.get("replica.fetch.backoff.ms")) / 1000

    def endpoint(self, broker_id: int) -> tuple[str, int] | None:
        """Where to reach a broker, from the metadata cache."""
        ep = self.metadata.brokers.get(broker_id)
        if ep is not None:
            return ep.host, ep.port
        return self.leader_endpoints.get(broker_id)

    def add_partition(self, partition, leader: int) -> None:
        """Start following `leader` for this partition (truncating first)."""
        f = self.fetchers.get(leader)
        if f is None:
            f = self.fetchers[leader] = ReplicaFetcher(self, leader)
            f.start()
        f.states[(partition.topic, partition.index)] = FetchState(partition, partition.leader_epoch)
        self.throttle.follower_started(partition)
        f.wakeup.set()

    def remove_partition(self, topic: str, index: int) -> None:
        """Stop fetching this partition from whichever broker."""
        for f in self.fetchers.values():
            f.states.pop((topic, index), None)

    def on_follower_progress(self, partition) -> None:
        """Hook for the broker (e.g. waking local waiters); no-op by default."""

    async def leader_offsets(self, conn: AsyncBrokerConnection, p, leader_epoch: int) -> tuple[int | None, int]:
        """The leader's (log start, log end) for a partition, via ListOffsets as a replica."""
        cls = request_class(ApiKey.ListOffsets)[4]
        out = []
        for ts in (-2, -1):
            req = cls(replica_id=self.broker_id, isolation_level=0, topics=[cls.ListOffsetsTopic(
                name=p.topic, partitions=[cls.ListOffsetsTopic.ListOffsetsPartition(
                    partition_index=p.index, current_leader_epoch=leader_epoch, timestamp=ts)])])
            resp = await conn.request(req, 4, timeout=self.socket_timeout)
            pr = resp.topics[0].partitions[0]
            if pr.error_code != 0:
                return None, -1
            out.append(pr.offset)
        return out[0], out[1]

    async def shutdown(self) -> None:
        """Stop every fetcher."""
        await asyncio.gather(*(f.stop() for f in self.fetchers.values()), return_exceptions=True)
        self.fetchers.clear()


def segment_sized(
    buf: bytearray, headers: list[records.BatchHeader], limit: int
) -> Iterator[tuple[memoryview, list[records.BatchHeader]]]:
    """Split fetched batches into runs that each fit one segment, headers re-based to their run.

    The leader may read across its segment boundaries, so one fetch can carry more bytes than
    segment.bytes; the log refuses a single append larger than a segment, so the follower appends
    run by run (a lone batch larger than a segment still goes alone and is refused as in Kafka).
    Header positions index the appended buffer (the offset index and marker reads use them), so each
    run's headers are shifted to start at 0.
    """
    start = end = 0
    first = 0
    for i, h in enumerate(headers):
        size = h.batch_length + 12  # baseOffset (8) and batchLength (4) precede the counted bytes
        if end > start and end + size - start > limit:
            yield _run(buf, headers[first:i], start, end)
            start, first = end, i
        end += size
    if end > start:
        yield _run(buf, headers[first:], start, end)


def _run(buf: bytearray, headers: list[records.BatchHeader], start: int, end: int):
    if start == 0:
        return memoryview(buf)[:end], headers
    return memoryview(buf)[start:end], [replace(h, position=h.position - start) for h in headers]
