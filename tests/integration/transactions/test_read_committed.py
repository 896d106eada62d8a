"""Markers written through WriteTxnMarkers, read by stock consumers: read_committed (librdkafka's
default) sees committed records only, never past the last stable offset; read_uncommitted sees all.

Transactional batches are produced by hand here, bypassing the transaction coordinator, and
markers are sent as the coordinator would send them.
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


@pytest.fixture
def cluster(cluster_factory):
    """One broker whose leaders do not ask the coordinator about transactional batches (KIP-890 part 1):
    these batches belong to no transaction the coordinator knows."""
    return cluster_factory(1, overrides={"transaction.partition.verification.enable": "false"})


def _produce(client: KafkaClient, raw: bytes, transactional_id: str | None = "app") -> int:
    def build(cls, v):
        part = cls.TopicProduceData.PartitionProduceData(index=0, records=raw)
        return cls(transactional_id=transactional_id, acks=-1, timeout_ms=10000,
                   topic_data=[cls.TopicProduceData(name="t", partition_data=[part])])
    resp = client.call(ApiKey.Produce, build, node=0, max_version=8)
    return resp.responses[0].partition_responses[0].error_code


def _txn(pid: int, value: bytes, sequence: int = 0) -> bytes:
    """One transactional batch of one record at `sequence` (a producer's batches go on 0, 1, 2, ...)."""
    return build_batch([(None, value, (), None)], producer_id=pid, producer_epoch=0, base_sequence=sequence,
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


COMMITTED = [b"committed", b"plain", b"again-committed"]
EVERYTHING = [b"aborted", b"committed", b"plain", b"again-aborted", b"again-committed", b"open"]


def _layout(cluster) -> None:
    """0 aborted (5000) | 1 ABORT | 2 committed (5001) | 3 COMMIT | 4 plain | 5 again-aborted (5001) | 6 ABORT |
    7 again-committed (5001) | 8 COMMIT | 9 open (5002, never ended): the LSO is 9."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("t", num_partitions=1, replication_factor=1)])["t"].result(60)
    with KafkaClient(cluster.bootstrap) as client:
        client.refresh_metadata(["t"])
        steps = [(5000, b"aborted", False), (5001, b"committed", True), (None, b"plain", None),
                 (5001, b"again-aborted", False), (5001, b"again-committed", True), (5002, b"open", None)]
        sequences: dict[int, int] = {}
        for pid, value, commit in steps:
            seq = sequences[pid] = sequences.get(pid, -1) + 1
            raw = build_batch([(None, value, (), None)]) if pid is None else _txn(pid, value, seq)
            assert _produce(client, raw, None if pid is None else "app") == ErrorCode.NONE
            if commit is not None:
                assert _markers(client, pid, commit) == ErrorCode.NONE
        # A client may not write markers itself.
        assert _produce(client, build_marker(Marker(5002, 0, ControlType.COMMIT, 0))) == ErrorCode.INVALID_RECORD


def test_committed_records_only_under_read_committed(cluster):
    _layout(cluster)
    values, (low, high) = _consume(cluster.bootstrap, 3)
    assert values == COMMITTED  # librdkafka's default isolation; one producer's abort between its commits
    assert (low, high) == (0, 9)  # the last stable offset: producer 5002's transaction holds it at 9

    values, (low, high) = _consume(cluster.bootstrap, 6, **{"isolation.level": "read_uncommitted"})
    assert values == EVERYTHING
    assert high == 10


def test_kafka_python_and_aiokafka_read_committed(cluster):
    import asyncio

    import aiokafka
    import kafka

    _layout(cluster)
    for isolation, expected in (("read_committed", COMMITTED), ("read_uncommitted", EVERYTHING)):
        cons = kafka.KafkaConsumer(bootstrap_servers=cluster.bootstrap, enable_auto_commit=False,
                                   isolation_level=isolation, consumer_timeout_ms=4000)
        tp = kafka.TopicPartition("t", 0)
        cons.assign([tp])
        cons.seek_to_beginning(tp)
        assert [m.value for m in cons] == expected, isolation
        cons.close()

    async def aio(isolation):
        cons = aiokafka.AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap, enable_auto_commit=False,
                                         isolation_level=isolation)
        await cons.start()
        try:
            tp = aiokafka.TopicPartition("t", 0)
            cons.assign([tp])
            await cons.seek_to_beginning(tp)
            got, quiet = [], 0
            while quiet < 3:
                batch = await asyncio.wait_for(cons.getmany(tp, timeout_ms=700), 15)
                got += [m.value for m in batch.get(tp, [])]
                quiet = quiet + 1 if not batch else 0
            return got, await cons.end_offsets([tp])
        finally:
            await cons.stop()
    got, end = asyncio.run(aio("read_committed"))
    assert got == COMMITTED and list(end.values()) == [9]
    got, end = asyncio.run(aio("read_uncommitted"))
    assert got == EVERYTHING and list(end.values()) == [10]


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
        # t-1 is named here but not on the broker: a leader that does not host it yet, as after a restart.
        topics = {"t": {0: PartitionInfo("t", 0, 0, 0, [0], [0]), 1: PartitionInfo("t", 1, 0, 0, [0], [0])}}

    async def run():
        channel = TxnMarkerChannel(9, Metadata())
        try:
            first = await channel.write(7000, 0, 0, True, frozenset({("t", 0), ("gone", 0), ("t", 5), ("t", 1)}))
            second = await channel.write(7001, 0, 0, False, frozenset({("t", 0)}))
        finally:
            await channel.close()
        return first, second
    first, second = asyncio.run(run())
    # Gone from this broker's metadata: done, as Kafka skips deleted partitions; unknown to the leader: retried.
    assert first == {("t", 0): ErrorCode.NONE, ("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                     ("t", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("t", 1): ErrorCode.NOT_LEADER_OR_FOLLOWER}
    assert second == {("t", 0): ErrorCode.NONE}
    values, (_, high) = _consume(cluster.bootstrap, 1)
    assert values == [b"yes"] and high == 4
