"""Kafka 3.9 versions no client in reach sends, as wire requests built from Kafka's schemas.

Produce v11 and Fetch v12-17 answer a broker that does not lead the partition with the current leader and
(Fetch v16+, Produce v10+) its endpoint (KIP-951); Fetch v13+ names topics by id (KIP-516); Fetch v12+
reports a diverging epoch instead of records when the fetcher's last fetched epoch ended earlier on the
leader (KIP-320); ListOffsets v8 answers the earliest-local spec.
"""

from __future__ import annotations

import uuid

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.protocol.records import build_batch
from support.clients import create_topic, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def _produce(k: KafkaClient, node: int, n: int, first: int, version: int = 11):
    """A Produce of n records (acks=-1) at `version` to `node`; the partition's response and the response."""
    records = build_batch([(None, f"r{first + i}".encode(), (), None) for i in range(n)])
    resp = k.call(ApiKey.Produce, lambda cls, v: cls(transactional_id=None, acks=-1, timeout_ms=20000, topic_data=[
        cls.TopicProduceData(name="w39", partition_data=[cls.TopicProduceData.PartitionProduceData(
            index=0, records=records)])]), node=node, max_version=version)
    return resp.responses[0].partition_responses[0], resp


def _fetch(k: KafkaClient, node: int, version: int, topic_id: uuid.UUID, offset: int, last_epoch: int = -1,
           name: str = "w39"):
    """One partition's Fetch answer at exactly `version` and the response (topics by name below v13)."""
    def build(cls, v):
        assert v == version
        fp = cls.FetchTopic.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=offset,
                                           last_fetched_epoch=last_epoch, log_start_offset=-1,
                                           partition_max_bytes=1 << 20)
        topic = cls.FetchTopic(topic=name, topic_id=topic_id, partitions=[fp])
        return cls(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0, session_id=0,
                   session_epoch=-1, topics=[topic], forgotten_topics_data=[], rack_id="")
    resp = k.call(ApiKey.Fetch, build, node=node, max_version=version)
    assert resp.error_code == 0
    return resp.responses[0].partitions[0], resp


def _topic_id(k: KafkaClient, name: str = "w39") -> uuid.UUID:
    md = k.call(ApiKey.Metadata, lambda cls, v: cls(topics=[cls.MetadataRequestTopic(name=name)],
                                                    allow_auto_topic_creation=False), max_version=12)
    return md.topics[0].topic_id


def _create_on(k: KafkaClient, name: str, broker: int) -> None:
    """A one-partition topic whose only replica is on `broker`."""
    resp = k.call(ApiKey.CreateTopics, lambda cls, v: cls(topics=[cls.CreatableTopic(
        name=name, num_partitions=-1, replication_factor=-1, configs=[],
        assignments=[cls.CreatableTopic.CreatableReplicaAssignment(partition_index=0, broker_ids=[broker])])],
        timeout_ms=30000, validate_only=False))
    assert resp.topics[0].error_code == 0, resp.topics[0]


def test_fetch_and_produce_at_kafka_39_versions(cluster_factory):
    c = cluster_factory(2)
    create_topic(c.bootstrap, "w39", rf=2)
    view = wait_for(lambda: (v := partitions(c.bootstrap, "w39")[0]) and len(v.isr) == 2 and v, 30, "full ISR")
    leader, follower = view.leader, next(b for b in view.replicas if b != view.leader)
    with KafkaClient(c.bootstrap) as k:
        k.refresh_metadata()
        tid = _topic_id(k)
        part, _ = _produce(k, leader, 5, 0)
        assert (part.error_code, part.base_offset) == (0, 0)
        # KIP-951: the follower names the leader, and from Produce v10 / Fetch v16 how to reach it
        part, resp = _produce(k, follower, 1, 99)
        assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (leader, view.leader_epoch)
        host, port, _ = k.brokers[leader]
        assert [(n.node_id, n.host, n.port) for n in resp.node_endpoints] == [(leader, host, port)]
        # A consumer's v11+ fetch is served by a follower too (KIP-392, Kafka's fetchOnlyLeader); a broker that
        # holds no replica of the partition answers NOT_LEADER_OR_FOLLOWER and names the leader.
        _create_on(k, "w39one", leader)
        one = wait_for(lambda: _topic_id(k, "w39one"), 30, "w39one's topic id")
        k.refresh_metadata()
        for version in (12, 16):
            part, resp = _fetch(k, follower, version, one, 0, name="w39one")
            assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert part.current_leader.leader_id == leader
            assert [n.node_id for n in resp.node_endpoints or []] == ([leader] if version >= 16 else [])
        # KIP-516: topics by id from v13 (v14 tiered storage, v15 replica state, v17 directory id: same answer)
        for version in range(12, 18):
            part, resp = _fetch(k, leader, version, tid, 0)
            assert part.error_code == 0 and part.high_watermark == 5 and len(part.records) > 0, version
            if version >= 13:
                assert resp.responses[0].topic_id == tid
        part, _ = _fetch(k, leader, 13, uuid.uuid4(), 0)
        assert part.error_code == ErrorCode.UNKNOWN_TOPIC_ID
        offsets = k.call(ApiKey.ListOffsets, lambda cls, v: cls(replica_id=-1, isolation_level=0, topics=[
            cls.ListOffsetsTopic(name="w39", partitions=[cls.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=0, current_leader_epoch=-1, timestamp=-4)])]), node=leader, max_version=8)
        assert offsets.topics[0].partitions[0].offset == 0  # EARLIEST_LOCAL: the log start offset

    # KIP-320: the leader moves (epoch + 1) and writes on; a fetcher that last saw epoch 0 past its end diverges
    c.stop([leader])
    wait_for(lambda: partitions(c.bootstrap, "w39")[0].leader == follower, 30, "the follower leads")
    with KafkaClient(c.bootstrap) as k:
        k.refresh_metadata()
        part, _ = _produce(k, follower, 5, 5)
        assert (part.error_code, part.base_offset) == (0, 5)
        epoch = partitions(c.bootstrap, "w39")[0].leader_epoch
        assert epoch > view.leader_epoch
        part, _ = _fetch(k, follower, 12, tid, 8, last_epoch=view.leader_epoch)
        assert part.error_code == 0 and not part.records
        assert (part.diverging_epoch.epoch, part.diverging_epoch.end_offset) == (view.leader_epoch, 5)
        part, _ = _fetch(k, follower, 17, tid, 8, last_epoch=epoch)
        assert part.error_code == 0 and part.records and part.diverging_epoch is None
        part, _ = _fetch(k, follower, 12, tid, 8, last_epoch=epoch + 5)  # an epoch the leader never had
        assert part.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
