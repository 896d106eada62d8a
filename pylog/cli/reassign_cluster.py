"""The cluster as pylog-reassign-partitions and pylog-alter-cluster see it, through ZooKeeper or a broker.

ZooKeeper (Kafka 2.8's --zookeeper mode): assignments and in-flight reassignments are read from the
topic znodes (`adding_replicas`/`removing_replicas`, written by the controller), reassignments are
requested through /admin/reassign_partitions, throttles are written as /config/<type>/<name> plus a
/config/changes notification (AdminZkClient.changeEntityConfig). A broker (3.x): Metadata,
List/AlterPartitionReassignments and IncrementalAlterConfigs. Either way replica sizes come from
the brokers' DescribeLogDirs, best effort (the brokers' addresses are in their registrations).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from pylog.cli.admin_client import BROKER_RESOURCE, PREFERRED, TOPIC_RESOURCE, ApiError, BrokerAdmin
from pylog.cli.common import OperationError
from pylog.common.throttle_keys import FOLLOWER_RATE, FOLLOWER_REPLICAS, LEADER_RATE, LEADER_REPLICAS
from pylog.cli.reassign_logic import TP, Ongoing, name
from pylog.client.sync import ClientError
from pylog.common.topic_config import validate_topic_config
from pylog.planner.model import Broker, Partition, Snapshot
from pylog.protocol.errors import ErrorCode
from pylog.zk import admin as zk_admin
from pylog.zk.client import ZkClient
from pylog.zk.codecs import TopicPartition

log = logging.getLogger("pylog.cli")
# ReassignPartitionsCommand.brokerLevelThrottles / topicLevelThrottles: what --verify and --cancel clear.
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
BROKER_THROTTLES = (LEADER_RATE, FOLLOWER_RATE, LOG_DIR_RATE)
TOPIC_THROTTLES = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
ZK_ADDITIONAL_BLOCKED = (
    "Cannot add to the reassignment through ZooKeeper while /admin/reassign_partitions is still being processed "
    "by the controller (it only reads that znode when it is created). Wait for it to finish, or use "
    "--bootstrap-server, which adds reassignments with AlterPartitionReassignments.")
ZK_CANCEL_BLOCKED = (
    "Cannot cancel through ZooKeeper while /admin/reassign_partitions is still being processed by the "
    "controller; use --bootstrap-server (AlterPartitionReassignments cancels in-flight reassignments).")


class ClusterView:
    """What both access paths offer; subclasses implement the reads and writes."""

    via = ""

    def live_brokers(self) -> dict[int, str | None]:
        """Registered brokers and their racks."""
        raise NotImplementedError

    def assignments(self, topics: Iterable[str] | None) -> dict[TP, list[int]]:
        """Replicas of every partition of these topics (None: all); missing topics are left out."""
        raise NotImplementedError

    def ongoing(self) -> dict[TP, Ongoing]:
        """Partitions with a reassignment in flight."""
        raise NotImplementedError

    def pending(self) -> set[TP]:
        """Partitions requested but possibly not yet started (the legacy znode); none through a broker."""
        return set()

    def start(self, targets: Mapping[TP, Sequence[int]]) -> dict[TP, str]:
        """Start reassignments; per-partition error messages (empty when all started)."""
        raise NotImplementedError

    def cancel(self, tps: Sequence[TP]) -> dict[TP, str]:
        """Revert in-flight reassignments to their original replicas; per-partition errors."""
        raise NotImplementedError

    def set_throttles(self, topics: Mapping[str, tuple[str, str]], brokers: Sequence[int], rate: int) -> None:
        """Throttled-replica lists per topic, leader/follower rates on the brokers."""
        raise NotImplementedError

    def clear_throttles(self, brokers: Sequence[int], topics: Sequence[str]) -> None:
        """Remove every reassignment throttle config from these brokers and topics."""
        raise NotImplementedError

    def elect_preferred(self, tps: Sequence[TP], timeout_ms: int) -> tuple[list[TP], dict[TP, str]]:
        """Preferred leader election for these partitions: those elected, and failures with their message
        (partitions already led by their preferred replica are in neither)."""
        raise NotImplementedError

    def _admin_for_sizes(self) -> BrokerAdmin | None:
        raise NotImplementedError

    def log_dir_admin(self) -> BrokerAdmin | None:
        """The admin client replica moves between log dirs go through (Kafka: --bootstrap-server only)."""
        return None

    def replica_sizes(self) -> dict[tuple[TP, int], int] | None:
        """(partition, broker) -> bytes on disk, from each live broker's DescribeLogDirs; None if unknown."""
        admin = self._admin_for_sizes()
        if admin is None:
            return None
        sizes: dict[tuple[TP, int], int] = {}
        for b in sorted(self.live_brokers()):
            try:
                for tp, size in admin.describe_log_dirs(b).items():
                    sizes[(tp, b)] = size
            except (ApiError, ClientError, OSError) as exc:
                log.debug("DescribeLogDirs on broker %d failed: %s", b, exc)
        return sizes

    def snapshot(self, topics: Iterable[str] | None = None, with_sizes: bool = True) -> Snapshot:
        """The planner's view: live brokers with racks, partitions with replicas and (if known) sizes."""
        brokers = self.live_brokers()
        current = self.assignments(topics)
        sizes = self.replica_sizes() if with_sizes else None
        parts = []
        for tp, replicas in sorted(current.items()):
            size = None
            if sizes is not None:
                found = [sizes[(tp, r)] for r in replicas if (tp, r) in sizes]
                size = max(found) if found else None
            parts.append(Partition(tp[0], tp[1], list(replicas), size))
        return Snapshot([Broker(b, rack) for b, rack in sorted(brokers.items())], parts)


