"""The broker side of the group coordinator: `__consumer_offsets` as its store, and FindCoordinator.

The coordinator (pylog/coordinator/group/) only sees the `OffsetsLog` seam implemented here:
leadership of an offsets partition, appends through the replica manager with acks=all (the
commit answers once every ISR member has the record, or fails after offsets.commit.timeout.ms),
and reading a partition back when this broker becomes its leader.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator

from pylog.coordinator.group.api import CoordinatorConfig
from pylog.coordinator.group.coordinator import GroupCoordinator
from pylog.coordinator.group.hashing import OFFSETS_TOPIC, partition_for
from pylog.protocol import records
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.services import BrokerServices, HandlerContext

log = logging.getLogger("pylog.coordinator.group")

READ_CHUNK = 1 << 20


class GroupHost:
    """Hosts a GroupCoordinator over this broker's replicas of `__consumer_offsets`."""

    def __init__(self, broker: BrokerServices) -> None:
        self.broker = broker
        self.config = broker.config
        self.coordinator = GroupCoordinator(self, CoordinatorConfig.from_broker(self.config.get))
        self._creating: asyncio.Task | None = None
        # partition -> the leader epoch at which this broker last became its leader. The coordinator
        # reloads when this changes, not on every epoch bump: the controller also bumps the epoch when
        # a follower dies, and a leader that never stopped leading already holds its log's state.
        self._terms: dict[int, int] = {}

    def start(self) -> None:
        """Follow leadership changes of offsets partitions (load on becoming leader, unload on losing it)."""
        self.broker.replicas.on_leadership_change.append(self._leadership_changed)
        for p in self.broker.replicas.partitions.values():
            if p.topic == OFFSETS_TOPIC and p.is_leader:
                self._leadership_changed(p)

    def _leadership_changed(self, p: Any) -> None:
        if p.topic == OFFSETS_TOPIC:
            if p.is_leader:
                self._terms[p.index] = p.leader_epoch
            else:
                self._terms.pop(p.index, None)
            self.coordinator.on_leadership_change(p.index)

    # -- OffsetsLog ---------------------------------------------------------------------------

    def num_partitions(self) -> int:
        """The topic's partition count once it exists, else offsets.topic.num.partitions."""
        parts = self.broker.metadata.topics.get(OFFSETS_TOPIC)
        return len(parts) if parts else int(self.config.get("offsets.topic.num.partitions"))

    def leader_epoch(self, partition: int) -> int | None:
        """The epoch at which we became leader of the offsets partition, or None when we do not lead it."""
        replicas = self.broker.replicas
        p = replicas.get(OFFSETS_TOPIC, partition) if replicas is not None else None
        if p is None or not p.is_leader or p.fenced:
            return None
        return self._terms.setdefault(partition, p.leader_epoch)

    async def append(self, partition: int, recs: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append as leader and wait for the ISR (acks=all), up to offsets.commit.timeout.ms."""
        rm = self.broker.replicas
        p, err = rm.leader_partition(OFFSETS_TOPIC, partition)
        if p is None:
            return err
        buf = bytearray(records.build_batch([(k, v, (), None) for k, v in recs]))
        out = rm.append(p, buf, -1)
        if out.error != ErrorCode.NONE:
            return out.error
        waiter = p.add_produce_waiter(out.last_offset + 1)
        try:
            return ErrorCode(await asyncio.wait_for(waiter, int(self.config.get("offsets.commit.timeout.ms")) / 1000))
        except asyncio.TimeoutError:
            return ErrorCode.REQUEST_TIMED_OUT

    async def read(self, partition: int) -> AsyncIterator[tuple[bytes, bytes | None]]:
        """Every record from the log start to the log end offset (what Kafka's loader reads)."""
        p = self.broker.replicas.get(OFFSETS_TOPIC, partition)
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
                    if h.last_offset >= offset and not h.attributes & records.CONTROL_MASK:
                        for r in records.read_records(memoryview(data)[h.position:h.position + h.size]):
                            if r.offset >= offset and r.key is not None:
                                yield r.key, r.value
                    offset = max(offset, h.last_offset + 1)

    # -- FindCoordinator ----------------------------------------------------------------------

    def find(self, group_id: str, listener: str | None = None) -> tuple[ErrorCode, int, str, int]:
        """(error, node id, host, port) of the group's coordinator as reached through `listener` (the client's);
        creates the offsets topic on first use."""
        parts = self.broker.metadata.topics.get(OFFSETS_TOPIC)
        if not parts:
            self._ensure_topic()
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        info = parts.get(partition_for(group_id, len(parts)))
        node = self.broker.metadata.brokers.get(info.leader) if info is not None else None
        if node is not None and listener is not None:  # Kafka: the address on the listener the request came in on
            node = node.on(listener)
        if node is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        return ErrorCode.NONE, node.id, node.host, node.port

    def _ensure_topic(self) -> None:
        if self._creating is None or self._creating.done():
            self._creating = self.broker.spawn(self._create_topic())

    async def _create_topic(self) -> None:
        cfg = self.config
        live = max(len(self.broker.metadata.brokers), 1)
        rf = min(int(cfg.get("offsets.topic.replication.factor")), live)
        configs = {"cleanup.policy": "compact", "compression.type": "producer",
                   "segment.bytes": str(cfg.get("offsets.topic.segment.bytes"))}
        res = await self.broker.topic_admin.create_topic(
            OFFSETS_TOPIC, int(cfg.get("offsets.topic.num.partitions")), rf, None, configs, False, 30000)
        if res.error not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
            log.warning("Could not create %s: %s", OFFSETS_TOPIC, res.message or res.error.name)
        else:
            log.info("Created %s with %d partitions, replication factor %d", OFFSETS_TOPIC,
                     int(cfg.get("offsets.topic.num.partitions")), rf)

    async def expire_offsets(self) -> None:
        """Periodic offsets.retention.minutes check."""
        await self.coordinator.expire_offsets()


def coordinator_of(ctx: HandlerContext) -> GroupCoordinator:
    """The group coordinator of the broker serving a request (the handlers' only way to it)."""
    assert ctx.broker.groups is not None, "the broker serves requests only once its group coordinator exists"
    return ctx.broker.groups.coordinator


def client_host(ctx: HandlerContext) -> str:
    """A member's host as Kafka reports it (`/<address>`)."""
    return "/" + ctx.peer.rsplit(":", 1)[0] if ctx.peer and ctx.peer != "?" else ""
