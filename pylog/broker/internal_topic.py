"""A coordinator's internal topic on this broker (`__consumer_offsets`, `__transaction_state`).

Both coordinators see their topic the same way: leadership of a partition identified by the epoch
it began at (the coordinator epoch), appends as leader that wait for the whole ISR (acks=all),
reading a partition back when this broker becomes its leader, the coordinator of a key being the
leader of its partition, and the topic created on first use. GroupHost and TxnHost add their
topic's settings and coordinator.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Coroutine

from pylog.broker.delayed_produce import Append
from pylog.common.clock import now_ms
from pylog.protocol import records
from pylog.protocol.batch_rewrite import build_keyed_batch
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.replica_manager import ReplicaManager
    from pylog.broker.topic_admin import TopicAdmin
    from pylog.common.config import BrokerConfig

Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task"]

log = logging.getLogger("pylog.broker")

READ_CHUNK = 1 << 20
NOT_FOUND = (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1)
# At most this much of waiting appends goes into one batch: far below max.message.bytes (1 MiB by default),
# so gathering never turns acceptable appends into a too-large batch.
GROUP_COMMIT_BYTES = 256 * 1024


class InternalTopicHost:
    """An internal topic's partitions led here, as a coordinator's log seam."""

    topic: str
    partitions_key: str  # the broker config giving the partition count (e.g. offsets.topic.num.partitions)
    replication_key: str
    full_replication_only: bool  # created only once `replication_key` brokers are alive (else with fewer)
    append_timeout_key: str

    def __init__(self, config: BrokerConfig, metadata: MetadataCache, replicas: ReplicaManager,
                 topic_admin: TopicAdmin, spawn: Spawn, partition_for: Callable[[str, int], int]) -> None:
        self.config = config
        self.metadata = metadata  # the topic's partitions and leaders (FindCoordinator)
        self.replicas = replicas  # leadership of the topic's partitions, appends and reads
        self.topic_admin = topic_admin  # creates the topic on first use
        self.spawn = spawn
        self.partition_for = partition_for
        self._creating: asyncio.Task | None = None
        self._short_logged: int | None = None  # the live broker count last logged as too few to create the topic
        # partition -> the leader epoch at which this broker last became its leader. The coordinator
        # reloads when this changes, not on every epoch bump: the controller also bumps the epoch when
        # a follower dies, and a leader that never stopped leading already holds its log's state.
        self._terms: dict[int, int] = {}
        # partition -> appends waiting for the batch in flight to be acknowledged (see append)
        self._pending: dict[int, list[tuple[list, asyncio.Future]]] = {}

    def start(self) -> None:
        """Follow leadership changes of the topic's partitions (load on becoming leader, unload on losing it)."""
        self.replicas.on_leadership_change.append(self._leadership_changed)
        for p in self.replicas.partitions.values():
            if p.topic == self.topic and p.is_leader:
                self._leadership_changed(p)

    def _leadership_changed(self, p: Any) -> None:
        if p.topic == self.topic:
            if p.is_leader:
                self._terms[p.index] = p.leader_epoch
            else:
                self._terms.pop(p.index, None)
            self.on_leadership_change(p.index)

    def on_leadership_change(self, partition: int) -> None:
        """Tell the coordinator that this broker started or stopped leading `partition`."""
        raise NotImplementedError

    # -- the coordinator's log seam -------------------------------------------------------------

    def num_partitions(self) -> int:
        """The topic's partition count once it exists, else the configured one."""
        parts = self.metadata.topics.get(self.topic)
        return len(parts) if parts else int(self.config.get(self.partitions_key))

    def leader_epoch(self, partition: int) -> int | None:
        """The epoch at which we became leader of the partition, or None when we do not lead it."""
        replicas = self.replicas
        p = replicas.get(self.topic, partition) if replicas is not None else None
        if p is None or not p.is_leader or p.fenced:
            return None
        return self._terms.setdefault(partition, p.leader_epoch)

    async def append(self, partition: int, recs: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append as leader and wait for the ISR (acks=all), up to the topic's append timeout.

        Group commit: while one batch of a partition waits for its ISR, the records of the appends
        that arrive meanwhile are gathered and go out together as the next batch (one validation,
        one log append, one replication round trip for all of them), in arrival order. An idle
        partition appends at once, so a lone writer waits for nothing but its own write."""
        return (await self.append_records(partition, recs))[0]

    async def append_records(self, partition: int, recs: list[tuple[bytes, bytes | None]],
                             producer: tuple[int, int] | None = None) -> tuple[ErrorCode, int]:
        """`append`, answering the base offset of the batch that holds the records too (-1 on error). With
        `producer` (id, epoch) the records go alone in a transactional batch of that producer, without
        sequence numbers, as Kafka's group coordinator writes a TxnOffsetCommit (so its marker applies)."""
        if producer is not None:
            return await self._write(partition, recs, producer)
        queue = self._pending.get(partition)
        if queue is not None:  # a batch is in flight: ride along with the next one
            fut = asyncio.get_running_loop().create_future()
            queue.append((recs, fut))
            return await fut
        self._pending[partition] = []
        try:
            out = await self._write(partition, recs)
        except BaseException:
            self._drain_failed(partition)
            raise
        if self._pending[partition]:
            self.spawn(self._drain(partition))  # this caller has its answer; the others go on
        else:
            del self._pending[partition]
        return out

    async def _drain(self, partition: int) -> None:
        """Write the gathered appends, a batch of at most GROUP_COMMIT_BYTES at a time, until none is left."""
        try:
            while queue := self._pending[partition]:
                size, n = 0, 0
                while n < len(queue) and (n == 0 or size < GROUP_COMMIT_BYTES):
                    size += sum(len(k) + len(v or b"") for k, v in queue[n][0])
                    n += 1
                queue, self._pending[partition] = queue[:n], queue[n:]
                shared = await self._write(partition, [r for rs, _ in queue for r in rs])
                for _, fut in queue:
                    if not fut.done():
                        fut.set_result(shared)
            del self._pending[partition]
        finally:
            self._drain_failed(partition)

    def _drain_failed(self, partition: int) -> None:
        for _, fut in self._pending.pop(partition, []):
            if not fut.done():
                fut.set_result((ErrorCode.NOT_LEADER_OR_FOLLOWER, -1))

    async def _write(self, partition: int, recs: list[tuple[bytes, bytes | None]],
                     producer: tuple[int, int] | None = None) -> tuple[ErrorCode, int]:
        rm = self.replicas
        p, err = rm.leader_partition(self.topic, partition)
        if p is None:
            return err, -1
        pid, epoch = producer if producer is not None else (-1, -1)
        buf, header = build_keyed_batch(recs, now_ms(), pid, epoch, producer is not None)
        # Keyed and built here: the headers go along, so the batch is not parsed a second time.
        delayed = rm.append_records([Append(partition, p, buf, [header])], -1,
                                    int(self.config.get(self.append_timeout_key)), from_coordinator=True)
        await delayed.wait()
        out = delayed.result(partition)
        return out.error, out.base_offset

    async def read(self, partition: int) -> AsyncIterator[tuple[bytes, bytes | None]]:
        """Every record from the log start to the log end offset (what Kafka's loaders read)."""
        async for h, batch, offset in self.read_batches(partition):
            if not h.is_control:
                for r in records.read_records(batch):
                    if r.offset >= offset and r.key is not None:
                        yield r.key, r.value

    async def read_batches(self, partition: int) -> AsyncIterator[tuple[records.BatchHeader, memoryview, int]]:
        """(header, batch bytes, first offset still wanted) of every batch from the log start to the log end."""
        p = self.replicas.get(self.topic, partition)
        if p is None:
            return
        plog = p.log
        offset, end = plog.log_start_offset, plog.log_end_offset
        while offset < end:
            slices = plog.read(offset, READ_CHUNK, end)
            if not slices:
                break
            for sl in slices:
                data = await asyncio.get_running_loop().run_in_executor(None, sl.read)
                for h in records.iter_batches(data):
                    if h.last_offset >= offset:
                        yield h, memoryview(data)[h.position:h.position + h.size], offset
                    offset = max(offset, h.last_offset + 1)

    # -- FindCoordinator ------------------------------------------------------------------------

    def find(self, key: str, listener: str | None = None) -> tuple[ErrorCode, int, str, int]:
        """(error, node id, host, port) of the key's coordinator as reached through `listener` (the client's);
        creates the topic on first use."""
        parts = self.metadata.topics.get(self.topic)
        if not parts:
            self._ensure_topic()
            return NOT_FOUND
        info = parts.get(self.partition_for(key, len(parts)))
        node = self.metadata.brokers.get(info.leader) if info is not None else None
        if node is not None and listener is not None:  # Kafka: the address on the listener the request came in on
            node = node.on(listener)
        if node is None:
            return NOT_FOUND
        return ErrorCode.NONE, node.id, node.host, node.port

    def _ensure_topic(self) -> None:
        if self._creating is None or self._creating.done():
            self._creating = self.spawn(self._create_topic())

    def topic_configs(self, replication_factor: int) -> dict[str, str]:
        """The topic-level configs the topic is created with."""
        raise NotImplementedError

    async def _create_topic(self) -> None:
        rf = self.creation_replication_factor(len(self.metadata.brokers))
        if rf is None:
            return
        n = int(self.config.get(self.partitions_key))
        res = await self.topic_admin.create_topic(self.topic, n, rf, None, self.topic_configs(rf), False, 30000)
        if res.error == ErrorCode.NONE:
            log.info("Created %s with %d partitions, replication factor %d", self.topic, n, rf)
        elif res.error != ErrorCode.TOPIC_ALREADY_EXISTS:  # (another broker created it first)
            log.warning("Could not create %s: %s", self.topic, res.message or res.error.name)

    def creation_replication_factor(self, live: int) -> int | None:
        """The replication factor to create the topic with while `live` brokers are known, or None: not yet.

        No live broker known means the controller has not told this broker about the cluster yet (it
        has just started, maybe not even registered): nothing to place replicas on. With
        `full_replication_only` (Kafka's rule for __consumer_offsets) creation waits until the
        configured factor's worth of brokers is alive; otherwise it makes do with the live ones."""
        configured = int(self.config.get(self.replication_key))
        if live == 0:
            return None
        if live >= configured or not self.full_replication_only:
            return min(configured, live)
        if self._short_logged != live:  # once per count, not once per client retry
            self._short_logged = live
            log.info("Number of alive brokers '%d' does not meet the required replication factor '%d' for %s "
                     "(configured via '%s'). This error can be ignored if the cluster is starting up and not all "
                     "brokers are up yet.", live, configured, self.topic, self.replication_key)
        return None