class ZkCluster(ClusterView):
    """Through ZooKeeper, as Kafka 2.8's --zookeeper tools (plus the topic znodes' reassignment state)."""

    via = "zookeeper"

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk
        self.admin = zk_admin.AdminZkClient(zk, lambda c: validate_topic_config(dict(c)))
        self._sizes_admin: BrokerAdmin | None = None

    def live_brokers(self) -> dict[int, str | None]:
        return {b: reg.registration.rack for b, reg in self.zk.get_brokers().items()}

    def _topic_assignments(self, topics: Iterable[str] | None) -> dict:
        return self.zk.get_topic_assignments(self.zk.get_all_topics() if topics is None else sorted(set(topics)))

    def assignments(self, topics: Iterable[str] | None) -> dict[TP, list[int]]:
        return {(t, p): list(reps) for t, a in self._topic_assignments(topics).items()
                for p, reps in a.partitions.items()}

    def ongoing(self) -> dict[TP, Ongoing]:
        out = {}
        for t, a in self._topic_assignments(None).items():
            for p, reps in a.partitions.items():
                if a.adding(p) or a.removing(p):
                    out[(t, p)] = Ongoing(tuple(reps), a.adding(p), a.removing(p))
        return out

    def pending(self) -> set[TP]:
        got = self.zk.get_reassign_partitions()
        return set() if got is None else {(tp.topic, tp.partition) for tp in got[0].partitions}

    def start(self, targets: Mapping[TP, Sequence[int]]) -> dict[TP, str]:
        self.admin.write_reassign_partitions({TopicPartition(*tp): tuple(r) for tp, r in targets.items()})
        return {}

    def cancel(self, tps: Sequence[TP]) -> dict[TP, str]:
        # The controller reads the legacy znode only when it is created; a target equal to the original
        # replicas is what cancelling means (KafkaController: reassign back to the original replicas).
        if self.pending():
            raise OperationError(ZK_CANCEL_BLOCKED)
        ongoing = self.ongoing()
        originals = {tp: tuple(r for r in ongoing[tp].replicas if r not in ongoing[tp].adding) for tp in tps}
        self.start(originals)
        return {}

    def _update(self, entity_type: str, entity: str, set_: Mapping[str, str], delete: Iterable[str],
                only_if_changed: bool = False) -> None:
        config = self.admin.fetch_entity_config(entity_type, entity)
        removed = [k for k in delete if config.pop(k, None) is not None]
        if only_if_changed and not removed and not set_:
            return
        config.update(set_)
        self.admin.change_entity_config(entity_type, entity, config)

    def set_throttles(self, topics: Mapping[str, tuple[str, str]], brokers: Sequence[int], rate: int) -> None:
        for topic, (leader, follower) in topics.items():
            self._update("topics", topic, {LEADER_REPLICAS: leader, FOLLOWER_REPLICAS: follower}, ())
        for b in brokers:
            self._update("brokers", str(b), {LEADER_RATE: str(rate), FOLLOWER_RATE: str(rate)}, ())

    def clear_throttles(self, brokers: Sequence[int], topics: Sequence[str]) -> None:
        for b in brokers:
            self._update("brokers", str(b), {}, BROKER_THROTTLES, only_if_changed=True)
        existing = set(self.zk.get_all_topics())
        for topic in topics:
            if topic in existing:
                self._update("topics", topic, {}, TOPIC_THROTTLES, only_if_changed=True)

    def elect_preferred(self, tps: Sequence[TP], timeout_ms: int) -> tuple[list[TP], dict[TP, str]]:
        from pylog.cli.leader_election import elect_through_zookeeper
        outcome = elect_through_zookeeper(self.zk, [TopicPartition(*tp) for tp in tps], timeout_ms)
        return _election_outcome({(tp.topic, tp.partition): err for tp, err in outcome.items()})

    def _admin_for_sizes(self) -> BrokerAdmin | None:
        if self._sizes_admin is None:
            endpoints = []
            for reg in self.zk.get_brokers().values():
                ep = reg.registration.endpoint("PLAINTEXT") or reg.registration.endpoints[0]
                endpoints.append(f"{ep.host or '127.0.0.1'}:{ep.port}")
            if not endpoints:
                return None
            try:
                self._sizes_admin = BrokerAdmin(",".join(endpoints), 10000)
            except ClientError:
                return None
        return self._sizes_admin

    def close(self) -> None:
        """Close the broker connections opened for sizes."""
        if self._sizes_admin is not None:
            self._sizes_admin.close()


