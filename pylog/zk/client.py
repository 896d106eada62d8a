"""ZkClient: Kafka's KafkaZkClient operations over kazoo (brokers, controller election, fenced writes,
topics and partition state, watches). Configs, admin-request znodes and notifications are in
client_admin.py (mixed in here); connection handling, bulk reads and multi are in core.py.

Controller fencing: every write the controller makes is sent as a ZooKeeper multi whose first op
checks /controller_epoch's zkVersion (Kafka's controllerEpochZkVersion check). If another controller
was elected since, the check fails and ControllerMovedError is raised; nothing is written.
Pass controller_epoch_zk_version=None (or -1, Kafka's MatchAnyVersion) for unfenced writes.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

from kazoo.protocol.states import ZnodeStat

from pylog.zk import errors, paths
from pylog.zk.client_admin import ZkAdminOps
from pylog.zk.codecs import (INITIAL_CONTROLLER_EPOCH, BrokerRegistration, ClusterId, ControllerInfo,
                             PartitionState, ProducerIdBlock, TopicAssignment, TopicPartition,
                             decode_controller_epoch, encode_controller_epoch)
from pylog.zk.core import WatchHandle, ZkConnection
from pylog.zk.ops import ANY_VERSION, CheckOp, CreateOp, DeleteOp, Op, SetDataOp

log = logging.getLogger(__name__)


class ControllerEpoch(NamedTuple):
    """The controller epoch and the zkVersion of /controller_epoch (what fenced writes check)."""

    epoch: int
    zk_version: int


class RegisteredBroker(NamedTuple):
    """A live broker: its registration and its epoch (czxid of /brokers/ids/<id>)."""

    registration: BrokerRegistration
    epoch: int


@dataclass
class UpdatePartitionStatesResult:
    """Outcome of update_partition_states, per partition (Kafka's UpdateLeaderAndIsrResult)."""

    successful: dict[TopicPartition, PartitionState] = field(default_factory=dict)  # with new partition_epoch
    bad_version: list[TopicPartition] = field(default_factory=list)  # stale partition_epoch: re-read, retry
    failed: dict[TopicPartition, BaseException] = field(default_factory=dict)  # e.g. NoNodeError


def _fencing(version: int | None) -> bool:
    """True if writes must check /controller_epoch (None and -1 mean no check, as in Kafka)."""
    if version is not None and version < ANY_VERSION:
        raise ValueError(f"Invalid controller epoch zkVersion {version}")
    return version is not None and version != ANY_VERSION


class ZkClient(ZkAdminOps, ZkConnection):
    """Kafka's ZooKeeper operations for brokers, the controller and admin tools."""

    # ------------------------------------------------------------------ fencing

    def fenced_multi_many(self, batches: Mapping[Any, Sequence[Op]],
                          controller_epoch_zk_version: int | None) -> dict[Any, list[Any] | BaseException]:
        """multi_many with the controller epoch check prepended to each batch (results exclude it).

        Raises ControllerMovedError if any batch failed on the check; other per-batch errors are returned
        with .op_index pointing into the caller's ops.
        """
        fence = _fencing(controller_epoch_zk_version)
        prefix: list[Op] = [CheckOp(paths.controller_epoch(), controller_epoch_zk_version)] if fence else []
        raw = self.multi_many({key: prefix + list(ops) for key, ops in batches.items()})
        out: dict[Any, list[Any] | BaseException] = {}
        for key, result in raw.items():
            if isinstance(result, BaseException):
                index = getattr(result, "op_index", None)
                if fence and index == 0:
                    if isinstance(result, errors.BadVersionError):
                        raise errors.ControllerMovedError(
                            f"Controller epoch zkVersion check fails. Expected zkVersion = "
                            f"{controller_epoch_zk_version}")
                    raise result
                if fence and index is not None:
                    result.op_index = index - 1  # type: ignore[attr-defined]
                out[key] = result
            else:
                out[key] = result[len(prefix):]
        return out

    def fenced_multi(self, ops: Sequence[Op], controller_epoch_zk_version: int | None) -> list[Any]:
        """Run ops atomically, only if /controller_epoch still has the given zkVersion."""
        result = self.fenced_multi_many({0: ops}, controller_epoch_zk_version)[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def delete_recursive(self, path: str, controller_epoch_zk_version: int | None = None) -> bool:
        """Delete a znode and everything below it (each delete fenced if a version is given); False if absent."""
        return self._delete_tree(path, lambda batches: self.fenced_multi_many(batches, controller_epoch_zk_version))

    # ------------------------------------------------------------------ cluster

    def create_top_level_paths(self) -> None:
        """Create Kafka's persistent top-level znodes if missing (KafkaZkClient.createTopLevelPaths)."""
        for path in paths.PERSISTENT_PATHS:
            self.ensure_path(path)

    def get_cluster_id(self) -> str | None:
        """The cluster id, or None before the first broker created it."""
        got = self.get_or_none(paths.cluster_id())
        return None if got is None else ClusterId.decode(got[0]).id

    def create_or_get_cluster_id(self, proposed: str) -> str:
        """Create /cluster/id with proposed unless it exists; return the cluster's id either way."""
        try:
            self.create(paths.cluster_id(), ClusterId(proposed).encode(), make_parents=True)
            return proposed
        except errors.NodeExistsError:
            existing = self.get_cluster_id()
            if existing is None:
                raise errors.ZkError("Failed to get cluster id from Zookeeper. This can happen if /cluster/id "
                                     "is deleted from Zookeeper.") from None
            return existing

    def allocate_producer_id_block(self, broker_id: int) -> ProducerIdBlock:
        """Reserve the next block of producer ids for `broker_id` (Kafka's ZkProducerIdManager).

        The write is conditional on the zkVersion read, so two brokers racing for a block never both
        get it: the loser reads the winner's block and takes the one after it.
        """
        path = paths.latest_producer_id_block()
        while True:
            got = self.get_or_none(path)
            if got is None:
                self.ensure_path(path)
                continue
            data, stat = got
            previous = ProducerIdBlock.decode(data, path) if data and data.strip() not in (b"null",) else None
            block = ProducerIdBlock.after(previous, broker_id)
            try:
                self.set(path, block.encode(), stat.version)
            except errors.BadVersionError:
                log.info("Producer id block at %s changed under us (zkVersion %d); retrying", path, stat.version)
                continue
            log.info("Acquired new producerId block %s by writing to Zk with path version %d", block,
                     stat.version + 1)
            return block

    # ------------------------------------------------------------------ brokers

    def register_broker(self, registration: BrokerRegistration) -> int:
        """Create the ephemeral /brokers/ids/<id>; return the broker epoch (its czxid).

        A node owned by our own session (a create that succeeded before a connection loss) counts as
        success; one owned by another session raises BrokerIdInUseError with Kafka's message.
        """
        path, data = registration.path, registration.encode()
        for _ in range(10):
            try:
                _, stat = self.create(path, data, ephemeral=True)
                log.info("Registered broker %d at path %s with addresses: %s, czxid (broker epoch): %d",
                         registration.broker_id, path,
                         ",".join(e.connection_string() for e in registration.endpoints), stat.czxid)
                return stat.czxid
            except errors.NodeExistsError:
                got = self.get_or_none(path)
                if got is None:
                    continue  # the old node went away while we looked: try again
                owner, ours = got[1].ephemeralOwner, self.session_credentials().session_id
                if owner != ours:
                    raise errors.BrokerIdInUseError(
                        f"Error while creating ephemeral at {path}, node already exists and owner '{owner}' "
                        f"does not match current session '{ours}'") from None
                return got[1].czxid
        raise errors.ZkError(f"Could not create ephemeral {path}: it kept appearing and disappearing")

    def get_all_broker_ids(self) -> list[int]:
        """Ids of live brokers, sorted."""
        try:
            return sorted(int(c) for c in self.get_children(paths.broker_ids()) if c.isdigit())
        except errors.NoNodeError:
            return []

    def get_broker(self, broker_id: int) -> RegisteredBroker | None:
        """One live broker, or None."""
        return self.get_brokers([broker_id]).get(broker_id)

    def get_brokers(self, broker_ids: Iterable[int] | None = None) -> dict[int, RegisteredBroker]:
        """Live brokers (all when broker_ids is None), read in one pipelined batch, sorted by id."""
        ids = self.get_all_broker_ids() if broker_ids is None else sorted(set(broker_ids))
        raw = self.get_many(paths.broker_id(b) for b in ids)
        out = {}
        for b in ids:
            got = raw[paths.broker_id(b)]
            if got is not None:
                out[b] = RegisteredBroker(BrokerRegistration.decode(b, got[0]), got[1].czxid)
        return out

    # ------------------------------------------------------------------ controller

    def get_controller(self) -> ControllerInfo | None:
        """Contents of /controller, or None when there is no controller."""
        got = self.get_or_none(paths.controller())
        return None if got is None else ControllerInfo.decode(got[0])

    def get_controller_id(self) -> int | None:
        """The active controller's broker id, or None."""
        info = self.get_controller()
        return None if info is None else info.broker_id

    def get_controller_epoch(self) -> ControllerEpoch | None:
        """(epoch, zkVersion) of /controller_epoch, or None before the first election."""
        got = self.get_or_none(paths.controller_epoch())
        return None if got is None else ControllerEpoch(decode_controller_epoch(got[0]), got[1].version)

    def try_elect_controller(self, broker_id: int) -> ControllerEpoch | None:
        """Become controller if nobody is: returns the new (epoch, zkVersion), or None if someone else is.

        One multi creates the ephemeral /controller and sets /controller_epoch to epoch+1 conditional on
        the zkVersion we read (Kafka's registerControllerAndIncrementControllerEpoch), so two brokers can
        never both win, and each election raises the epoch by exactly one.
        """
        try:
            self.create(paths.controller_epoch(), encode_controller_epoch(INITIAL_CONTROLLER_EPOCH))
        except errors.NodeExistsError:
            pass
        for _ in range(10):
            current = self.get_controller_epoch()
            if current is None:
                continue
            ops: list[Op] = [
                CreateOp(paths.controller(), ControllerInfo(broker_id).encode(), ephemeral=True),
                SetDataOp(paths.controller_epoch(), encode_controller_epoch(current.epoch + 1), current.zk_version),
            ]
            try:
                results = self.multi(ops)
                log.info("Broker %d elected controller with epoch %d", broker_id, current.epoch + 1)
                return ControllerEpoch(current.epoch + 1, results[1].version)
            except errors.BadVersionError:
                return None  # the epoch moved: another broker was elected since we read it
            except errors.NodeExistsError:
                got = self.get_or_none(paths.controller())
                if got is None:
                    continue  # the controller resigned while we looked: race again
                if got[1].ephemeralOwner == self.session_credentials().session_id:
                    # Our multi went through before a connection loss; it bumped the epoch atomically.
                    return self.get_controller_epoch()
                return None
        return None

    def delete_controller(self, controller_epoch_zk_version: int | None) -> None:
        """Resign: delete /controller, fenced so a stale controller can't remove its successor's node."""
        try:
            self.fenced_multi([DeleteOp(paths.controller())], controller_epoch_zk_version)
        except errors.NoNodeError:
            pass

    # ------------------------------------------------------------------ topics and partition state

    def get_all_topics(self) -> list[str]:
        """Names of all topics, sorted."""
        try:
            return sorted(self.get_children(paths.topics()))
        except errors.NoNodeError:
            return []

    def topic_exists(self, topic: str) -> bool:
        """True if /brokers/topics/<t> exists."""
        return self.exists(paths.topic(topic)) is not None

    def get_topic_assignments(self, topics: Iterable[str]) -> dict[str, TopicAssignment]:
        """Assignments of the given topics (missing topics are left out), pipelined."""
        names = list(dict.fromkeys(topics))
        raw = self.get_many(paths.topic(t) for t in names)
        return {t: TopicAssignment.decode(raw[paths.topic(t)][0], paths.topic(t))  # type: ignore[index]
                for t in names if raw[paths.topic(t)] is not None}

    def get_topic_assignment(self, topic: str) -> tuple[TopicAssignment, int] | None:
        """(assignment, zkVersion) of one topic, or None."""
        got = self.get_or_none(paths.topic(topic))
        return None if got is None else (TopicAssignment.decode(got[0], paths.topic(topic)), got[1].version)

    def create_topic_assignment(self, topic: str, assignment: TopicAssignment) -> None:
        """Create /brokers/topics/<t>; NodeExistsError if the topic exists."""
        self.create(paths.topic(topic), assignment.encode(), make_parents=True)

    def set_topic_assignment(self, topic: str, assignment: TopicAssignment, expected_version: int = ANY_VERSION,
                             controller_epoch_zk_version: int | None = None) -> int:
        """Overwrite a topic's assignment (conditional, optionally fenced); returns the new zkVersion."""
        op = SetDataOp(paths.topic(topic), assignment.encode(), expected_version)
        return self.fenced_multi([op], controller_epoch_zk_version)[0].version

    def get_partition_states(self, partitions: Iterable[Sequence[Any]]) -> dict[TopicPartition, PartitionState | None]:
        """Partition states with partition_epoch = znode version, pipelined; None where missing."""
        tps = [TopicPartition(*tp) for tp in dict.fromkeys(tuple(tp) for tp in partitions)]
        raw = self.get_many(paths.partition_state(t, p) for t, p in tps)
        out: dict[TopicPartition, PartitionState | None] = {}
        for tp in tps:
            path = paths.partition_state(*tp)
            got = raw[path]
            out[tp] = None if got is None else PartitionState.decode(got[0], got[1].version, path)
        return out

    def get_partition_state(self, topic: str, partition: int) -> PartitionState | None:
        """One partition's state, or None."""
        return self.get_partition_states([(topic, partition)])[TopicPartition(topic, partition)]

    def create_partition_states(self, states: Mapping[TopicPartition, PartitionState],
                                controller_epoch_zk_version: int | None
                                ) -> dict[TopicPartition, PartitionState | BaseException]:
        """Create state znodes (and their null parents), fenced; per partition the state or its error."""
        tps = [TopicPartition(*tp) for tp in states]
        waves: list[dict[Any, list[Op]]] = [
            {t: [CreateOp(paths.topic_partitions(t))] for t in dict.fromkeys(t for t, _ in tps)},
            {tp: [CreateOp(paths.topic_partition(*tp))] for tp in tps},
        ]
        for wave in waves:  # parents first; ones that exist already are fine
            for result in self.fenced_multi_many(wave, controller_epoch_zk_version).values():
                if isinstance(result, BaseException) and not isinstance(result, errors.NodeExistsError):
                    raise result
        raw = self.fenced_multi_many(
            {tp: [CreateOp(paths.partition_state(*tp), states[tp].encode())] for tp in tps},
            controller_epoch_zk_version)
        return {tp: r if isinstance(r, BaseException) else dataclasses.replace(states[tp], partition_epoch=0)
                for tp, r in raw.items()}

    def update_partition_states(self, states: Mapping[TopicPartition, PartitionState],
                                controller_epoch_zk_version: int | None) -> UpdatePartitionStatesResult:
        """Write new states, each conditional on its partition_epoch (expected znode version), fenced.

        Raises ControllerMovedError if we are no longer the controller (nothing is written then).
        """
        raw = self.fenced_multi_many(
            {TopicPartition(*tp): [SetDataOp(paths.partition_state(*tp), st.encode(), st.partition_epoch)]
             for tp, st in states.items()}, controller_epoch_zk_version)
        result = UpdatePartitionStatesResult()
        for tp, r in raw.items():
            if isinstance(r, errors.BadVersionError):
                result.bad_version.append(tp)
            elif isinstance(r, BaseException):
                result.failed[tp] = r
            else:
                stat: ZnodeStat = r[0]
                result.successful[tp] = dataclasses.replace(states[tp], partition_epoch=stat.version)
        return result

    # ------------------------------------------------------------------ watches (callbacks on kazoo threads)

    def _decoded(self, path: str, decode: Callable[[bytes], Any],
                 callback: Callable[[Any], Any]) -> Callable[[bytes | None, Any], None]:
        """Adapt a (data, stat) watch to callback(decoded or None); malformed data is logged, passed as None."""
        def on_data(data: bytes | None, stat: Any) -> None:
            value = None
            if stat is not None:
                try:
                    value = decode(data or b"")
                except ValueError:
                    log.exception("Ignoring malformed %s", path)
            callback(value)
        return on_data

    def watch_broker_ids(self, callback: Callable[[list[int]], Any]) -> WatchHandle:
        """callback(sorted live broker ids) now and on every broker join/leave."""
        return self.watch_children(paths.broker_ids(),
                                   lambda ch: callback(sorted(int(c) for c in ch if c.isdigit())))

    def watch_config_changes(self, callback: Callable[[list[str]], Any]) -> WatchHandle:
        """callback(notification child names in sequence order)."""
        return self.watch_children(paths.config_changes(), lambda ch: callback(sorted(ch)))

    def watch_controller(self, callback: Callable[[ControllerInfo | None], Any]) -> WatchHandle:
        """callback(ControllerInfo or None) now and whenever /controller is created, changed or deleted."""
        path = paths.controller()
        return self.watch_data(path, self._decoded(path, ControllerInfo.decode, callback))

    def watch_topic(self, topic: str, callback: Callable[[TopicAssignment | None], Any]) -> WatchHandle:
        """callback(TopicAssignment or None) on changes of /brokers/topics/<t> (partition additions)."""
        path = paths.topic(topic)
        return self.watch_data(path, self._decoded(path, lambda d: TopicAssignment.decode(d, path), callback))
