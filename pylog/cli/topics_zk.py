"""pylog-topics --zookeeper: Kafka 2.8's ZookeeperTopicService.

Writes the znodes the controller watches, like AdminZkClient: a new topic's /config/topics/<t>
first, then /brokers/topics/<t> (replicas placed with Kafka's algorithm over the registered
brokers sorted by id); more partitions by rewriting /brokers/topics/<t>; deletion by creating
/admin/delete_topics/<t>. Describe reads assignments, partition states, /brokers/ids and
/config/topics in bulk.
"""

from __future__ import annotations

from pylog.cli.common import OperationError, describe_exception
from pylog.cli.render import COLLISION_WARNING
from pylog.cli.results import (DeletedTopic, ListedTopic, PartitionLine, TopicCreated, TopicList, TopicsAltered,
                               TopicsDeleted, TopicsDescribed)
from pylog.cli.topic_args import INTERNAL_TOPICS, TopicRequest, ensure_topic_exists, is_internal, select_topics
from pylog.cli.topic_describe import TopicState, describe
from pylog.common.config import validate_topic_config
from pylog.planner import assignment as placement
from pylog.zk import admin as zk_admin
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import TopicPartition

VIA = "zookeeper"
DEFAULT_MIN_ISR = 1  # min.insync.replicas' default


def _validate_config(config: dict[str, str]) -> None:
    validate_topic_config(dict(config))


class ZkTopicService:
    """The topic actions through ZooKeeper."""

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk
        self.admin = zk_admin.AdminZkClient(zk, _validate_config)

    def _topics(self, req: TopicRequest) -> list[str]:
        return select_topics(self.zk.get_all_topics(), req.topic, req.exclude_internal)

    def broker_metadatas(self, rack_aware: bool) -> list[tuple[int, str | None]]:
        """AdminZkClient.getBrokerMetadatas: registered brokers sorted by id, with racks unless disabled."""
        brokers = [(b, reg.registration.rack) for b, reg in sorted(self.zk.get_brokers().items())]
        with_rack = [b for b, rack in brokers if rack is not None]
        if rack_aware and with_rack and len(with_rack) < len(brokers):
            raise placement.AdminOperationError(
                "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
                "replica assignment without rack information.")
        return brokers if rack_aware else [(b, None) for b, _ in brokers]

    # ------------------------------------------------------------------ actions

    def create(self, req: TopicRequest) -> TopicCreated:
        """Place and write a new topic."""
        name = req.topic or ""
        warnings = [COLLISION_WARNING] if zk_admin.has_collision_chars(name) else []
        try:
            if req.replica_assignment is not None:
                assignment = req.replica_assignment
            else:
                assignment = placement.assign_replicas_to_brokers(
                    self.broker_metadatas(req.rack_aware), req.partitions or 0, req.replication_factor or 0)
            self.admin.create_topic(name, assignment, req.configs_to_add)
        except zk_admin.TopicExistsError:
            if not req.if_not_exists:
                raise
            return TopicCreated(name, False, VIA, warnings)
        return TopicCreated(name, True, VIA, warnings)

    def list(self, req: TopicRequest) -> TopicList:
        """Matching topics, each flagged if a deletion is pending."""
        deleting = set(self.zk.get_topic_deletions())
        return TopicList([ListedTopic(t, t in deleting) for t in self._topics(req)], VIA)

    def alter(self, req: TopicRequest) -> TopicsAltered:
        """Change configs (deprecated 2.8 path) and/or add partitions to every matching topic."""
        topics = self._topics(req)
        ensure_topic_exists(topics, req.topic, not req.if_exists)
        change_configs = bool(req.configs_to_add or req.configs_to_delete)
        for topic in topics:
            if change_configs:
                configs = self.admin.fetch_entity_config("topics", topic)
                configs.update(req.configs_to_add)
                for name in req.configs_to_delete:
                    configs.pop(name, None)
                self.admin.change_entity_config("topics", topic, configs)
            if req.partitions is not None:
                self._add_partitions(topic, req)
        return TopicsAltered(topics, req.partitions, change_configs, VIA)

    def _add_partitions(self, topic: str, req: TopicRequest) -> None:
        if is_internal(topic):
            raise OperationError(f"The number of partitions for the internal topics{','.join(INTERNAL_TOPICS)} "
                                 "cannot be changed.")
        current = self.zk.get_topic_assignment(topic)
        if current is None:
            raise OperationError(f"The topic {topic} does not exist")
        existing = {p: list(r) for p, r in current[0].partitions.items()}
        manual = {p: r for p, r in (req.replica_assignment or {}).items() if p >= len(existing)} or None
        brokers = self.broker_metadatas(req.rack_aware)
        added = placement.new_partitions_assignment(topic, existing, brokers, req.partitions or 0, manual)
        self.admin.add_partitions(topic, req.partitions or 0, added)

    def delete(self, req: TopicRequest) -> TopicsDeleted:
        """Mark every matching topic for deletion; the controller deletes them."""
        topics = self._topics(req)
        ensure_topic_exists(topics, req.topic, not req.if_exists)
        done: list[DeletedTopic] = []
        for topic in topics:
            try:
                if is_internal(topic):
                    raise OperationError(f"Topic {topic} is a kafka internal topic and is not allowed to be marked "
                                         "for deletion.")
                self.admin.delete_topic(topic)
                done.append(DeletedTopic(topic))
            except zk_admin.TopicAlreadyMarkedForDeletionError:
                done.append(DeletedTopic(topic, already_marked=True))
            except Exception as exc:  # Kafka stops at the first failure; what was done stays printed
                return TopicsDeleted(done, VIA, failure=describe_exception(exc))
        return TopicsDeleted(done, VIA)

    def describe(self, req: TopicRequest) -> TopicsDescribed:
        """Assignments, leaders/ISRs and overrides of the matching topics."""
        all_topics = self.zk.get_all_topics()
        assignments = self.zk.get_topic_assignments(all_topics if req.topic_id else
                                                    select_topics(all_topics, req.topic, req.exclude_internal))
        if req.topic_id:
            assignments = {t: a for t, a in assignments.items() if a.topic_id == req.topic_id}
            if not assignments and not req.if_exists:
                raise OperationError(f"TopicId '{req.topic_id}' does not exist as expected")
        else:
            ensure_topic_exists(list(assignments), req.topic, not req.if_exists)
        names = sorted(assignments)
        states = self.zk.get_partition_states(
            TopicPartition(t, p) for t in names for p in sorted(assignments[t].partitions))
        overrides = self.zk.get_entity_configs("topics", names)
        deleting = set(self.zk.get_topic_deletions())
        default_min_isr = _int_or(self.zk.get_entity_config("brokers", paths.DEFAULT_ENTITY)
                                  .get("min.insync.replicas"), DEFAULT_MIN_ISR)
        out = []
        for t in names:
            a, marked = assignments[t], t in deleting
            parts = []
            for p in sorted(a.partitions):
                st = states.get(TopicPartition(t, p))
                leader = st.leader if st is not None and st.leader >= 0 else None
                parts.append(PartitionLine(t, p, leader, list(a.replicas(p)), list(st.isr) if st else [],
                                           list(a.adding(p)), list(a.removing(p)), marked))
            configs = dict(sorted(overrides.get(t, {}).items()))
            out.append(TopicState(t, a.topic_id, parts, configs,
                                  _int_or(configs.get("min.insync.replicas"), default_min_isr), marked))
        return describe(out, req.report, set(self.zk.get_all_broker_ids()), VIA)


def _int_or(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default
