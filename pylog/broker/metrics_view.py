"""Fills the metrics snapshot (pylog.metrics.snapshot) from the broker's state, on its event loop.

The Prometheus exporter's HTTP thread asks for a snapshot through `MetricsView.take`; the reading
itself runs on the loop (the broker's state has one owner), and a loop too busy to answer within
`timeout` gets a snapshot with only the fields readable without it (state, ZooKeeper session).
Reads only: nothing here changes the broker.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import TYPE_CHECKING, Any, Protocol

from pylog.broker.metrics_lag import EndOffsets, LagSources
from pylog.broker.throttle import UNLIMITED
from pylog.common.errors import ErrorCode
from pylog.metrics.snapshot import BrokerSnapshot, ControllerView, GroupView, PartitionView

if TYPE_CHECKING:
    from pylog.broker.group_host import GroupHost
    from pylog.broker.stats import PartitionStats
    from pylog.broker.throttle import ReplicationThrottle
    from pylog.broker.txn_host import TxnHost
    from pylog.controller.controller import Controller
    from pylog.log.manager import LogManager
    from pylog.zk.client import ZkClient

log = logging.getLogger("pylog.metrics")


class MetricsSources(LagSources, Protocol):
    """What the metrics view reads of a broker, read only. Its parts appear as the broker starts (the endpoint
    answers from before then), so they are read where they are, not handed over once."""

    zk: ZkClient | None
    logs: LogManager | None
    stats: PartitionStats
    throttle: ReplicationThrottle | None
    groups: GroupHost | None
    transactions: TxnHost | None
    controller: Controller | None
    stop_requested: asyncio.Event
    started: bool


class MetricsView:
    """Snapshots of one broker for the collector."""

    def __init__(self, sources: MetricsSources, loop: asyncio.AbstractEventLoop) -> None:
        self.sources = sources
        self.loop = loop
        self.end_offsets = EndOffsets(sources)

    def take(self, timeout: float = 2.0) -> BrokerSnapshot:
        """A snapshot, read on the broker's loop (from any other thread)."""
        cheap = self._cheap()
        if self.loop.is_closed() or not self.loop.is_running() or cheap.state in ("starting", "recovery"):
            cheap.complete = cheap.state in ("starting", "recovery")
            return cheap
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def fill() -> None:
            try:
                fut.set_result(self._full(cheap))
            except Exception as exc:  # a half-built broker (shutting down): report what was cheap
                fut.set_exception(exc)

        try:
            self.loop.call_soon_threadsafe(fill)
            return fut.result(timeout)
        except Exception as exc:
            log.debug("Metrics snapshot incomplete: %r", exc)
            cheap.complete = False
            return cheap

    def _cheap(self) -> BrokerSnapshot:
        b = self.sources
        zk = b.zk
        connected = bool(zk is not None and zk.connected)
        if b.stop_requested.is_set():
            state = "shutting_down"
        elif not b.started:
            state = "starting" if b.logs is None else "recovery"
        else:
            state = "running" if connected else "fenced"
        logs = b.logs
        dirs = list(logs.log_dirs) if logs is not None else []
        offline = sorted(logs.offline_dirs) if logs is not None else []
        return BrokerSnapshot(b.broker_id, state, connected, log_dirs=dirs, offline_log_dirs=offline)

    def _full(self, snap: BrokerSnapshot) -> BrokerSnapshot:
        b = self.sources
        if b.replicas is not None:
            snap.partitions = [_partition(p) for p in b.replicas.partitions.values() if p.log is not None]
            snap.offline_replicas = len(b.replicas.offline)
        traffic: dict[str, list[int]] = {}
        for (topic, _), counts in b.stats.snapshot().items():
            t = traffic.setdefault(topic, [0, 0, 0])
            for i, v in enumerate(counts):
                t[i] += v
        snap.traffic = {k: (v[0], v[1], v[2]) for k, v in traffic.items()}
        if b.controller is not None:
            snap.controller = _controller(b.controller)
        if b.groups is not None:
            snap.groups = _groups(b.groups.coordinator)
            snap.end_offsets = self.end_offsets.current({tp for g in snap.groups for tp in g.committed})
        if b.transactions is not None:
            for meta in list(b.transactions.coordinator.txns.values()):
                name = meta.state.value[1]
                snap.transactions[name] = snap.transactions.get(name, 0) + 1
        for direction in ("leader", "follower"):
            if b.throttle is None:
                break
            rate = getattr(b.throttle, direction).rate
            snap.throttle_rates[direction] = -1.0 if rate >= UNLIMITED else float(rate)
        return snap


def _partition(p: Any) -> PartitionView:
    plog = p.log
    view = PartitionView(p.topic, p.index, p.is_leader, tuple(p.replicas), tuple(p.isr), plog.config.min_insync_replicas,
                         plog.size_bytes, plog.log_start_offset, plog.log_end_offset, p.high_watermark,
                         len(plog.producer_state.producers), tuple(p.adding))
    if p.is_leader and p.adding:
        view.bytes_to_add = _bytes_behind(p, plog)
    return view


def _bytes_behind(p: Any, plog: Any) -> int:
    """What the adding replicas still have to copy, estimated from their offsets and the mean record size."""
    records = max(plog.log_end_offset - plog.log_start_offset, 1)
    per_record = plog.size_bytes / records
    behind = 0
    for r in p.adding:
        f = p.followers.get(r)
        position = f.leo if f is not None and f.leo >= 0 else plog.log_start_offset
        behind += int(max(plog.log_end_offset - max(position, plog.log_start_offset), 0) * per_record)
    return behind


def _controller(c: Any) -> ControllerView:
    if not c.is_active:
        return ControllerView(False)
    ctx = c.ctx
    live = ctx.live_ids
    view = ControllerView(True, global_topics=len(ctx.topic_ids), global_partitions=len(ctx.assignments))
    for tp, a in ctx.assignments.items():
        if tp[0] in ctx.topics_to_delete:
            continue
        st = ctx.leaders.get(tp)
        if st is None or st.leader not in live:
            view.offline_partitions += 1
        elif a.replicas and st.leader != a.replicas[0]:
            view.preferred_imbalance += 1
        if a.reassigning:
            view.reassigning_partitions += 1
    return view


def _groups(coordinator: Any) -> list[GroupView]:
    out = []
    consumer = coordinator.consumer.groups  # KIP-848 groups: their state names, member count and group epoch
    for gid in sorted(set(coordinator.groups) | set(coordinator.offsets) | set(consumer)):
        g, cg = coordinator.groups.get(gid), consumer.get(gid)
        committed = {tp: v.offset for tp, v in coordinator.offsets.get(gid, {}).items()}
        if cg is not None:
            out.append(GroupView(gid, cg.state(), len(cg.members), cg.group_epoch, committed))
        else:
            out.append(GroupView(gid, g.state.value if g is not None else "Empty", len(g.members) if g else 0,
                                 g.generation if g else 0, committed))
    return out
