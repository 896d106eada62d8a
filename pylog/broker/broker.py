"""The broker process: wires logs, ZooKeeper, the replica manager, the controller and the server.

Start-up follows Kafka's order: ZooKeeper session and cluster id, meta.properties checks, log
recovery, the socket server, then the ephemeral registration (clients may be sent here from that
moment), then the run for controller. Control requests that reach the socket server before the
registration wait for it (Kafka serves nothing before then), so one meant for the run before a
kill -9 is refused with STALE_BROKER_EPOCH and one for this run is not. Shutdown is the reverse,
with a controlled shutdown first so leaderships move away before this broker stops answering.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from typing import Any, Coroutine

from pylog.broker.controller_admin import ControllerAdmin, LocalControllerAdmin
from pylog.broker.fetcher import ReplicaFetcherManager
from pylog.broker.group_host import GroupHost
from pylog.broker.handlers import HANDLERS
from pylog.broker.log_cleaner_task import LogCleanerTask
from pylog.broker.metadata_cache import MetadataCache
from pylog.broker.metrics_reporter import MetricsReporter
from pylog.broker.producer_ids import ProducerIdManager
from pylog.broker.replica_manager import ReplicaManager
from pylog.broker.server import RequestContext, SocketServer
from pylog.broker.shutdown_request import ShutdownRequests
from pylog.broker.stats import PartitionStats
from pylog.broker.throttle import ReplicationThrottle
from pylog.broker.topic_admin import TopicAdmin
from pylog.broker.topic_configs import TopicConfigs
from pylog.broker.txn_host import TxnHost
from pylog.broker.zk_store import BrokerZkStore
from pylog.client.aio import AsyncBrokerConnection, BrokerUnavailable, ConnectSecurity
from pylog.client.versions import INTER_BROKER
from pylog.common.clock import now_ms
from pylog.controller.controller import Controller
from pylog.log.config import LogConfig
from pylog.log.manager import LogManager
from pylog.log import meta
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import RequestHeader
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import AclAuthorizer, from_config
from pylog.broker.features import TRANSACTION_VERSION, FinalizedFeatures
from pylog.broker.quotas import ClientQuotas
from pylog.broker.delegation_tokens import DelegationTokenManager
from pylog.security.credentials import CredentialStore
from pylog.security.sasl_client import client_mechanism
from pylog.security.settings import build_listener_security, client_ssl_context
from pylog.security.zk_login import zk_security
from pylog.zk.client import ZkClient
from pylog.zk.codecs import BrokerRegistration, EndPoint
from pylog.zk.core import SessionEvent
from pylog.zk.errors import BrokerIdInUseError
from pylog.zk.uuids import random_uuid

log = logging.getLogger("pylog.broker")


def broker_epoch_stale(request_epoch: int, registered_epoch: int) -> bool:
    """Kafka's isBrokerEpochStale, with -1 (not registered) meaning every known epoch is an older run's.

    -1 in the request is an old controller's "unknown" and passes. A request epoch above ours passes:
    after a session expiry the controller may see the new registration before this broker does."""
    return request_epoch != -1 and (registered_epoch < 0 or request_epoch < registered_epoch)


class Broker:
    """One pylog broker."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.broker_id: int = int(config.get("broker.id"))
        self.rack: str | None = config.get("broker.rack")
        self.listener_security = build_listener_security(config)  # ConfigError when TLS/SASL settings are unusable
        self.zk_security = zk_security(bool(config.get("zookeeper.set.acl")))  # ConfigError: no usable login
        self.inter_broker_listener = config.inter_broker_listener_name
        # Advertised (host, port) per listener name; a port 0 is filled in once its server is bound.
        self.advertised: dict[str, tuple[str, int]] = {
            a.name: (a.host or "127.0.0.1", a.port) for a in config.advertised_listeners}
        self.metadata = MetadataCache(self.inter_broker_listener)
        AsyncBrokerConnection.security = self._inter_broker_security()
        self.cluster_id: str | None = None
        self.broker_epoch = -1
        self._registered = asyncio.Event()  # /brokers/ids/<id> created: control requests can be judged
        self.zk: ZkClient | None = None
        self.logs: LogManager | None = None
        self.stats = PartitionStats()
        # Built in start(), once ZooKeeper is connected and broker.id resolved:
        self.throttle: ReplicationThrottle | None = None
        self.fetchers: ReplicaFetcherManager | None = None
        self.topic_configs: TopicConfigs | None = None
        self.topic_admin: TopicAdmin | None = None
        self.zk_store: BrokerZkStore | None = None
        self.producer_ids: ProducerIdManager | None = None
        self.replicas: ReplicaManager | None = None
        self.groups: GroupHost | None = None  # the group coordinator, once the replica manager exists
        self.transactions: TxnHost | None = None  # the transaction coordinator, likewise
        self.controller: Controller | None = None
        self._controller_admin: LocalControllerAdmin | None = None  # the handlers' view of it
        self.server: SocketServer | None = None  # the first listener's
        self.servers: list[SocketServer] = []
        self.authorizer: AclAuthorizer | None = None  # when authorizer.class.name is set
        self.credentials = CredentialStore.empty()  # SCRAM credentials from /config/users
        self.tokens: DelegationTokenManager | None = None  # delegation tokens (KIP-48), once ZooKeeper is up
        self.features = FinalizedFeatures()  # /feature (KIP-584), followed once ZooKeeper is connected
        self.quotas = ClientQuotas(int(config.get("quota.window.num")),  # from /config/users and /config/clients
                                   int(config.get("quota.window.size.seconds")) * 1000)
        self._tasks: set[asyncio.Task] = set()
        self._stopping = asyncio.Event()
        self.stop_requested = asyncio.Event()  # SIGTERM/SIGINT, or a request through ZooKeeper
        self.shutdown_requests: ShutdownRequests | None = None  # once registered
        self.started = False

    @property
    def advertised_endpoint(self) -> tuple[str, int]:
        """Host and port other brokers reach this one at (the inter-broker listener)."""
        return self.advertised[self.inter_broker_listener]

    def advertised_for(self, listener: str | None) -> tuple[str, int]:
        """Host and port of this broker on a listener (the inter-broker one for in-process calls)."""
        return self.advertised.get(listener or self.inter_broker_listener, self.advertised_endpoint)

    def active_controller(self) -> ControllerAdmin | None:
        """The controller hosted here while it is the active one (admin requests get NOT_CONTROLLER otherwise)."""
        admin = self._controller_admin
        return admin if admin is not None and admin.is_active else None

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        """Run a coroutine in the background, keeping a reference until it ends."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("Background task failed", exc_info=task.exception())

    async def _blocking(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    # -- start-up -------------------------------------------------------------------------

    async def start(self) -> None:
        """Bring the broker up; raises with a clear message when it can't."""
        cfg = self.config
        t0 = time.monotonic()
        self.zk = ZkClient(cfg.get("zookeeper.connect"), int(cfg.get("zookeeper.session.timeout.ms")),
                           int(cfg.zookeeper_connection_timeout_ms), **self.zk_security)
        await self._blocking(self.zk.start)
        await self._blocking(self.zk.create_top_level_paths)
        self.cluster_id = await self._blocking(self.zk.create_or_get_cluster_id, random_uuid())
        log_dirs = list(cfg.log_dirs)
        await self._blocking(self._check_meta_properties, log_dirs)
        await self._blocking(self.credentials.load, self.zk)
        self.tokens = DelegationTokenManager(cfg, self.zk, self.spawn)
        await self.tokens.start()
        await self._blocking(self.quotas.load, self.zk)
        loop = asyncio.get_running_loop()
        self.features.watch(self.zk, loop.call_soon_threadsafe)
        self.authorizer = from_config(cfg, self.zk)  # ValueError for an authorizer pylog does not have
        if self.authorizer is not None:
            await self.authorizer.start()
        self.logs = LogManager(log_dirs, LogConfig.from_props(cfg.topic_defaults()))
        await self._blocking(self.logs.load)
        loop = asyncio.get_running_loop()
        self.logs.failure_listener = lambda root, exc: loop.call_soon_threadsafe(self.log_dir_failed, root, exc)
        self._build_parts()
        self.groups.start()
        self.transactions.start()
        await self._start_servers()
        await self.topic_configs.start()
        self.mark_registered(await self._register())
        self.zk.add_session_listener(self._on_session)
        self.shutdown_requests = ShutdownRequests(self.zk, self.broker_id, lambda: self.broker_epoch, self.spawn,
                                                  self.stop_requested.set)
        await self.shutdown_requests.start()
        self.controller = Controller(self.broker_id, self.zk, cfg, local_delivery=self.serve_local)
        self._controller_admin = LocalControllerAdmin(self.controller)
        await self.controller.start()
        self._start_background_tasks()
        self.started = True
        if self.logs.offline_dirs:  # dirs that could not be loaded: tell the controller, as Kafka does
            self.spawn(self._propagate_log_dir_event())
        log.info("[KafkaServer id=%d] started (%s:%d, cluster %s, %d logs) in %.1fs", self.broker_id,
                 *self.advertised_endpoint, self.cluster_id, len(self.logs.all_logs()), time.monotonic() - t0)

    def _build_parts(self) -> None:
        """The broker's parts, each given what it uses (not the broker), in dependency order."""
        cfg, zk, metadata = self.config, self.zk, self.metadata
        self.topic_configs = TopicConfigs(self.broker_id, cfg, zk, self.credentials, self.spawn,
                                          lambda: self.active_controller() is not None, self.quotas)
        self.throttle = ReplicationThrottle(self.broker_id, self.topic_configs)
        self.fetchers = ReplicaFetcherManager(self.broker_id, cfg, metadata, self.throttle, self.storage_failed)
        self.topic_admin = TopicAdmin(zk, metadata, cfg, self.broker_id, self.rack)
        self.zk_store = BrokerZkStore(zk)
        self.producer_ids = ProducerIdManager(self.broker_id, zk.allocate_producer_id_block, self._blocking)
        self.replicas = ReplicaManager(self.broker_id, cfg, metadata, self.logs, self.zk_store, self.fetchers,
                                       self.topic_configs, self.spawn, self.storage_failed, self.throttle)
        self.topic_configs.add_listener(self.replicas)
        self.topic_configs.add_listener(self.throttle)
        self.groups = GroupHost(cfg, metadata, self.replicas, self.topic_admin, self.spawn)
        self.transactions = TxnHost(cfg, metadata, self.replicas, self.topic_admin, self.spawn, self.broker_id,
                                    self.producer_ids.generate, self.groups.coordinator.on_txn_marker)
        # TV_1 (transaction.version 1): flexible __transaction_state values, as Kafka 3.9 writes them
        self.transactions.coordinator.log_value_version = lambda: min(1, self.features.level(TRANSACTION_VERSION))

    def _inter_broker_security(self) -> ConnectSecurity | None:
        """How this broker's own connections to other brokers authenticate (the inter-broker listener's way)."""
        sec = self.listener_security.get(self.inter_broker_listener)
        if sec is None or sec.protocol == "PLAINTEXT":
            return None
        tls = client_ssl_context(self.config, sec.name) if sec.protocol in ("SSL", "SASL_SSL") else None
        sasl = None
        if sec.uses_sasl:
            mech = str(self.config.get("sasl.mechanism.inter.broker.protocol")).upper()
            user, password = sec.logins[mech].client_login  # checked by build_listener_security
            sasl = lambda: client_mechanism(mech, user, password)  # noqa: E731
        return ConnectSecurity(tls, sasl)

    async def _start_servers(self) -> None:
        """One socket server per listener, each with its TLS/SASL settings."""
        max_request = int(self.config.get("socket.request.max.bytes"))
        for lst in self.config.listeners:
            server = SocketServer(self, self.credentials, lst.host or "0.0.0.0", lst.port, max_request,
                                  self.listener_security[lst.name])
            self.servers.append(server)
            port = await server.start()
            host, adv_port = self.advertised.get(lst.name, (None, None))
            if adv_port == 0:
                self.advertised[lst.name] = (host, port)
        self.server = self.servers[0]

    def _check_meta_properties(self, log_dirs: list[str]) -> None:
        """meta.properties must agree across log dirs, with broker.id and with /cluster/id."""
        for d in log_dirs:
            try:
                os.makedirs(d, exist_ok=True)
            except OSError as exc:  # not creatable: the dir stays offline (reading meta.properties fails below)
                log.error("Log dir %s is unusable: %s", d, exc)
        stored, offline = meta.load_broker_metadata(log_dirs)
        if offline and len(offline) >= len(log_dirs):
            raise RuntimeError(f"Cannot read meta.properties in log dirs {offline}")
        if offline:  # Kafka starts without them: LogManager.load finds them unreadable too and keeps them offline
            log.error("Fail to read meta.properties under log directory %s", ", ".join(offline))
        meta.check_version(stored)
        meta.check_cluster_id(self.cluster_id, stored)
        resolved = meta.resolve_broker_id(self.broker_id, stored)
        if resolved is None:
            raise RuntimeError("broker.id is not set and no id is stored in meta.properties")
        self.broker_id = resolved
        for d in log_dirs:
            if d not in offline and meta.read_meta_properties(d) is None:
                meta.write_meta_properties(d, self.cluster_id, self.broker_id)

    async def _register(self) -> int:
        """Create /brokers/ids/<id>; after a crash, wait out the old session's ephemeral node.

        A broker restarted right after kill -9 finds its previous registration still owned by the
        dead session until ZooKeeper expires it (Kafka fails to start here). We wait up to one and
        a half session timeouts for it to go; a registration that stays is a live broker with the
        same id, and start-up fails with ZooKeeper's owner mismatch message.
        """
        deadline = time.monotonic() + 1.5 * int(self.config.get("zookeeper.session.timeout.ms")) / 1000
        while True:
            try:
                return await self._blocking(self.zk.register_broker, self._registration())
            except BrokerIdInUseError as exc:
                if time.monotonic() >= deadline:
                    raise
                log.info("Broker id %d is still registered by another session (%s); waiting for it to expire",
                         self.broker_id, exc)
                await asyncio.sleep(0.5)

    async def serve_local(self, msg: Any, version: int) -> Any:
        """Serve a request from this broker's own controller without the socket round trip."""
        header = RequestHeader(msg.API_KEY, version, 0, f"controller-{self.broker_id}", 0)
        return await HANDLERS[msg.API_KEY].func(RequestContext(self, header, "local controller"), msg)

    def _registration(self) -> BrokerRegistration:
        protocols = self.config.protocol_map
        endpoints = tuple(EndPoint(name, host, port, protocols[name]) for name, (host, port) in self.advertised.items())
        return BrokerRegistration(self.broker_id, endpoints, rack=self.rack, timestamp_ms=now_ms())

    def mark_registered(self, epoch: int) -> None:
        """This run's /brokers/ids/<id> exists with `epoch`: the control requests held for it are judged now."""
        self.broker_epoch = epoch
        self._registered.set()

    async def is_broker_epoch_stale(self, request_epoch: int) -> bool:
        """KIP-380: a control request addressed to an earlier registration of this broker (-1: unknown).

        Judged once this run has registered, as Kafka handles no request before its start-up ends:
        until then the controller can only be addressing the registration of the run before a
        kill -9, and a request for the new one may arrive before _register() returns."""
        if not self._registered.is_set():
            await self._until_registered_or_stopping()
        if not broker_epoch_stale(request_epoch, self.broker_epoch):
            return False
        log.info("Refusing a control request for broker epoch %d: this broker's registration has epoch %d",
                 request_epoch, self.broker_epoch)
        return True

    async def _until_registered_or_stopping(self) -> None:
        waits = [asyncio.ensure_future(e.wait()) for e in (self._registered, self._stopping)]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    def _on_session(self, event: SessionEvent) -> None:
        # Runs on the ZooKeeper client's listener thread: only re-register there (it may block).
        if event == SessionEvent.NEW_SESSION and not self._stopping.is_set():
            try:
                self.broker_epoch = self.zk.register_broker(self._registration())
                log.info("Re-registered broker %d after ZooKeeper session expiry (epoch %d)",
                         self.broker_id, self.broker_epoch)
            except Exception:
                log.exception("Could not re-register broker %d after session expiry", self.broker_id)

    def _start_background_tasks(self) -> None:
        cfg = self.config
        lag_ms = int(cfg.get("replica.lag.time.max.ms"))
        self.spawn(self._every(max(lag_ms / 2000, 0.05), self.replicas.maintain_isr))
        self.spawn(self._every(int(cfg.get("replica.high.watermark.checkpoint.interval.ms")) / 1000,
                               self._checkpoint_high_watermarks))
        self.spawn(self._every(int(cfg.get("log.flush.offset.checkpoint.interval.ms")) / 1000,
                               self._checkpoint_recovery_points))
        self.spawn(self._every(int(cfg.get("log.retention.check.interval.ms")) / 1000, self._retention))
        self.spawn(self._every(1.0, self._flush_due))
        if cfg.get("log.cleaner.enable"):
            cleaner = LogCleanerTask(self.logs, cfg, self._blocking, now_ms)
            self.spawn(self._every(max(int(cfg.get("log.cleaner.backoff.ms")), 50) / 1000, cleaner.run_once))
        self.spawn(self._every(int(cfg.get("offsets.retention.check.interval.ms")) / 1000, self.groups.expire_offsets))
        self.spawn(self._every(int(cfg.get("transaction.abort.timed.out.transaction.cleanup.interval.ms")) / 1000,
                               self.transactions.abort_timed_out))
        self.spawn(self._every(int(cfg.get("transaction.remove.expired.transaction.cleanup.interval.ms")) / 1000,
                               self.transactions.expire_transactional_ids))
        self.spawn(self._every(int(cfg.get("producer.id.expiration.check.interval.ms")) / 1000,
                               self._expire_producer_ids))
        self.spawn(self._every(0.5, self.zk_store.flush_isr_changes))
        interval = int(cfg.get("metrics.sample.interval.ms"))
        if interval > 0:
            self.spawn(MetricsReporter(self.broker_id, self.metadata, self.replicas, self.stats, self.topic_admin,
                                       interval).run())

    async def _every(self, seconds: float, fn: Any) -> None:
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(self._stopping.wait(), seconds)
                return
            except asyncio.TimeoutError:
                pass
            try:
                result = fn()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                log.exception("Periodic task %s failed", getattr(fn, "__name__", fn))

    async def _checkpoint_high_watermarks(self) -> None:
        await self._blocking(self.logs.checkpoint_high_watermarks)

    async def _checkpoint_recovery_points(self) -> None:
        await self._blocking(self.logs.checkpoint_recovery_points)
        await self._blocking(self.logs.checkpoint_log_start_offsets)

    def _retention(self) -> None:
        deleted = self.logs.run_retention(now_ms())
        if deleted:
            log.info("Retention deleted %d segments", deleted)

    def _expire_producer_ids(self) -> None:
        """Forget producers idle for producer.id.expiration.ms (by their batches' timestamps, as Kafka)."""
        expiration, t = int(self.config.get("producer.id.expiration.ms")), now_ms()
        removed = sum(plog.producer_state.remove_expired(t, expiration, plog.open_txns.first_offsets) for plog in self.logs.all_logs())
        if removed:
            log.info("Expired %d producer ids idle for %d ms", removed, expiration)

    async def _flush_due(self) -> None:
        await self._blocking(self.logs.flush_due, now_ms())

    def on_metadata_updated(self) -> None:
        """Hook after UpdateMetadata: the controller may have new partitions for waiters."""
        if self.topic_admin is not None:
            self.topic_admin.metadata_changed()

    # -- log dir failure (KIP-112) --------------------------------------------------------

    def storage_failed(self, path: str, exc: BaseException) -> None:
        """An OSError on a file under a log dir: that dir goes offline (from the event loop only)."""
        if self.logs is not None:
            self.logs.report_failure(self.logs.root_of(path), exc)

    def log_dir_failed(self, root: str, exc: BaseException) -> None:
        """Stop serving the replicas of a failed log dir and tell the controller (Kafka's handleLogDirFailure)."""
        if self.logs is None or self.replicas is None or root in self.logs.offline_dirs or self._stopping.is_set():
            return
        log.error("Error while accessing log dir %s: %s", root, exc)
        tps = self.logs.fail_dir(root)
        self.replicas.take_offline(tps)
        if not self.logs.online_dirs:
            log.critical("Shutdown broker because all log dirs in %s have failed", ", ".join(self.logs.log_dirs))
            logging.shutdown()
            os._exit(1)  # Kafka halts: nothing is left to serve, and a clean shutdown would write there
        log.warning("Broker %d stopped fetcher for partitions %s because they are in the failed log directory %s.",
                    self.broker_id, ",".join(f"{t}-{p}" for t, p in sorted(tps)), root)
        log.warning("Stopped serving replicas in dir %s", root)
        self.spawn(self._propagate_log_dir_event())

    async def _propagate_log_dir_event(self) -> None:
        """/log_dir_event_notification/log_dir_event_<seq>: the controller asks us which replicas are offline."""
        for attempt in range(60):
            try:
                path = await self._blocking(self.zk.propagate_log_dir_event, self.broker_id)
                log.info("Wrote %s for broker %d's failed log dir", path, self.broker_id)
                return
            except Exception as exc:  # ZooKeeper unreachable: the controller must hear of it eventually
                log.warning("Could not write the log dir event notification (attempt %d): %s", attempt + 1, exc)
                await asyncio.sleep(1)

    # -- shutdown -------------------------------------------------------------------------

    async def controlled_shutdown(self) -> bool:
        """Ask the controller to move leaderships away (Kafka's controlled shutdown protocol)."""
        cfg = self.config
        retries = int(cfg.get("controlled.shutdown.max.retries"))
        backoff = int(cfg.get("controlled.shutdown.retry.backoff.ms")) / 1000
        v = INTER_BROKER[ApiKey.ControlledShutdown]
        cls = request_class(ApiKey.ControlledShutdown)[v]
        for attempt in range(1, retries + 1):
            cid = self.metadata.controller_id if self.controller is None or not self.controller.is_active \
                else self.broker_id
            ep = (self.advertised_endpoint if cid == self.broker_id
                  else (self.metadata.brokers[cid].host, self.metadata.brokers[cid].port)
                  if cid in self.metadata.brokers else None)
            if ep is None:
                log.warning("Controlled shutdown attempt %d: no controller known", attempt)
            else:
                conn = AsyncBrokerConnection(ep[0], ep[1], f"broker-{self.broker_id}-shutdown")
                try:
                    resp = await conn.request(cls(broker_id=self.broker_id, broker_epoch=self.broker_epoch), v,
                                              timeout=int(cfg.get("controller.socket.timeout.ms")) / 1000)
                    if resp.error_code == 0 and not resp.remaining_partitions:
                        log.info("Controlled shutdown of broker %d succeeded", self.broker_id)
                        return True
                    log.info("Controlled shutdown attempt %d: error %s, %d partitions still led here",
                             attempt, ErrorCode(resp.error_code).name, len(resp.remaining_partitions))
                except (BrokerUnavailable, OSError, asyncio.TimeoutError) as exc:
                    log.warning("Controlled shutdown attempt %d failed: %s", attempt, exc)
                finally:
                    await conn.close()
            if attempt < retries:
                await asyncio.sleep(backoff)
        log.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")
        return False

    async def stop(self) -> None:
        """Shut down: controlled shutdown, then server, replication, controller, logs, ZooKeeper."""
        if self._stopping.is_set():
            return
        log.info("[KafkaServer id=%d] shutting down", self.broker_id)
        if self.started and self.config.get("controlled.shutdown.enable") and self.replicas is not None:
            try:
                await self.controlled_shutdown()
            except Exception:
                log.exception("Controlled shutdown failed")
        self._stopping.set()
        if self.shutdown_requests is not None:
            self.shutdown_requests.cancel()
        for server in self.servers:
            await server.stop()
        if self.fetchers is not None:
            await self.fetchers.shutdown()
        if self.transactions is not None:
            await self.transactions.close()
        if self.replicas is not None:
            await self.replicas.shutdown()
        if self.controller is not None:
            await self.controller.stop()
        for t in list(self._tasks):
            t.cancel()
        if self.logs is not None:
            if self.replicas is not None:
                self.logs.checkpoint_high_watermarks()
            await self._blocking(self.logs.shutdown)
        if self.zk is not None:
            await self._blocking(self.zk.close)
        log.info("[KafkaServer id=%d] shut down completed", self.broker_id)

    async def run_until_signalled(self) -> None:
        """Start, then serve until SIGTERM/SIGINT or a shutdown request; exit after a clean shutdown."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop_requested.set)
        try:
            await self.start()
            await self.stop_requested.wait()
        finally:
            await self.stop()
