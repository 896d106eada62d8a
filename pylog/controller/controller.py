"""The controller: one broker, elected through /controller, decides every leader and ISR.

A single task drains the event queue and alone touches the ControllerContext; kazoo watch
callbacks only post events (with the generation they were registered under, so events from an
earlier term are dropped). ZooKeeper calls run on a one-thread executor so the broker's request
handling never waits on them, and every write is fenced by the controller epoch.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from typing import Any, Awaitable, Callable, Iterable

from pylog.common.types import TP
from pylog.zk.feature_znode import ensure_znode as ensure_feature_znode
from pylog.controller import events as ev
from pylog.controller import requests as rq
from pylog.controller.channel import ControllerChannel, LocalDelivery
from pylog.controller.context import ControllerContext, LiveBroker
from pylog.controller.core import Listeners
from pylog.controller.deletion import TopicDeletionManager
from pylog.controller.log_dirs import LogDirFailures, storage_errors
from pylog.controller.membership import BrokerMembership
from pylog.controller.notifications import Notifications
from pylog.controller.partitions import PartitionChanges
from pylog.controller.preferred import PreferredLeaderElection
from pylog.controller.reassignment import PartitionReassignments
from pylog.controller.rebalance import AutoLeaderRebalance
from pylog.controller.topics import TopicChanges
from pylog.controller.zk_ops import ControllerZk
from pylog.protocol.errors import ErrorCode
from pylog.zk import paths
from pylog.zk.codecs import ControllerInfo
from pylog.zk.core import SessionEvent, ZkConnection
from pylog.zk.errors import ControllerMovedError, SessionExpiredError

log = logging.getLogger("pylog.controller")


class Controller:
    """Runs for controller inside a broker and, when elected, manages the cluster."""

    def __init__(self, broker_id: int, zk: ZkConnection, config: Any,
                 local_delivery: LocalDelivery | None = None) -> None:
        self.broker_id = broker_id
        self.zk = zk
        self.config = config
        self.ops = ControllerZk(zk)
        self.ctx = ControllerContext()
        self.is_active = False
        self.generation = 0
        self.queue: asyncio.Queue = asyncio.Queue()
        self.channel = ControllerChannel(broker_id, local=local_delivery)
        self.dynamic_default: dict[str, str] = {}  # /config/brokers/<default>
        # The parts, each given exactly the siblings it calls (see core.py). Listeners hear
        # failover, resignation, ISR changes and broker membership, in this order.
        self.listeners = Listeners()
        self.partitions = PartitionChanges(self)
        self.deletion = TopicDeletionManager(self)
        self.topics = TopicChanges(self, self.partitions)
        self.membership = BrokerMembership(self, self.partitions, self.deletion, self.listeners)
        self.notifications = Notifications(self, self.partitions, self.listeners)
        self.log_dirs = LogDirFailures(self, self.partitions)
        # Admin extensions; the broker's ElectLeaders / AlterPartitionReassignments handlers reach
        # them through these attributes.
        self.preferred = PreferredLeaderElection(self, self.partitions)
        self.reassignments = PartitionReassignments(self, self.partitions)
        self.rebalance = AutoLeaderRebalance(self, self.partitions, self.preferred)
        for listener in (self.preferred, self.reassignments, self.rebalance):
            self.listeners.add(listener)
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"controller-zk-{broker_id}")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._watches: list[Any] = []
        self._timers: list[asyncio.Task] = []

    # -- plumbing -------------------------------------------------------------------------

    async def zk_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking ZooKeeper call off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, functools.partial(fn, *args))

    def post(self, event: Any, generation: int | None = None) -> None:
        """Queue an event from any thread (dropped if it belongs to an earlier term)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if generation is not None and generation != self.generation:
            return
        loop.call_soon_threadsafe(self.queue.put_nowait, event)

    async def call(self, func: Callable[[], Awaitable[Any]]) -> Any:
        """Run `func` on the controller's task (serialised with every other event)."""
        fut = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(ev.Call(func, fut))
        return await fut

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Watch /controller and run for election."""
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name=f"controller-{self.broker_id}")
        self.zk.add_session_listener(self._on_session)
        await self.zk_call(self.zk.watch_data, paths.controller(), lambda d, s: self.post(ev.Elect()))

    def _on_session(self, event: SessionEvent) -> None:
        # LOST means resign now (whatever is queued behind would act on a seat we no longer
        # hold); the new session that follows runs for controller again. That must be a plain
        # election, not another resignation: /controller's watch may already have re-elected us
        # in the new session, and resigning then would leave our own znode holding the seat
        # while nobody acts as controller.
        if event == SessionEvent.EXPIRED:
            self.post(ev.SessionLost())
        elif event == SessionEvent.NEW_SESSION:
            self.post(ev.Elect())

    async def stop(self) -> None:
        """Resign (handing /controller over) and stop the event task."""
        self.zk.remove_session_listener(self._on_session)
        if self._task is not None:
            self.queue.put_nowait(ev.Shutdown())
            try:
                await asyncio.wait_for(self._task, 10)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        self._executor.shutdown(wait=False)

    async def _run(self) -> None:
        while True:
            event = await self.queue.get()
            if isinstance(event, ev.Shutdown):
                was_active = self.is_active
                await self._resign()
                if was_active:
                    try:
                        await self.zk_call(self.ops.resign, self.broker_id)
                    except Exception as exc:
                        log.warning("Could not delete /controller on shutdown: %s", exc)
                return
            try:
                await self._process(event)
            except ControllerMovedError as exc:
                log.warning("Controller %d moved: %s; resigning", self.broker_id, exc)
                if isinstance(event, ev.Call) and not event.future.done():
                    event.future.set_exception(exc)  # an admin request waiting on it must not hang
                await self._resign()
                await self._elect()
            except SessionExpiredError as exc:
                # The seat went with the session; the NEW_SESSION that follows runs the election.
                log.warning("Controller %d lost its ZooKeeper session while processing %s; resigning",
                            self.broker_id, type(event).__name__)
                if isinstance(event, ev.Call) and not event.future.done():
                    event.future.set_exception(exc)
                await self._resign()
            except Exception as exc:
                log.exception("Controller %d failed to process %s", self.broker_id, type(event).__name__)
                if isinstance(event, ev.Call) and not event.future.done():
                    event.future.set_exception(exc)

    async def _process(self, event: Any) -> None:
        if isinstance(event, ev.Call):
            if not event.future.done():
                result = await event.func()
                if not event.future.done():
                    event.future.set_result(result)
            return
        if isinstance(event, ev.Elect):
            await self._elect()
        elif isinstance(event, ev.SessionLost):
            if not await self._holds_seat():
                await self._resign()
        elif not self.is_active:
            return
        elif isinstance(event, ev.BrokerChange):
            await self.membership.on_change()
        elif isinstance(event, ev.TopicChange):
            await self.topics.on_change()
        elif isinstance(event, ev.PartitionModifications):
            await self.topics.on_modified(event.topic)
        elif isinstance(event, ev.TopicDeletion):
            await self.deletion.on_marked()
        elif isinstance(event, ev.IsrChange):
            await self.notifications.on_isr_change()
        elif isinstance(event, ev.ConfigChange):
            await self.notifications.on_config_change()
        elif isinstance(event, ev.LogDirEvent):
            await self.log_dirs.on_event()
        elif isinstance(event, ev.OfflineReplicas):
            await self.log_dirs.on_offline_replicas(event.broker_id, list(event.tps))
        elif isinstance(event, ev.DeletionConfirmed):
            await self.deletion.on_confirmed(event.topic, event.broker_id, event.resp)

    # -- election and failover ------------------------------------------------------------

    async def _elect(self) -> None:
        current = await self.zk_call(self.ops.controller_id)
        if self.is_active:
            if current != self.broker_id:
                log.info("Controller %d: /controller now names %d; resigning", self.broker_id, current)
                await self._resign()
            else:
                return
        if current != -1:
            return
        won = await self.zk_call(self.ops.try_elect, self.broker_id)
        if won is None:
            return
        epoch, version = won
        log.info("Broker %d is the controller at epoch %d", self.broker_id, epoch)
        await self._on_failover(epoch, version)

    async def _holds_seat(self) -> bool:
        """Whether /controller is ours in the current, connected session.

        A session-loss event can be handled after the new session's election already made us
        controller again (events come from different threads); resigning then would leave our
        own znode holding the seat with nobody acting as controller.
        """
        if not self.is_active or not self.zk.connected:
            return False
        try:
            got = await self.zk_call(self.zk.get_or_none, paths.controller())
        except Exception:  # unreachable again: we cannot be sure of the seat
            return False
        return (got is not None and got[1].ephemeralOwner == self.zk.session_id
                and ControllerInfo.decode(got[0]).broker_id == self.broker_id)

    async def _resign(self) -> None:
        if not self.is_active:
            return
        log.info("Broker %d resigns as controller (epoch %d)", self.broker_id, self.ctx.epoch)
        self.is_active = False
        self.generation += 1
        for w in self._watches:
            w.cancel()
        self._watches.clear()
        for t in self._timers:
            t.cancel()
        self._timers.clear()
        await self.listeners.on_resign()
        await self.channel.close()
        self.ctx = ControllerContext()

    def _watch_children(self, path: str, event: Any) -> None:
        gen = self.generation
        self._watches.append(self.zk.watch_children(path, lambda _c: self.post(event, gen)))

    def watch_topic(self, topic: str) -> None:
        """Watch a topic's assignment znode for this term (blocking: call through zk_call)."""
        gen = self.generation
        self._watches.append(self.zk.watch_data(
            paths.topic(topic), lambda d, s: self.post(ev.PartitionModifications(topic), gen) if d else None))

    async def _on_failover(self, epoch: int, version: int) -> None:
        t0 = time.monotonic()
        self.generation += 1
        self.ctx = ctx = ControllerContext(epoch=epoch, epoch_zk_version=version)
        self.ops.epoch_zk_version = version
        self.is_active = True
        for path, event in ((paths.broker_ids(), ev.BrokerChange()), (paths.topics(), ev.TopicChange()),
                            (paths.delete_topics(), ev.TopicDeletion()),
                            (paths.isr_change_notifications(), ev.IsrChange()),
                            (paths.log_dir_event_notifications(), ev.LogDirEvent())):
            await self.zk_call(self._watch_children, path, event)
        await self.notifications.start()
        await self.zk_call(ensure_feature_znode, self.zk)  # KIP-584: /feature, enabled (Kafka's failover step)
        await self.zk_call(self._watch_children, paths.config_changes(), ev.ConfigChange())
        for bid, (reg, bepoch) in (await self.zk_call(self.ops.live_brokers)).items():
            ctx.live[bid] = LiveBroker(reg, bepoch)
            self.open_channel(bid)
        topics = await self.zk_call(self.ops.topics)
        await self.topics.load(topics)
        states = await self.zk_call(self.ops.partition_states, list(ctx.assignments))
        ctx.leaders.update(states)
        ctx.initialize_states()
        self.send_update_metadata(ctx.live_ids, None, resend=True)
        for bid in ctx.live_ids:
            self.send_leader_and_isr(bid, [tp for tp in ctx.partitions_on(bid) if tp in ctx.leaders], resend=True)
        log.info("Controller %d loaded %d brokers, %d topics, %d partitions in %.0f ms", self.broker_id,
                 len(ctx.live), len(ctx.topic_ids), len(ctx.assignments), (time.monotonic() - t0) * 1000)
        await self.deletion.on_marked()
        await self.partitions.trigger_online()
        await self.membership.on_failover()
        await self.listeners.on_failover()
        await self.notifications.on_isr_change()
        await self.log_dirs.on_event()
        # Kafka's rule of thumb for this step is ~2 ms per partition; scripts/bench replication_controller
        # reads this line.
        log.info("Controller %d ready at epoch %d: %d partitions in %.0f ms", self.broker_id, epoch,
                 len(ctx.assignments), (time.monotonic() - t0) * 1000)

    def open_channel(self, bid: int) -> None:
        """Start talking to a newly registered broker."""
        reg = self.ctx.live[bid].registration
        ep = reg.endpoint(self.config.inter_broker_listener_name) or reg.endpoint("PLAINTEXT") or reg.endpoints[0]
        self.channel.add_broker(bid, ep.host or "127.0.0.1", ep.port)

    def close_channel(self, bid: int) -> None:
        """Stop talking to a broker that is gone."""
        self.channel.remove_broker(bid)

    # -- requests to brokers ----------------------------------------------------------------

    def send_update_metadata(self, brokers: Iterable[int], tps: Iterable[TP] | None,
                              deleting: Iterable[TP] = (), resend: bool = False) -> None:
        """UpdateMetadata to `brokers` (`resend`: a failover's full state, see ControllerChannel)."""
        for bid, (msg, v) in sorted(rq.update_metadata(self.ctx, self.broker_id, brokers, tps, deleting).items()):
            self.channel.send(bid, msg, v, local=resend)

    def send_leader_and_isr(self, bid: int, tps: Iterable[TP], is_new: bool = False, resend: bool = False) -> None:
        """LeaderAndIsr to one broker about `tps` (`resend`: a failover's full state)."""
        tps = list(tps)
        if tps:
            msg, v = rq.leader_and_isr(self.ctx, self.broker_id, bid, tps, is_new)
            names = {ts.topic_id: ts.topic_name for ts in msg.topic_states}  # v5+ answers by topic id
            gen = self.generation

            def answered(broker: int, resp: Any) -> None:
                # Replicas a broker can't serve (a failed log dir) show up here; the event task acts on them.
                offline = storage_errors(resp, names)
                if offline:
                    self.post(ev.OfflineReplicas(broker, tuple(offline)), gen)
            self.channel.send(bid, msg, v, answered, local=resend)

    def send_stop_replica(self, bid: int, tps: Iterable[TP], delete: bool, deleting_topic: bool = False,
                          callback: Callable[[int, Any], None] | None = None) -> None:
        """Tell a broker to stop (and maybe delete) replicas."""
        msg, v = rq.stop_replica(self.ctx, self.broker_id, bid, tps, delete, deleting_topic)
        self.channel.send(bid, msg, v, callback)

    def propagate(self, tps: Iterable[TP], is_new: bool = False) -> None:
        """Tell the replicas their new state and every live broker the new metadata.

        Brokers in controlled shutdown get no LeaderAndIsr (Kafka's isReplicaOnline excludes
        them): told to follow, they would fetch and be added back to the ISR on their way out.
        """
        tps = sorted(set(tps))
        if not tps:
            return
        by_broker: dict[int, list[TP]] = {}
        live = self.ctx.live_ids
        recipients = self.partitions.eligible()
        for tp in tps:
            for r in self.ctx.assignments[tp].replicas:
                if r in recipients:
                    by_broker.setdefault(r, []).append(tp)
        for bid, group in sorted(by_broker.items()):
            self.send_leader_and_isr(bid, group, is_new)
        self.send_update_metadata(live, tps)

    # -- elections --------------------------------------------------------------------------

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TP]]:
        """Move leadership off a broker that is about to stop; returns what it still leads."""
        return await self.call(functools.partial(self.membership.controlled_shutdown, broker_id, broker_epoch))