class BrokerCluster(ClusterView):
    """Through a broker's admin APIs, as Kafka 3.x's tools."""

    via = "bootstrap-server"

    def __init__(self, admin: BrokerAdmin) -> None:
        self.admin = admin

    def live_brokers(self) -> dict[int, str | None]:
        return dict(self.admin.metadata([]).brokers)

    def assignments(self, topics: Iterable[str] | None) -> dict[TP, list[int]]:
        md = self.admin.metadata(None if topics is None else sorted(set(topics)))
        return {(t, p): list(pm.replicas) for t, tm in md.topics.items() for p, pm in tm.partitions.items()}

    def ongoing(self) -> dict[TP, Ongoing]:
        return {tp: Ongoing(r.replicas, r.adding, r.removing)
                for tp, r in self.admin.list_partition_reassignments().items()}

    def _alter(self, targets: Mapping[TP, Sequence[int] | None]) -> dict[TP, str]:
        return {tp: err.message for tp, err in self.admin.alter_partition_reassignments(targets).items()
                if err is not None}

    def start(self, targets: Mapping[TP, Sequence[int]]) -> dict[TP, str]:
        return self._alter(targets)

    def cancel(self, tps: Sequence[TP]) -> dict[TP, str]:
        return self._alter({tp: None for tp in tps})

    def set_throttles(self, topics: Mapping[str, tuple[str, str]], brokers: Sequence[int], rate: int) -> None:
        for topic, (leader, follower) in topics.items():
            self.admin.incremental_alter_configs(TOPIC_RESOURCE, topic,
                                                 {LEADER_REPLICAS: leader, FOLLOWER_REPLICAS: follower}, ())
        for b in brokers:
            self.admin.incremental_alter_configs(BROKER_RESOURCE, str(b),
                                                 {LEADER_RATE: str(rate), FOLLOWER_RATE: str(rate)}, ())

    def clear_throttles(self, brokers: Sequence[int], topics: Sequence[str]) -> None:
        for b in brokers:
            self.admin.incremental_alter_configs(BROKER_RESOURCE, str(b), {}, BROKER_THROTTLES)
        for topic in topics:
            self.admin.incremental_alter_configs(TOPIC_RESOURCE, topic, {}, TOPIC_THROTTLES)

    def elect_preferred(self, tps: Sequence[TP], timeout_ms: int) -> tuple[list[TP], dict[TP, str]]:
        return _election_outcome(self.admin.elect_leaders(PREFERRED, tps))

    def _admin_for_sizes(self) -> BrokerAdmin | None:
        return self.admin

    def log_dir_admin(self) -> BrokerAdmin | None:
        return self.admin


def _election_outcome(outcome: Mapping[TP, ApiError | None]) -> tuple[list[TP], dict[TP, str]]:
    elected = sorted(tp for tp, err in outcome.items() if err is None)
    failed = {tp: err.message for tp, err in outcome.items()
              if err is not None and err.code != ErrorCode.ELECTION_NOT_NEEDED}
    return elected, failed


def missing_partitions(targets: Iterable[TP], current: Mapping[TP, Sequence[int]]) -> list[str]:
    """Partitions of the request that the cluster does not have, by name."""
    return [name(tp) for tp in sorted(targets) if tp not in current]
