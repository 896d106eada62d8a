"""BrokerAdmin: what the tools need from Kafka's Admin client, over the blocking KafkaClient.

Each method sends one admin request (to the controller where Kafka's Admin does), checks the
per-entity error codes and returns plain data, or raises ApiError carrying Kafka's error code
and message (the broker's error_message, else the code's default text) - which is what
Kafka's tools print.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from pylog.client.sync import ClientError, KafkaClient
from pylog.common.describe import ConfigSource
from pylog.common.errors import ErrorCode, KafkaError
from pylog.protocol.api import ApiKey, ApiMessage
from pylog.zk.uuids import ZERO_UUID, uuid_to_base64

TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4  # ConfigResource.Type ids
OP_SET, OP_DELETE = 0, 1  # AlterConfigOp.OpType ids
PREFERRED, UNCLEAN = 0, 1  # ElectionType ids
_CONTROLLER_RETRIES = 3
_CONTROLLER_BACKOFF_S = 0.5
_SOCKET_GRACE_S = 5.0


class ApiError(KafkaError):
    """A Kafka error code from a response, with the message the broker gave (or Kafka's default)."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message or None, code=code)

    def java_string(self) -> str:
        """Java's Throwable.toString, as Kafka's tools print a per-partition failure."""
        return f"{self.code.exception_name}: {self.message}"


def check_error(code: int, message: str | None = None) -> None:
    """Raise ApiError for a response's error code other than NONE (the tools share it)."""
    if code != ErrorCode.NONE:
        raise ApiError(code, message)


@dataclass(frozen=True)
class PartitionMetadata:
    """One partition as Metadata reports it (leader None: no live leader)."""

    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline: tuple[int, ...] = ()  # replicas on a failed log dir or a dead broker (Metadata v5+, KIP-112)


@dataclass(frozen=True)
class TopicMetadata:
    """One topic as Metadata reports it; topic_id None for the zero UUID."""

    name: str
    topic_id: str | None
    is_internal: bool
    partitions: dict[int, PartitionMetadata] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterMetadata:
    """Brokers (id -> rack), the controller and topics."""

    brokers: dict[int, str | None]
    controller_id: int | None
    topics: dict[str, TopicMetadata]


@dataclass(frozen=True)
class Reassignment:
    """An ongoing reassignment of one partition (ListPartitionReassignments)."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True)
class DescribedConfig:
    """One DescribeConfigs entry (v1+ semantics: is_default means source DEFAULT_CONFIG)."""

    name: str
    value: str | None
    source: ConfigSource
    is_sensitive: bool
    read_only: bool
    synonyms: tuple[tuple[str, str | None, ConfigSource], ...] = ()

    @property
    def is_default(self) -> bool:
        """Admin's ConfigEntry.isDefault."""
        return self.source == ConfigSource.DEFAULT_CONFIG


class BrokerAdmin:
    """Admin operations through one cluster's brokers."""

    def __init__(self, bootstrap: str, timeout_ms: int = 30000, security: Any = None) -> None:
        self.timeout_ms = timeout_ms
        # The socket waits a little longer than the broker is asked to, so its answer at the deadline arrives.
        self.client = KafkaClient(bootstrap, client_id="pylog-admin", timeout=timeout_ms / 1000 + _SOCKET_GRACE_S,
                                  security=security)

    def close(self) -> None:
        """Close the sockets."""
        self.client.close()

    def supports(self, api_key: int, node: int | None = None) -> bool:
        """Whether the broker advertises this API."""
        try:
            self.client.version_for(api_key, node)
            return True
        except ClientError as exc:
            if "does not support" in str(exc) or "no common version" in str(exc):
                return False
            raise

    def _require(self, api_key: int, node: int | None = None) -> None:
        if not self.supports(api_key, node):
            raise ApiError(ErrorCode.UNSUPPORTED_VERSION,
                           f"The broker does not support {ApiKey(api_key).name} (API key {int(api_key)})")

    def _to_controller(self, api_key: int, build: Callable[[type, int], ApiMessage],
                       not_controller: Callable[[Any], bool]) -> Any:
        """Send to the controller; on NOT_CONTROLLER, or when it cannot be reached (it may just have failed
        over), look it up again and resend, as Admin does."""
        unreachable: ClientError | None = None
        for attempt in range(_CONTROLLER_RETRIES):
            if attempt:
                time.sleep(_CONTROLLER_BACKOFF_S * attempt)
            try:
                node = self.client.controller()
                self._require(api_key, node)
                resp = self.client.call(api_key, build, node=node)
            except ClientError as exc:
                unreachable = exc
                continue
            if not not_controller(resp):
                return resp
            unreachable = None
        if unreachable is not None:
            raise unreachable
        raise ApiError(ErrorCode.NOT_CONTROLLER)

    # ------------------------------------------------------------------ metadata

    def metadata(self, topics: Sequence[str] | None = None) -> ClusterMetadata:
        """Brokers, controller and the given topics (None: all)."""
        def build(cls: type, v: int) -> ApiMessage:
            t = None if topics is None else [cls.MetadataRequestTopic(name=n) for n in topics]
            return cls(topics=t, allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                       include_topic_authorized_operations=False)
        resp = self.client.call(ApiKey.Metadata, build)
        out: dict[str, TopicMetadata] = {}
        for t in resp.topics:
            if t.error_code != ErrorCode.NONE:
                if topics is not None and t.error_code != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                    raise ApiError(t.error_code)
                continue
            tid = getattr(t, "topic_id", None)
            text_id = uuid_to_base64(tid.bytes) if isinstance(tid, uuid.UUID) else None
            parts = {p.partition_index: PartitionMetadata(
                p.partition_index, p.leader_id if p.leader_id >= 0 else None, tuple(p.replica_nodes),
                tuple(p.isr_nodes), tuple(getattr(p, "offline_replicas", None) or ())) for p in t.partitions}
            out[t.name] = TopicMetadata(t.name, None if text_id == ZERO_UUID else text_id,
                                        bool(t.is_internal), parts)
        return ClusterMetadata({b.node_id: b.rack for b in resp.brokers},
                               resp.controller_id if resp.controller_id >= 0 else None, out)

    def list_partition_reassignments(self, topics: Mapping[str, Iterable[int]] | None = None
                                     ) -> dict[tuple[str, int], Reassignment]:
        """Ongoing reassignments; {} if the broker does not implement API 46 (as Kafka's tools treat it)."""
        if not self.supports(ApiKey.ListPartitionReassignments):
            return {}

        def build(cls: type, v: int) -> ApiMessage:
            t = None if topics is None else [cls.ListPartitionReassignmentsTopics(name=n, partition_indexes=list(p))
                                             for n, p in topics.items()]
            return cls(timeout_ms=self.timeout_ms, topics=t)
        resp = self._to_controller(ApiKey.ListPartitionReassignments, build,
                                   lambda r: r.error_code == ErrorCode.NOT_CONTROLLER)
        check_error(resp.error_code, resp.error_message)
        return {(t.name, p.partition_index): Reassignment(tuple(p.replicas), tuple(p.adding_replicas),
                                                          tuple(p.removing_replicas))
                for t in resp.topics for p in t.partitions}

    def alter_partition_reassignments(self, targets: Mapping[tuple[str, int], Sequence[int] | None]
                                      ) -> dict[tuple[str, int], ApiError | None]:
        """AlterPartitionReassignments (API 45): per partition None (started/cancelled) or its error.

        A target of None cancels that partition's reassignment."""
        by_topic: dict[str, list[tuple[int, Sequence[int] | None]]] = {}
        for (t, p), replicas in sorted(targets.items()):
            by_topic.setdefault(t, []).append((p, replicas))

        def build(cls: type, v: int) -> ApiMessage:
            return cls(timeout_ms=self.timeout_ms, topics=[cls.ReassignableTopic(name=t, partitions=[
                cls.ReassignableTopic.ReassignablePartition(
                    partition_index=p, replicas=None if r is None else list(r)) for p, r in ps])
                for t, ps in by_topic.items()])
        resp = self._to_controller(ApiKey.AlterPartitionReassignments, build,
                                   lambda r: r.error_code == ErrorCode.NOT_CONTROLLER)
        check_error(resp.error_code, resp.error_message)
        return {(t.name, p.partition_index): None if p.error_code == ErrorCode.NONE else
                ApiError(p.error_code, p.error_message) for t in resp.responses for p in t.partitions}

    def describe_log_dirs(self, node: int) -> dict[tuple[str, int], int]:
        """DescribeLogDirs (API 35) on one broker: the size in bytes of each replica it holds."""
        self._require(ApiKey.DescribeLogDirs, node)
        resp = self.client.call(ApiKey.DescribeLogDirs, lambda cls, v: cls(topics=None), node=node)
        check_error(getattr(resp, "error_code", 0))
        return {(t.name, p.partition_index): p.partition_size
                for d in resp.results if d.error_code == ErrorCode.NONE for t in d.topics for p in t.partitions
                if not p.is_future_key}

    def failed_log_dirs(self, node: int) -> list[str]:
        """DescribeLogDirs on one broker: its log dirs that answer KAFKA_STORAGE_ERROR (offline, KIP-112)."""
        self._require(ApiKey.DescribeLogDirs, node)
        resp = self.client.call(ApiKey.DescribeLogDirs, lambda cls, v: cls(topics=[]), node=node)
        check_error(getattr(resp, "error_code", 0))
        return sorted(d.log_dir for d in resp.results if d.error_code == ErrorCode.KAFKA_STORAGE_ERROR)

    # ------------------------------------------------------------------ topics

    def create_topic(self, name: str, partitions: int | None, replication_factor: int | None,
                     assignment: Mapping[int, Sequence[int]] | None, configs: Mapping[str, str]) -> None:
        """CreateTopics for one topic (-1 partitions/RF: the broker's defaults)."""
        def build(cls: type, v: int) -> ApiMessage:
            topic = cls.CreatableTopic(
                name=name, num_partitions=-1 if partitions is None else partitions,
                replication_factor=-1 if replication_factor is None else replication_factor,
                assignments=[cls.CreatableTopic.CreatableReplicaAssignment(partition_index=p, broker_ids=list(r))
                             for p, r in sorted((assignment or {}).items())],
                configs=[cls.CreatableTopic.CreatableTopicConfig(name=k, value=val) for k, val in configs.items()])
            return cls(topics=[topic], timeout_ms=self.timeout_ms, validate_only=False)
        resp = self._to_controller(ApiKey.CreateTopics, build,
                                   lambda r: r.topics[0].error_code == ErrorCode.NOT_CONTROLLER)
        check_error(resp.topics[0].error_code, resp.topics[0].error_message)

    def delete_topics(self, names: Sequence[str]) -> None:
        """DeleteTopics; the first per-topic error is raised (after the others were attempted)."""
        def build(cls: type, v: int) -> ApiMessage:
            if v >= 6:
                return cls(topics=[cls.DeleteTopicState(name=n) for n in names], timeout_ms=self.timeout_ms)
            return cls(topic_names=list(names), timeout_ms=self.timeout_ms)
        resp = self._to_controller(ApiKey.DeleteTopics, build, lambda r: any(
            t.error_code == ErrorCode.NOT_CONTROLLER for t in r.responses))
        for t in resp.responses:
            check_error(t.error_code, getattr(t, "error_message", None))

    def create_partitions(self, increases: Mapping[str, tuple[int, list[list[int]] | None]]) -> None:
        """CreatePartitions: topic -> (new total count, replicas of the new partitions or None)."""
        def build(cls: type, v: int) -> ApiMessage:
            return cls(topics=[cls.CreatePartitionsTopic(
                name=n, count=count, assignments=None if a is None else
                [cls.CreatePartitionsTopic.CreatePartitionsAssignment(broker_ids=r) for r in a])
                for n, (count, a) in increases.items()], timeout_ms=self.timeout_ms, validate_only=False)
        resp = self._to_controller(ApiKey.CreatePartitions, build, lambda r: any(
            t.error_code == ErrorCode.NOT_CONTROLLER for t in r.results))
        for t in resp.results:
            check_error(t.error_code, t.error_message)

    # ------------------------------------------------------------------ configs

    def describe_configs(self, resources: Sequence[tuple[int, str]], include_synonyms: bool = False
                         ) -> dict[tuple[int, str], list[DescribedConfig]]:
        """DescribeConfigs; a broker's own configs are asked of that broker (Admin routes them there)."""
        by_node: dict[int | None, list[tuple[int, str]]] = {}
        for rtype, name in resources:
            node = int(name) if rtype == BROKER_RESOURCE and name else None
            by_node.setdefault(node, []).append((rtype, name))
        out: dict[tuple[int, str], list[DescribedConfig]] = {}
        for node, group in by_node.items():
            def build(cls: type, v: int, group: list[tuple[int, str]] = group) -> ApiMessage:
                return cls(resources=[cls.DescribeConfigsResource(resource_type=t, resource_name=n,
                                                                  configuration_keys=None) for t, n in group],
                           include_synonyms=include_synonyms, include_documentation=False)
            if node is not None:
                self.client.refresh_metadata(topics=[])
                if node not in self.client.brokers:
                    raise ApiError(ErrorCode.BROKER_NOT_AVAILABLE, f"Broker {node} is not available.")
            resp = self.client.call(ApiKey.DescribeConfigs, build, node=node)
            for r in resp.results:
                check_error(r.error_code, r.error_message)
                out[(r.resource_type, r.resource_name)] = [DescribedConfig(
                    c.name, c.value, ConfigSource(c.config_source) if hasattr(c, "config_source") else
                    (ConfigSource.DEFAULT_CONFIG if c.is_default else ConfigSource.UNKNOWN),
                    bool(c.is_sensitive), bool(c.read_only),
                    tuple((s.name, s.value, ConfigSource(s.source)) for s in (getattr(c, "synonyms", None) or ())))
                    for c in r.configs]
        return out

    def incremental_alter_configs(self, rtype: int, name: str, set_: Mapping[str, str],
                                  delete: Iterable[str]) -> None:
        """IncrementalAlterConfigs (API 44) of one resource: SET and DELETE operations."""
        node = int(name) if rtype == BROKER_RESOURCE and name else None
        self._require(ApiKey.IncrementalAlterConfigs, node)

        def build(cls: type, v: int) -> ApiMessage:
            ops = [cls.AlterConfigsResource.AlterableConfig(name=k, config_operation=OP_SET, value=val)
                   for k, val in set_.items()]
            ops += [cls.AlterConfigsResource.AlterableConfig(name=k, config_operation=OP_DELETE, value=None)
                    for k in delete]
            return cls(resources=[cls.AlterConfigsResource(resource_type=rtype, resource_name=name, configs=ops)],
                       validate_only=False)
        resp = self.client.call(ApiKey.IncrementalAlterConfigs, build, node=node)
        for r in resp.responses:
            check_error(r.error_code, r.error_message)

    # ------------------------------------------------------------------ leader election

    def elect_leaders(self, election_type: int, partitions: Iterable[tuple[str, int]] | None
                      ) -> dict[tuple[str, int], ApiError | None]:
        """ElectLeaders (API 43) at the controller: per partition None (elected) or its error."""
        wanted: dict[str, list[int]] | None = None
        if partitions is not None:
            wanted = {}
            for t, p in partitions:
                wanted.setdefault(t, []).append(p)

        def build(cls: type, v: int) -> ApiMessage:
            tps = None if wanted is None else [cls.TopicPartitions(topic=t, partitions=sorted(ps))
                                               for t, ps in wanted.items()]
            if v == 0 and election_type != PREFERRED:
                raise ApiError(ErrorCode.UNSUPPORTED_VERSION, "The broker only supports preferred elections")
            return cls(election_type=election_type, topic_partitions=tps, timeout_ms=self.timeout_ms)
        resp = self._to_controller(ApiKey.ElectLeaders, build,
                                   lambda r: getattr(r, "error_code", 0) == ErrorCode.NOT_CONTROLLER)
        check_error(getattr(resp, "error_code", 0))
        return {(t.topic, p.partition_id): None if p.error_code == ErrorCode.NONE else
                ApiError(p.error_code, p.error_message)
                for t in resp.replica_election_results for p in t.partition_result}

    # ------------------------------------------------------------------ records

    def delete_records(self, offsets: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int | ApiError]:
        """DeleteRecords (API 21) at each partition's leader: per partition its low watermark or its error."""
        meta = self.metadata(sorted({t for t, _ in offsets}))
        out: dict[tuple[str, int], int | ApiError] = {}
        by_leader: dict[int, dict[str, list[tuple[int, int]]]] = {}
        for (t, p), offset in offsets.items():
            part = meta.topics[t].partitions.get(p) if t in meta.topics else None
            if part is None:
                out[(t, p)] = ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif part.leader is None:
                out[(t, p)] = ApiError(ErrorCode.LEADER_NOT_AVAILABLE)
            else:
                by_leader.setdefault(part.leader, {}).setdefault(t, []).append((p, offset))
        for leader, topics in by_leader.items():
            self._require(ApiKey.DeleteRecords, leader)

            def build(cls: type, v: int, topics: dict[str, list[tuple[int, int]]] = topics) -> ApiMessage:
                return cls(timeout_ms=self.timeout_ms, topics=[cls.DeleteRecordsTopic(name=t, partitions=[
                    cls.DeleteRecordsTopic.DeleteRecordsPartition(partition_index=p, offset=o) for p, o in ps])
                    for t, ps in topics.items()])
            resp = self.client.call(ApiKey.DeleteRecords, build, node=leader)
            for t in resp.topics:
                for p in t.partitions:
                    out[(t.name, p.partition_index)] = (p.low_watermark if p.error_code == ErrorCode.NONE
                                                        else ApiError(p.error_code))
        return out

    # ------------------------------------------------------------------ log dirs

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, int], str]
                               ) -> dict[tuple[str, int, int], ApiError | None]:
        """AlterReplicaLogDirs (API 34) at each replica's broker: per (topic, partition, broker) None or its error."""
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
        for (t, p, b), path in moves.items():
            by_broker.setdefault(b, {}).setdefault(path, {}).setdefault(t, []).append(p)
        out: dict[tuple[str, int, int], ApiError | None] = {}
        for broker, dirs in sorted(by_broker.items()):
            self._require(ApiKey.AlterReplicaLogDirs, broker)

            def build(cls: type, v: int, dirs: dict[str, dict[str, list[int]]] = dirs) -> ApiMessage:
                d_cls = cls.AlterReplicaLogDir
                return cls(dirs=[d_cls(path=path, topics=[d_cls.AlterReplicaLogDirTopic(name=t, partitions=ps)
                                                          for t, ps in topics.items()])
                                 for path, topics in dirs.items()])
            resp = self.client.call(ApiKey.AlterReplicaLogDirs, build, node=broker)
            for t in resp.results:
                for p in t.partitions:
                    out[(t.topic_name, p.partition_index, broker)] = (
                        None if p.error_code == ErrorCode.NONE else ApiError(p.error_code))
        return out

    def replica_log_dirs(self, replicas: Iterable[tuple[str, int, int]]
                         ) -> dict[tuple[str, int, int], tuple[str | None, str | None]]:
        """describeReplicaLogDirs: (current dir, future dir) of each (topic, partition, broker) found."""
        by_broker: dict[int, dict[str, list[int]]] = {}
        for t, p, b in replicas:
            by_broker.setdefault(b, {}).setdefault(t, []).append(p)
        out: dict[tuple[str, int, int], tuple[str | None, str | None]] = {}
        for broker, topics in sorted(by_broker.items()):
            self._require(ApiKey.DescribeLogDirs, broker)

            def build(cls: type, v: int, topics: dict[str, list[int]] = topics) -> ApiMessage:
                return cls(topics=[cls.DescribableLogDirTopic(topic=t, partitions=ps) for t, ps in topics.items()])
            resp = self.client.call(ApiKey.DescribeLogDirs, build, node=broker)
            for d in resp.results:
                for t in d.topics if d.error_code == ErrorCode.NONE else ():
                    for p in t.partitions:
                        current, future = out.get((t.name, p.partition_index, broker), (None, None))
                        out[(t.name, p.partition_index, broker)] = ((current, d.log_dir) if p.is_future_key
                                                                    else (d.log_dir, future))
        return out
