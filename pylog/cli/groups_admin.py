"""What pylog-consumer-groups needs from Kafka's Admin client: list, describe, offsets, end offsets, delete.

Group requests go to the group's coordinator (FindCoordinator first, retried while the coordinator
is loading or `__consumer_offsets` is being created); ListGroups goes to every broker, as Admin does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable

from pylog.cli.admin_client import ApiError, BrokerAdmin
from pylog.coordinator.group.group import consumer_assignment
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode

_RETRIABLE = {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR}
_RETRIES, _BACKOFF_S = 20, 0.25
LATEST, EARLIEST = -1, -2  # ListOffsets timestamps


@dataclass(frozen=True)
class Member:
    """A group member as DescribeGroups reports it, with its decoded assignment."""

    member_id: str
    instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Group:
    """A described group."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str = ""
    coordinator: str = ""  # Kafka's "host:port (id)"
    members: tuple[Member, ...] = field(default_factory=tuple)


class GroupAdmin:
    """Group operations through a BrokerAdmin's connections."""

    def __init__(self, admin: BrokerAdmin) -> None:
        self.admin = admin
        self.client = admin.client

    def _retry(self, fn, *args):
        for attempt in range(_RETRIES):
            try:
                return fn(*args)
            except ApiError as exc:
                if exc.code not in _RETRIABLE or attempt == _RETRIES - 1:
                    raise
                time.sleep(_BACKOFF_S)
        raise AssertionError("unreachable")

    def list_groups(self, states: Iterable[str] = ()) -> list[tuple[str, str]]:
        """(group id, state) of every group on every broker, sorted."""
        self.client.refresh_metadata(topics=[])
        out: dict[str, str] = {}
        for node in sorted(self.client.brokers):
            resp = self.client.call(ApiKey.ListGroups, lambda cls, v: cls(states_filter=list(states), types_filter=[]),
                                    node=node)
            if resp.error_code != ErrorCode.NONE:
                raise ApiError(resp.error_code)
            for g in resp.groups:
                out[g.group_id] = getattr(g, "group_state", "") or ""
        return sorted(out.items())

    def coordinator(self, group: str) -> int:
        """The node id of the group's coordinator."""
        return self.find_coordinator(group)[0]

    def find_coordinator(self, group: str) -> tuple[int, str]:
        """The node id of the group's coordinator and Kafka's "host:port (id)" for it."""
        def find() -> tuple[int, str]:
            resp = self.client.call(ApiKey.FindCoordinator, lambda cls, v: cls(
                key=group, key_type=0, coordinator_keys=[group]))
            c = resp.coordinators[0] if getattr(resp, "coordinators", None) else resp
            if c.error_code != ErrorCode.NONE:
                raise ApiError(c.error_code, c.error_message)
            self.client.refresh_metadata(topics=[])
            return c.node_id, f"{c.host}:{c.port} ({c.node_id})"
        return self._retry(find)

    def describe(self, group: str) -> Group:
        """DescribeGroups at the coordinator."""
        def ask() -> Group:
            node, where = self.find_coordinator(group)
            modern = self._consumer_group(group, node, where)
            if modern is not None:
                return modern
            g = self.client.call(ApiKey.DescribeGroups, lambda cls, v: cls(
                groups=[group], include_authorized_operations=False), node=node).groups[0]
            if g.error_code != ErrorCode.NONE:
                raise ApiError(g.error_code)
            consumer = g.protocol_type in ("consumer", "")
            return Group(group, g.group_state, g.protocol_type, g.protocol_data, where, tuple(Member(
                m.member_id, getattr(m, "group_instance_id", None), m.client_id, m.client_host,
                tuple(consumer_assignment(bytes(m.member_assignment))) if consumer else ())
                for m in g.members))
        return self._retry(ask)

    def _consumer_group(self, group: str, node: int, where: str) -> Group | None:
        """ConsumerGroupDescribe (KIP-848) first, as Kafka 4.0's Admin does; None for a classic group (the
        coordinator answers GROUP_ID_NOT_FOUND) or a coordinator that does not serve the API."""
        if not self.admin.supports(ApiKey.ConsumerGroupDescribe, node):
            return None
        g = self.client.call(ApiKey.ConsumerGroupDescribe, lambda cls, v: cls(
            group_ids=[group], include_authorized_operations=False), node=node).groups[0]
        if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND:
            return None
        if g.error_code != ErrorCode.NONE:
            raise ApiError(g.error_code)
        return Group(group, g.group_state, "consumer", g.assignor_name, where, tuple(Member(
            m.member_id, m.instance_id, m.client_id, m.client_host,
            tuple(sorted((t.topic_name, p) for t in m.assignment.topic_partitions for p in t.partitions)))
            for m in g.members))

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """Every committed offset of the group (OffsetFetch with null topics)."""
        def ask() -> dict[tuple[str, int], int]:
            node = self.coordinator(group)
            resp = self.client.call(ApiKey.OffsetFetch, lambda cls, v: cls(
                group_id=group, topics=None, require_stable=False), node=node, max_version=7)
            if resp.error_code != ErrorCode.NONE:
                raise ApiError(resp.error_code)
            return {(t.name, p.partition_index): p.committed_offset for t in resp.topics for p in t.partitions
                    if p.error_code == ErrorCode.NONE and p.committed_offset >= 0}
        return self._retry(ask)

    def end_offsets(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The high watermark of each partition (ListOffsets latest at its leader); unknown ones are left out."""
        return self.list_offsets(partitions, LATEST)

    def list_offsets(self, partitions: Iterable[tuple[str, int]], timestamp: int) -> dict[tuple[str, int], int]:
        """ListOffsets at each partition's leader: -1 latest (high watermark), -2 earliest, else the first
        offset at or after a timestamp (-1 when there is none). Partitions without a leader are left out."""
        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        md = self.admin.metadata(sorted({t for t, _ in wanted}))
        by_leader: dict[int, dict[str, list[int]]] = {}
        for t, p in wanted:
            pm = md.topics[t].partitions.get(p) if t in md.topics else None
            if pm is not None and pm.leader is not None:
                by_leader.setdefault(pm.leader, {}).setdefault(t, []).append(p)
        out: dict[tuple[str, int], int] = {}
        for leader, topics in by_leader.items():
            def build(cls, v, topics=topics):
                T = cls.ListOffsetsTopic
                return cls(replica_id=-1, isolation_level=0, topics=[T(name=t, partitions=[
                    T.ListOffsetsPartition(partition_index=p, current_leader_epoch=-1, timestamp=timestamp)
                    for p in ps]) for t, ps in topics.items()])
            resp = self.client.call(ApiKey.ListOffsets, build, node=leader)
            for t in resp.topics:
                for p in t.partitions:
                    if p.error_code == ErrorCode.NONE:
                        out[(t.name, p.partition_index)] = p.offset
        return out

    def partitions_of(self, topics: Iterable[str]) -> list[tuple[str, int]]:
        """Every partition of the topics; raises ApiError for a topic that does not exist."""
        names = sorted(set(topics))
        md = self.admin.metadata(names)
        missing = [t for t in names if t not in md.topics]
        if missing:
            raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {', '.join(missing)} does not exist.")
        return [(t, p) for t in names for p in sorted(md.topics[t].partitions)]

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        """OffsetCommit as an admin (generation -1, no member): only accepted while the group is Empty."""
        topics: dict[str, list[tuple[int, int]]] = {}
        for (t, p), off in sorted(offsets.items()):
            topics.setdefault(t, []).append((p, off))

        def build(cls, v):
            T = cls.OffsetCommitRequestTopic
            return cls(group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                       retention_time_ms=-1, topics=[T(name=t, partitions=[T.OffsetCommitRequestPartition(
                           partition_index=p, committed_offset=off, committed_leader_epoch=-1, commit_timestamp=-1,
                           committed_metadata="") for p, off in ps]) for t, ps in topics.items()])

        def ask() -> None:
            resp = self.client.call(ApiKey.OffsetCommit, build, node=self.coordinator(group), max_version=8)
            for t in resp.topics:
                for p in t.partitions:
                    if p.error_code != ErrorCode.NONE:
                        raise ApiError(p.error_code)
        self._retry(ask)

    def delete_offsets(self, group: str, partitions: list[tuple[str, int]]
                       ) -> tuple[ErrorCode, dict[tuple[str, int], ErrorCode]]:
        """OffsetDelete: the group-level error and one per partition."""
        topics: dict[str, list[int]] = {}
        for t, p in partitions:
            topics.setdefault(t, []).append(p)

        def build(cls, v):
            T = cls.OffsetDeleteRequestTopic
            return cls(group_id=group, topics=[T(name=t, partitions=[T.OffsetDeleteRequestPartition(
                partition_index=p) for p in ps]) for t, ps in topics.items()])

        def ask() -> tuple[ErrorCode, dict[tuple[str, int], ErrorCode]]:
            resp = self.client.call(ApiKey.OffsetDelete, build, node=self.coordinator(group))
            if resp.error_code in _RETRIABLE:
                raise ApiError(resp.error_code)
            return ErrorCode(resp.error_code), {(t.name, p.partition_index): ErrorCode(p.error_code)
                                                for t in resp.topics for p in t.partitions}
        return self._retry(ask)

    def delete(self, group: str) -> ErrorCode:
        """DeleteGroups for one group at its coordinator."""
        def ask() -> ErrorCode:
            node = self.coordinator(group)
            r = self.client.call(ApiKey.DeleteGroups, lambda cls, v: cls(groups_names=[group]), node=node).results[0]
            if r.error_code in _RETRIABLE:
                raise ApiError(r.error_code)
            return ErrorCode(r.error_code)
        return self._retry(ask)
