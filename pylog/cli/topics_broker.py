"""pylog-topics --bootstrap-server: Kafka 3.x's TopicService over the admin APIs.

CreateTopics, CreatePartitions and DeleteTopics go to the controller; describe combines
Metadata (leaders, ISRs, topic ids, live brokers), DescribeConfigs (non-default configs,
min.insync.replicas) and, when the broker has it, ListPartitionReassignments.
"""

from __future__ import annotations

from pylog.cli.admin_client import TOPIC_RESOURCE, ApiError, BrokerAdmin, ClusterMetadata
from pylog.cli.common import OperationError
from pylog.cli.render import COLLISION_WARNING
from pylog.cli.results import (DeletedTopic, ListedTopic, PartitionLine, TopicCreated, TopicList, TopicsAltered,
                               TopicsDeleted, TopicsDescribed)
from pylog.cli.topic_args import TopicRequest, ensure_topic_exists, select_topics
from pylog.cli.topic_describe import TopicState, describe
from pylog.protocol.errors import ErrorCode
from pylog.zk.admin import has_collision_chars

VIA = "bootstrap-server"


class BrokerTopicService:
    """The topic actions through a broker."""

    def __init__(self, admin: BrokerAdmin) -> None:
        self.admin = admin

    def _topics(self, req: TopicRequest, md: ClusterMetadata) -> list[str]:
        internal = [t.name for t in md.topics.values() if t.is_internal]
        return select_topics(list(md.topics), req.topic, req.exclude_internal, internal)

    def create(self, req: TopicRequest) -> TopicCreated:
        """CreateTopics; missing partitions/replication factor take the broker's defaults."""
        name = req.topic or ""
        warnings = [COLLISION_WARNING] if has_collision_chars(name) else []
        try:
            self.admin.create_topic(name, req.partitions, req.replication_factor, req.replica_assignment,
                                    req.configs_to_add)
        except ApiError as exc:
            if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS and req.if_not_exists:
                return TopicCreated(name, False, VIA, warnings)
            raise
        return TopicCreated(name, True, VIA, warnings)

    def list(self, req: TopicRequest) -> TopicList:
        """Matching topic names."""
        return TopicList([ListedTopic(t) for t in self._topics(req, self.admin.metadata())], VIA)

    def alter(self, req: TopicRequest) -> TopicsAltered:
        """CreatePartitions for every matching topic; --replica-assignment entries past the current count
        place the new partitions."""
        md = self.admin.metadata()
        topics = self._topics(req, md)
        ensure_topic_exists(topics, req.topic, not req.if_exists)
        if topics:
            increases = {}
            for t in topics:
                new = None
                if req.replica_assignment is not None:
                    start = len(md.topics[t].partitions)
                    new = [r for p, r in sorted(req.replica_assignment.items()) if p >= start]
                increases[t] = (req.partitions or 0, new)
            self.admin.create_partitions(increases)
        return TopicsAltered(topics, req.partitions, False, VIA)

    def delete(self, req: TopicRequest) -> TopicsDeleted:
        """DeleteTopics (the broker answers once the controller has removed them)."""
        topics = self._topics(req, self.admin.metadata())
        ensure_topic_exists(topics, req.topic, not req.if_exists)
        if topics:
            self.admin.delete_topics(topics)
        return TopicsDeleted([DeletedTopic(t) for t in topics], VIA)

    def describe(self, req: TopicRequest) -> TopicsDescribed:
        """Metadata + DescribeConfigs (+ ListPartitionReassignments) of the matching topics."""
        md = self.admin.metadata()
        if req.topic_id:
            names = [t.name for t in md.topics.values() if t.topic_id == req.topic_id]
            if not names and not req.if_exists:
                raise OperationError(f"TopicId '{req.topic_id}' does not exist as expected")
        else:
            names = self._topics(req, md)
            ensure_topic_exists(names, req.topic, not req.if_exists)
        if not names:
            return TopicsDescribed([], [], VIA)
        configs = self.admin.describe_configs([(TOPIC_RESOURCE, n) for n in names])
        reassignments = self.admin.list_partition_reassignments({n: list(md.topics[n].partitions) for n in names})
        states = []
        for name in names:
            tm = md.topics[name]
            entries = configs.get((TOPIC_RESOURCE, name), [])
            non_default = {e.name: e.value or "" for e in sorted(entries, key=lambda e: e.name) if not e.is_default}
            min_isr = next((int(e.value) for e in entries if e.name == "min.insync.replicas" and e.value), None)
            parts = []
            for p in sorted(tm.partitions.values(), key=lambda p: p.partition):
                ra = reassignments.get((name, p.partition))
                parts.append(PartitionLine(name, p.partition, p.leader, list(p.replicas), list(p.isr),
                                           list(ra.adding) if ra else [], list(ra.removing) if ra else []))
            states.append(TopicState(name, tm.topic_id, parts, non_default, min_isr))
        return describe(states, req.report, set(md.brokers), VIA)
