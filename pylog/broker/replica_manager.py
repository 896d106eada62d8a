"""The replicas this broker hosts: role changes from the controller, appends, reads, the ISR.

Everything here runs on the broker's event loop. ZooKeeper writes (ISR changes) go through the
executor so a slow ZooKeeper never stalls produce and fetch traffic.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Iterable, Sequence

from pylog.broker.delayed_produce import Append, AppendOutcome, DelayedProduce
from pylog.broker.log_dir_mover import LOG_DIR_RATE, LogDirMover
from pylog.broker.partition import Partition
from pylog.broker.replica_prepare import ReplicaPreparer
from pylog.broker.topic_configs import ConfigListener, TopicConfigs
from pylog.common.clock import now_ms
from pylog.common.config import BrokerConfig
from pylog.common.errors import KafkaError
from pylog.log.errors import KafkaStorageError, RecordValidationError
from pylog.metrics.recorders import BROKER as BROKER_METRICS
from pylog.protocol.errors import ErrorCode
from pylog.protocol import records

if TYPE_CHECKING:
    from pylog.broker.fetcher import ReplicaFetcherManager
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.throttle import ReplicationThrottle
    from pylog.broker.zk_store import BrokerZkStore
    from pylog.log.manager import LogManager

log = logging.getLogger("pylog.replica")
state_log = logging.getLogger("pylog.state.change")


class ReplicaManager(ConfigListener):
    """Owns the Partition objects and everything that changes them."""

    def __init__(self, broker_id: int, config: BrokerConfig, metadata: MetadataCache, log_manager: LogManager,
                 zk_store: BrokerZkStore, fetchers: ReplicaFetcherManager, topic_configs: TopicConfigs,
                 spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task],
                 storage_failed: Callable[[str, BaseException], None],
                 throttle: ReplicationThrottle | None = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.metadata = metadata  # whether a partition not hosted here exists (NOT_LEADER vs UNKNOWN)
        self.logs = log_manager
        self.zk_store = zk_store
        self.fetchers = fetchers
        self.topic_configs = topic_configs
        self.spawn = spawn
        self.storage_failed = storage_failed  # an OSError on a log's file: that log dir goes offline (KIP-112)
        self.partitions: dict[tuple[str, int], Partition] = {}
        # Replicas whose log dir failed (Kafka's HostedPartition.Offline): KAFKA_STORAGE_ERROR until a restart.
        self.offline: set[tuple[str, int]] = set()
        self.controller_epoch = -1
        self.on_leadership_change: list[Callable[[Partition], None]] = []
        self.preparer = ReplicaPreparer(self)
        self.throttle = throttle  # KIP-73, the leader side: follower fetches of throttled replicas
        self.log_dir_mover = LogDirMover(log_manager, self, spawn,
                                         lambda: int(topic_configs.broker_value(LOG_DIR_RATE)))

    def get(self, topic: str, partition: int) -> Partition | None:
        """The local replica of a partition, if hosted here."""
        return self.partitions.get((topic, partition))

    def leader_partition(self, topic: str, partition: int, current_leader_epoch: int = -1,
                         require_leader: bool = True) -> tuple[Partition | None, ErrorCode]:
        """The partition if this broker leads it (at `current_leader_epoch`, when the client names one),
        else the error a client should see. `require_leader=False` also takes a follower's replica (Kafka's
        fetchOnlyLeader false: a consumer's Fetch v11+, KIP-392)."""
        p = self.partitions.get((topic, partition))
        if p is None and (topic, partition) in self.offline:
            return None, ErrorCode.KAFKA_STORAGE_ERROR
        if p is None:
            known = self.metadata.partition(topic, partition)
            return None, ErrorCode.NOT_LEADER_OR_FOLLOWER if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if require_leader and not p.is_leader:
            return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
        err = p.check_leader_epoch(current_leader_epoch)
        return (p, err) if err == ErrorCode.NONE else (None, err)

    # -- LeaderAndIsr ---------------------------------------------------------------------

    async def become_leader_or_follower(self, req) -> tuple[int, list[tuple[str, int, int]]]:
        """Apply a LeaderAndIsr request; returns (error, [(topic, partition, error)])."""
        if req.controller_epoch < self.controller_epoch:
            state_log.warning("Ignoring LeaderAndIsr from controller %d with epoch %d: current epoch is %d",
                              req.controller_id, req.controller_epoch, self.controller_epoch)
            return ErrorCode.STALE_CONTROLLER_EPOCH, []
        self.controller_epoch = req.controller_epoch
        for ll in req.live_leaders:
            self.fetchers.leader_endpoints[ll.broker_id] = (ll.host_name, ll.port)
        results: list[tuple[str, int, int]] = []
        stale: list[str] = []
        await self.preparer.prepare(req, _topic_id_str)
        t = now_ms()
        for ts in req.topic_states:
            for ps in ts.partition_states:
                err = await self._apply_partition_state(ts.topic_name, ts.topic_id, ps, t)
                results.append((ts.topic_name, ps.partition_index, int(err)))
                if err == ErrorCode.STALE_CONTROLLER_EPOCH:
                    stale.append(f"{ts.topic_name}-{ps.partition_index}")
        if stale:
            # One line, not one per partition: a new controller resends every partition's state,
            # and thousands of lines cost the event loop more than applying the request.
            state_log.info("Ignoring LeaderAndIsr from controller %d (epoch %d) for %d partitions whose leader "
                           "epoch / partition epoch is not newer than ours: %s%s", req.controller_id,
                           req.controller_epoch, len(stale), ", ".join(stale[:20]), " ..." if len(stale) > 20 else "")
        return ErrorCode.NONE, results

    async def _apply_partition_state(self, topic: str, topic_id, ps, t: int) -> ErrorCode:
        key = (topic, ps.partition_index)
        if self.broker_id not in ps.replicas:
            state_log.warning("Ignoring LeaderAndIsr for %s-%d: broker %d is not in replicas %s",
                              topic, ps.partition_index, self.broker_id, list(ps.replicas))
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if key in self.offline:
            return ErrorCode.KAFKA_STORAGE_ERROR  # how the controller learns this replica is offline
        p = self.partitions.get(key)
        if p is not None and not (ps.leader_epoch > p.leader_epoch or
                                  (ps.leader_epoch == p.leader_epoch and ps.partition_epoch > p.partition_epoch)):
            return ErrorCode.STALE_CONTROLLER_EPOCH  # logged once per request by the caller
        if p is None and self.logs.offline_dirs and not ps.is_new and self.logs.get(topic, ps.partition_index) is None:
            # Its log may sit in an offline dir: an empty one elsewhere would pass for it (Kafka's getOrCreateLog).
            state_log.error("Can not create log for %s-%d because log directories %s are offline", topic,
                            ps.partition_index, ",".join(sorted(self.logs.offline_dirs)))
            return ErrorCode.KAFKA_STORAGE_ERROR
        if p is None:
            cfg = await self.topic_configs.log_config(topic)
            try:
                plog = self.logs.get_or_create(topic, ps.partition_index, cfg, topic_id=_topic_id_str(topic_id))
            except KafkaStorageError as exc:
                state_log.error("Cannot create %s-%d: %s", topic, ps.partition_index, exc)
                return ErrorCode.KAFKA_STORAGE_ERROR
            except OSError as exc:
                self.logs.report_failure(self.logs.root_of(exc.filename or "") if exc.filename else None, exc)
                return ErrorCode.KAFKA_STORAGE_ERROR
            plog.update_config(cfg)  # a log loaded at start-up got the broker defaults
            p = Partition(topic, ps.partition_index, self.broker_id, plog)
            self.partitions[key] = p
            if self.logs.future_log(topic, ps.partition_index) is not None:
                self.log_dir_mover.resume(topic, ps.partition_index)
        p.topic_id = topic_id
        was_leader = p.is_leader
        p.apply_state(ps.leader, ps.leader_epoch, list(ps.isr), list(ps.replicas), ps.partition_epoch,
                      ps.controller_epoch, list(ps.adding_replicas or []), list(ps.removing_replicas or []))
        if ps.leader == self.broker_id:
            self.fetchers.remove_partition(topic, ps.partition_index)
            p.make_leader(t)
            state_log.info("Broker %d is leader of %s at epoch %d (ISR %s, LEO %d, HW %d)", self.broker_id, p,
                           p.leader_epoch, p.isr, p.log.log_end_offset, p.high_watermark)
        else:
            p.make_follower()
            self.fetchers.remove_partition(topic, ps.partition_index)
            if ps.leader >= 0:
                self.fetchers.add_partition(p, ps.leader)
            state_log.info("Broker %d follows %d for %s at epoch %d", self.broker_id, ps.leader, p, p.leader_epoch)
        if was_leader != p.is_leader:
            for cb in self.on_leadership_change:
                cb(p)
        return ErrorCode.NONE

    # -- config changes (TopicConfigs) -------------------------------------------------------

    def on_topic_config(self, topic: str) -> None:
        """Apply a topic's new config to its logs here; acks=all waiters recheck min.insync.replicas."""
        cfg = self.topic_configs.log_config_now(topic)
        for p in self.partitions.values():
            if p.topic == topic:
                p.log.update_config(cfg)
                p.complete_produce_waiters()

    def on_broker_config(self) -> None:
        """The broker's defaults changed: re-apply every hosted topic's config."""
        for topic in {p.topic for p in self.partitions.values()}:
            self.on_topic_config(topic)

    # -- StopReplica ------------------------------------------------------------------------

    async def stop_replicas(self, req) -> tuple[int, list[tuple[str, int, int]]]:
        """Apply a StopReplica request (v3 shape)."""
        if req.controller_epoch < self.controller_epoch:
            return ErrorCode.STALE_CONTROLLER_EPOCH, []
        self.controller_epoch = req.controller_epoch
        results = []
        for ts in req.topic_states:
            for ps in ts.partition_states:
                key = (ts.topic_name, ps.partition_index)
                p = self.partitions.get(key)
                # Epoch -2 means "being deleted"; -1 "unknown": both always apply.
                if p is not None and ps.leader_epoch >= 0 and ps.leader_epoch < p.leader_epoch:
                    results.append((*key, int(ErrorCode.FENCED_LEADER_EPOCH)))
                    continue
                self.fetchers.remove_partition(*key)
                if key in self.offline and ps.delete_partition:
                    self.offline.discard(key)  # its files stay in the failed dir; nothing is served from there
                if p is not None:
                    p.fail_produce_waiters(ErrorCode.NOT_LEADER_OR_FOLLOWER)
                    p.leader = -1
                    p.notify_fetchers()
                    del self.partitions[key]
                if ps.delete_partition:
                    self.logs.delete(*key)
                    state_log.info("Broker %d deleted replica %s-%d", self.broker_id, *key)
                else:
                    state_log.info("Broker %d stopped replica %s-%d", self.broker_id, *key)
                results.append((*key, 0))
        return ErrorCode.NONE, results

    # -- produce --------------------------------------------------------------------------

    def append_records(self, appends: Iterable[Append], acks: int, timeout_ms: int,
                       from_coordinator: bool = False) -> DelayedProduce:
        """Append each partition's records as leader (see `append`); the acks=all ones wait in the
        DelayedProduce returned, which answers them within `timeout_ms` of now."""
        delayed = DelayedProduce(timeout_ms)
        for a in appends:
            delayed.add(a.key, a.partition, self.append(a.partition, a.records, acks, from_coordinator, a.headers), acks)
        return delayed

    def append(self, p: Partition, buf: bytearray, acks: int, from_coordinator: bool = False,
               headers: list[records.BatchHeader] | None = None) -> AppendOutcome:
        """Validate and append one partition's records as leader; only a coordinator may write markers, and
        its own records (built with a key each) skip the compacted-topic key check. `headers`: a coordinator
        built `buf` itself and passes the headers it built it with, so it is not parsed and checksummed again.

        A producer's retry of a batch already in the log gets the original batch's offsets and is
        not appended again (the outcome says `duplicate`, so it is not counted in the traffic stats).
        """
        if headers is None or not from_coordinator:
            try:
                headers = records.validate_batches(buf)
            except records.RecordError as exc:
                log.info("Rejecting produce to %s: %s", p, exc)
                return AppendOutcome(ErrorCode(exc.error_code))
        if not headers:
            return AppendOutcome(ErrorCode.CORRUPT_MESSAGE)
        if not from_coordinator and any(h.is_control for h in headers):
            return AppendOutcome(ErrorCode.INVALID_RECORD,
                                 message="Client produce requests should not have control batches")
        max_bytes = p.log.config.max_message_bytes
        if any(h.size > max_bytes for h in headers):
            return AppendOutcome(ErrorCode.MESSAGE_TOO_LARGE)
        if acks == -1 and p.below_min_isr():
            return AppendOutcome(ErrorCode.NOT_ENOUGH_REPLICAS)
        try:
            info = p.log.append_as_leader(buf, headers, p.leader_epoch, now_ms(), keys_known=from_coordinator,
                                          from_coordinator=from_coordinator)
        except OSError as exc:  # the log dir failed: it goes offline (KIP-112) and the producer retries elsewhere
            log.error("Error appending to %s: %s", p, exc)
            self.storage_failed(p.log.dir, exc)
            return AppendOutcome(ErrorCode.KAFKA_STORAGE_ERROR)
        except RecordValidationError as exc:  # Kafka answers these with per-record errors and its message
            log.info("Rejecting produce to %s: %s", p, exc)
            return AppendOutcome(ErrorCode(exc.error_code), record_errors=exc.record_errors, message=str(exc))
        except KafkaError as exc:  # segment.bytes, timestamps, storage: a per-partition error, as in Kafka
            log.info("Rejecting produce to %s: %s", p, exc)
            return AppendOutcome(ErrorCode(exc.error_code))
        if info.duplicate:  # an idempotent producer's retry: the original offsets, nothing new to replicate
            log.debug("Duplicate batch to %s answered with its original offsets %d-%d", p, info.first_offset,
                      info.last_offset)
            return AppendOutcome(ErrorCode.NONE, info.first_offset, info.last_offset, duplicate=True)
        if not p.maybe_increment_high_watermark():
            p.notify_fetchers()  # followers long-poll on the LEO, not the HW
        return AppendOutcome(ErrorCode.NONE, info.first_offset, info.last_offset)

    def take_offline(self, tps: Sequence[tuple[str, int]]) -> None:
        """Stop serving replicas whose log dir failed: no fetching, waiters fail, KAFKA_STORAGE_ERROR from now on."""
        for key in tps:
            self.offline.add(key)
            self.fetchers.remove_partition(*key)
            p = self.partitions.pop(key, None)
            if p is None:
                continue
            was_leader = p.is_leader
            p.fail_produce_waiters(ErrorCode.KAFKA_STORAGE_ERROR)
            p.leader = -1
            p.notify_fetchers()
            if was_leader:
                for cb in self.on_leadership_change:
                    cb(p)
        if tps:
            state_log.warning("Partitions %s are offline due to failure on their log directory",
                              ",".join(f"{t}-{i}" for t, i in sorted(tps)))

    # -- ISR maintenance ------------------------------------------------------------------

    async def maintain_isr(self) -> None:
        """Shrink ISRs of lagging followers and expand them with caught-up ones (leader side)."""
        lag = int(self.config.get("replica.lag.time.max.ms"))
        t = now_ms()
        for p in list(self.partitions.values()):
            await self._change_isr(p, t, lag, shrink=True)

    def on_follower_fetch(self, p: Partition, replica_id: int, fetch_offset: int, now: int,
                          log_start_offset: int = -1) -> None:
        """A follower fetched from `fetch_offset` (its log end offset): track its position (which may
        advance the high watermark) and its log start offset (DeleteRecords' low watermark), and, once
        it caught up, add it to the ISR in the background."""
        p.update_follower(replica_id, fetch_offset, now, log_start_offset)
        lag = int(self.config.get("replica.lag.time.max.ms"))
        if p.isr_change(now, lag, shrink=False) is not None:
            self.spawn(self._change_isr(p, now, lag, shrink=False))

    def follower_read_limit(self, p: Partition, replica_id: int, limit: int) -> int:
        """Bytes a follower's fetch may read from `p` now: none while `p` is a throttled replica, the follower
        is out of sync and the leader's replication quota is used up (KIP-73), else `limit`."""
        return limit if self.throttle is None else self.throttle.leader_read_limit(p, replica_id, limit)

    def follower_fetch_served(self, topics: Iterable[tuple[str, list]]) -> None:
        """Count the bytes of throttled replicas just served to a follower against the leader's quota."""
        if self.throttle is not None:
            self.throttle.after_leader_fetch(topics)

    async def _change_isr(self, p: Partition, now: int, max_lag_ms: int, shrink: bool) -> None:
        change = p.isr_change(now, max_lag_ms, shrink)
        if change is None:
            return
        if change.lagging:
            log.info("Shrinking ISR of %s from %s to %s (lagging: %s)", p, p.isr, list(change.isr),
                     list(change.lagging))
        else:
            log.info("Expanding ISR of %s from %s to %s", p, p.isr, list(change.isr))
        await self.update_isr(p, list(change.isr))

    async def update_isr(self, p: Partition, new_isr: list[int]) -> bool:
        """Write a new ISR conditionally on the partition epoch; adopt it only if ZooKeeper agreed."""
        p.isr_update_pending = True
        epoch = p.leader_epoch
        try:
            new_version = await self.zk_store.write_isr(p.topic, p.index, p.leader, p.leader_epoch, new_isr,
                                                        p.controller_epoch, p.partition_epoch)
        except Exception as exc:  # ZooKeeper unreachable: try again on the next round
            log.warning("Could not update ISR of %s: %s", p, exc)
            if p.leader_epoch == epoch:
                p.isr_update_pending = False
            return False
        if p.leader_epoch != epoch:
            return False  # a newer LeaderAndIsr arrived meanwhile and reset the state
        p.isr_update_pending = False
        if new_version is None:
            # Someone (the controller) changed the state under us: our view is stale. Stop acting
            # on it until the controller sends the new state.
            log.warning("Cached zkVersion %d of %s is stale; not changing the ISR until the controller's update",
                        p.partition_epoch, p)
            p.fenced = True
            return False
        BROKER_METRICS.isr_changed(p.isr, new_isr)
        p.isr = list(new_isr)
        p.partition_epoch = new_version
        if not p.maybe_increment_high_watermark():
            p.complete_produce_waiters()
        return True

    def high_watermarks(self) -> dict[tuple[str, int], int]:
        """Current high watermarks for the replication-offset-checkpoint."""
        return {k: p.high_watermark for k, p in self.partitions.items()}

    async def shutdown(self) -> None:
        """Stop fetching and fail waiters."""
        self.preparer.close()
        for p in self.partitions.values():
            p.fail_produce_waiters(ErrorCode.NOT_LEADER_OR_FOLLOWER)
            p.notify_fetchers()


def _topic_id_str(topic_id) -> str | None:
    if topic_id is None or getattr(topic_id, "int", 0) == 0:
        return None
    import base64
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
