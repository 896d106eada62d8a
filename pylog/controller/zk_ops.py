"""The controller's ZooKeeper reads and writes (blocking; the controller runs them off the loop).

Every write the controller makes is fenced by its epoch: a multi op that also checks the
zkVersion of /controller_epoch, so a controller that lost its seat can't change anything
(Kafka's controllerEpochZkVersion check).
"""

from __future__ import annotations

import logging
from typing import Iterable, Mapping

from pylog.common.types import TP
from pylog.zk import paths
from pylog.zk.codecs import BrokerRegistration, ConfigEntity, ControllerInfo, PartitionState, TopicAssignment
from pylog.zk.codecs import decode_controller_epoch, encode_controller_epoch
from pylog.zk.core import ZkConnection
from pylog.zk.ops import CheckOp, CreateOp, SetDataOp
from pylog.zk.errors import BadVersionError, ControllerMovedError, NoNodeError, NodeExistsError

log = logging.getLogger("pylog.controller")


class ControllerZk:
    """ZooKeeper operations of an elected (or electing) controller."""

    def __init__(self, zk: ZkConnection) -> None:
        self.zk = zk
        self.epoch_zk_version = -1

    # -- election ------------------------------------------------------------------------

    def controller_id(self) -> int:
        """The broker in /controller, or -1."""
        got = self.zk.get_or_none(paths.controller())
        return ControllerInfo.decode(got[0]).broker_id if got else -1

    def try_elect(self, broker_id: int) -> tuple[int, int] | None:
        """Create /controller and bump /controller_epoch in one multi: (epoch, zkVersion) or None."""
        got = self.zk.get_or_none(paths.controller_epoch())
        if got is None:
            try:
                self.zk.create(paths.controller_epoch(), encode_controller_epoch(0))
            except NodeExistsError:
                pass
            got = self.zk.get(paths.controller_epoch())
        epoch, version = decode_controller_epoch(got[0]), got[1].version
        try:
            results = self.zk.multi([
                CreateOp(paths.controller(), ControllerInfo(broker_id).encode(), ephemeral=True),
                SetDataOp(paths.controller_epoch(), encode_controller_epoch(epoch + 1), version),
            ])
        except (NodeExistsError, BadVersionError):
            return None
        self.epoch_zk_version = results[1].version
        return epoch + 1, self.epoch_zk_version

    def resign(self, broker_id: int) -> None:
        """Delete /controller if it is ours (a clean handover on shutdown)."""
        got = self.zk.get_or_none(paths.controller())
        if got and ControllerInfo.decode(got[0]).broker_id == broker_id:
            try:
                self.zk.delete(paths.controller(), got[1].version)
            except (NoNodeError, BadVersionError):
                pass

    def _fenced(self, ops: list) -> list:
        return [CheckOp(paths.controller_epoch(), self.epoch_zk_version), *ops]

    def _run_fenced(self, batches: Mapping[object, list]) -> dict[object, object]:
        """Run each batch as one multi behind the epoch check; ControllerMovedError if fenced."""
        out = self.zk.multi_many({k: self._fenced(ops) for k, ops in batches.items()})
        for result in out.values():
            if isinstance(result, BaseException) and getattr(result, "op_index", None) == 0:
                raise ControllerMovedError("Controller epoch zkVersion check fails: another controller was elected")
        return out

    # -- reads -----------------------------------------------------------------------------

    def live_brokers(self) -> dict[int, tuple[BrokerRegistration, int]]:
        """Registered brokers with their epoch (registration czxid)."""
        ids = [int(c) for c in self.zk.get_children(paths.broker_ids()) if c.isdigit()]
        raw = self.zk.get_many(paths.broker_id(i) for i in ids)
        out = {}
        for i in ids:
            got = raw[paths.broker_id(i)]
            if got is not None:
                out[i] = (BrokerRegistration.decode(i, got[0]), got[1].czxid)
        return out

    def topics(self) -> list[str]:
        """Every topic with an assignment znode."""
        return self.zk.get_children(paths.topics())

    def assignments(self, topics: Iterable[str]) -> dict[str, TopicAssignment]:
        """Topic znodes, pipelined (missing topics left out)."""
        topics = list(topics)
        raw = self.zk.get_many(paths.topic(t) for t in topics)
        return {t: TopicAssignment.decode(raw[paths.topic(t)][0], paths.topic(t))
                for t in topics if raw[paths.topic(t)] is not None}

    def partition_states(self, tps: Iterable[TP]) -> dict[TP, PartitionState]:
        """Partition state znodes with their zkVersion, pipelined (missing ones left out)."""
        tps = list(tps)
        raw = self.zk.get_many(paths.partition_state(t, p) for t, p in tps)
        out = {}
        for t, p in tps:
            got = raw[paths.partition_state(t, p)]
            if got is not None:
                out[(t, p)] = PartitionState.decode(got[0], got[1].version, paths.partition_state(t, p))
        return out

    def topic_configs(self, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        """Topic config overrides, pipelined."""
        topics = list(topics)
        raw = self.zk.get_many(paths.config_entity("topics", t) for t in topics)
        return {t: dict(ConfigEntity.decode(raw[paths.config_entity("topics", t)][0]).config)
                for t in topics if raw[paths.config_entity("topics", t)] is not None}

    def broker_config(self, name: str) -> dict[str, str]:
        """Dynamic broker config (/config/brokers/<id> or <default>)."""
        got = self.zk.get_or_none(paths.config_entity("brokers", name))
        return dict(ConfigEntity.decode(got[0]).config) if got else {}

    def children(self, path: str) -> list[str]:
        """Children of a persistent path (empty when missing)."""
        try:
            return self.zk.get_children(path)
        except NoNodeError:
            return []

    # -- writes (fenced) ------------------------------------------------------------------

    def create_partition_states(self, states: Mapping[TP, PartitionState]) -> dict[TP, PartitionState | None]:
        """Create state znodes of new partitions; None where one already existed."""
        for t in {t for t, _ in states}:
            self.zk.ensure_path(paths.topic_partitions(t))
        batches = {}
        for (t, p), st in states.items():
            ops = []
            if self.zk.exists(paths.topic_partition(t, p)) is None:
                ops.append(CreateOp(paths.topic_partition(t, p)))
            ops.append(CreateOp(paths.partition_state(t, p), st.encode()))
            batches[(t, p)] = ops
        out = {}
        for tp, result in self._run_fenced(batches).items():
            if isinstance(result, BaseException):
                if not isinstance(result, NodeExistsError):
                    raise result
                out[tp] = None
            else:
                out[tp] = _with_version(states[tp], 0)
        return out

    def update_partition_states(self, states: Mapping[TP, PartitionState]) -> dict[TP, PartitionState | None]:
        """Conditional updates on each state's partition_epoch; None where the version moved on."""
        batches = {tp: [SetDataOp(paths.partition_state(*tp), st.encode(), st.partition_epoch)]
                   for tp, st in states.items()}
        out = {}
        for tp, result in self._run_fenced(batches).items():
            if isinstance(result, BaseException):
                if not isinstance(result, (BadVersionError, NoNodeError)):
                    raise result
                out[tp] = None
            else:
                out[tp] = _with_version(states[tp], result[1].version)
        return out

    def write_assignment(self, topic: str, assignment: TopicAssignment) -> None:
        """Replace a topic's assignment znode (reassignment steps)."""
        self._run_fenced({topic: [SetDataOp(paths.topic(topic), assignment.encode())]})

    def delete_topic_znodes(self, topic: str) -> None:
        """Finish a topic deletion: assignment, config and the deletion marker."""
        self.zk.delete_recursive(paths.topic(topic))
        self.zk.delete_recursive(paths.config_entity("topics", topic))
        self.zk.delete_recursive(paths.delete_topic(topic))

    def delete_path(self, path: str) -> None:
        """Delete one znode if present."""
        try:
            self.zk.delete(path)
        except NoNodeError:
            pass


def _with_version(st: PartitionState, version: int) -> PartitionState:
    return PartitionState(st.leader, st.leader_epoch, st.isr, st.controller_epoch, st.leader_recovery_state, version)
