"""Markers written through WriteTxnMarkers, read by stock consumers: read_committed (librdkafka's
default) sees committed records only, never past the last stable offset; read_uncommitted sees all.

Transactional batches are produced by hand here (the transaction coordinator is not wired yet),
and markers are sent as the coordinator would send them.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pylog.client.sync import KafkaClient
from pylog.log.control import ControlType, Marker, build_marker
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.protocol.records import build_batch

pytestmark = pytest.mark.integration


def _produce(client: KafkaClient, raw: bytes, transactional_id: str | None = "app") -> int:
    def build(cls, v):
        part = cls.TopicProduceData.PartitionProduceData(index=0, records=raw)
        return cls(transactional_id=transactional_id, acks=-1, timeout_ms=10000,
                   topic_data=[cls.TopicProduceData(name="t", partition_data=[part])])
    resp = client.call(ApiKey.Produce, build, node=0, max_version=8)
    return resp.responses[0].partition_responses[0].error_code


def _txn(pid: int, value: bytes) -> bytes:
    return build_batch([(None, value, (), None)], producer_id=pid, producer_epoch=0, base_sequence=0,
                       is_transactional=True)


def _markers(client: KafkaClient, pid: int, commit: bool) -> int:
    def build(cls, v):
        topic = cls.WritableTxnMarker.WritableTxnMarkerTopic(name="t", partition_indexes=[0])
        return cls(markers=[cls.WritableTxnMarker(producer_id=pid, producer_epoch=0, transaction_result=commit,
                                                  topics=[topic], coordinator_epoch=0)])
    resp = client.call(ApiKey.WriteTxnMarkers, build, node=0)
    return resp.markers[0].topics[0].partitions[0].error_code


def _consume(bootstrap: str, n_expected: int, **conf) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False, **conf})
    try:
        c.assign([TopicPartition("t", 0, 0)])
        out: list[bytes] = []
        for _ in range(40):
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                out.append(m.value())
            if len(out) >= n_expected and m is None:
                break
        low_high = c.get_watermark_offsets(TopicPartition("t", 0), timeout=10, cached=False)
        return out, low_high
    finally:
        c.close()


def test_committed_records_only_under_read_committed(cluster):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("t", num_partitions=1, replication_factor=1)])["t"].result(60)
    with KafkaClient(cluster.bootstrap) as client:
        client.refresh_metadata(["t"])
        assert _produce(client, _txn(5000, b"aborted")) == ErrorCode.NONE                    # 0
        assert _markers(client, 5000, commit=False) == ErrorCode.NONE                          # 1
        assert _produce(client, _txn(5001, b"committed")) == ErrorCode.NONE                  # 2
        assert _markers(client, 5001, commit=True) == ErrorCode.NONE                           # 3
        assert _produce(client, build_batch([(None, b"plain", (), None)]), None) == ErrorCode.NONE  # 4
        assert _produce(client, _txn(5002, b"open")) == ErrorCode.NONE                       # 5, never ended
        # A client may not write markers itself.
        assert _produce(client, build_marker(Marker(5002, 0, ControlType.COMMIT, 0))) == ErrorCode.INVALID_RECORD

    values, (low, high) = _consume(cluster.bootstrap, 2)
    assert values == [b"committed", b"plain"]
    assert (low, high) == (0, 5)  # the last stable offset: producer 5002's transaction holds it at 5

    values, (low, high) = _consume(cluster.bootstrap, 4, **{"isolation.level": "read_uncommitted"})
    assert values == [b"aborted", b"committed", b"plain", b"open"]
    assert high == 6


def test_the_marker_channel_reaches_the_leader(cluster):
    """The coordinator's channel (run here, against the real broker) commits one transaction and aborts another."""
    import asyncio

    from pylog.broker.metadata_cache import BrokerEndpoint, PartitionInfo
    from pylog.broker.txn_markers import TxnMarkerChannel

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("t", num_partitions=1, replication_factor=1)])["t"].result(60)
    host, port = cluster.bootstrap.split(",")[0].rsplit(":", 1)
    with KafkaClient(cluster.bootstrap) as client:
        client.refresh_metadata(["t"])
        assert _produce(client, _txn(7000, b"yes")) == ErrorCode.NONE
        assert _produce(client, _txn(7001, b"no")) == ErrorCode.NONE

    class Metadata:
        brokers = {0: BrokerEndpoint(0, host, int(port))}
        topics = {"t": {0: PartitionInfo("t", 0, 0, 0, [0], [0])}}

    async def run():
        channel = TxnMarkerChannel(9, Metadata())
        try:
            first = await channel.write(7000, 0, 0, True, frozenset({("t", 0), ("gone", 0), ("t", 5)}))
            second = await channel.write(7001, 0, 0, False, frozenset({("t", 0)}))
        finally:
            await channel.close()
        return first, second
    first, second = asyncio.run(run())
    assert first == {("t", 0): ErrorCode.NONE, ("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                     ("t", 5): ErrorCode.NOT_LEADER_OR_FOLLOWER}
    assert second == {("t", 0): ErrorCode.NONE}
    values, (_, high) = _consume(cluster.bootstrap, 1)
    assert values == [b"yes"] and high == 4
