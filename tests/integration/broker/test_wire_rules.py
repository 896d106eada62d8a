"""Protocol rules real clients depend on, checked against a running broker over raw sockets."""

from __future__ import annotations

import struct
import time

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol import records
from pylog.protocol.api import ApiKey
from pylog.protocol.codec import decode_response, encode_request
from pylog.protocol.api import request_class
from pylog.protocol.errors import ErrorCode
from support.clients import create_topic, kcat
from support.wire import connect, read_frame

pytestmark = pytest.mark.integration


def _produce(k: KafkaClient, topic: str, batch: bytes, acks: int = 1):
    return k.call(ApiKey.Produce, lambda cls, v: cls(transactional_id=None, acks=acks, timeout_ms=5000, topic_data=[
        cls.TopicProduceData(name=topic, partition_data=[cls.TopicProduceData.PartitionProduceData(
            index=0, records=batch)])]), max_version=8)


def test_api_versions_v3_response_header_has_no_tag_byte(cluster):
    with connect(cluster, timeout=10) as s:
        req = request_class(ApiKey.ApiVersions)[3](client_software_name="t", client_software_version="1")
        s.sendall(encode_request(req, 3, 11, "raw"))
        frame = read_frame(s)
    # v0 response header: correlation id, then the body's error code directly
    assert struct.unpack_from(">ih", frame) == (11, 0)
    _, resp = decode_response(ApiKey.ApiVersions, 3, frame)
    keys = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert keys[ApiKey.Produce][0] == 0  # advertised from v0 for librdkafka's compression checks
    assert keys[ApiKey.InitProducerId] == (0, 5)  # the idempotent producer: librdkafka 0-4, kafka-python <= 4
    # transactions, at Kafka 3.9's ranges (AddPartitionsToTxn v4+ is the brokers' batched verifyOnly form);
    # EndTxn 5 and TxnOffsetCommit 5 come only with transaction.version 2
    assert [keys[k] for k in (ApiKey.AddPartitionsToTxn, ApiKey.AddOffsetsToTxn, ApiKey.EndTxn,
                              ApiKey.TxnOffsetCommit)] == [(0, 5), (0, 4), (0, 4), (0, 4)]


def test_unknown_api_versions_version_gets_v0_error_with_our_ranges(cluster):
    with connect(cluster, timeout=10) as s:
        s.sendall(struct.pack(">ihhih", 12, 18, 99, 5, 1) + b"c" + b"\x00")
        frame = read_frame(s)
    corr, err, n = struct.unpack_from(">ihi", frame)
    assert (corr, err) == (5, ErrorCode.UNSUPPORTED_VERSION)
    ranges = [struct.unpack_from(">hhh", frame, 10 + 6 * i) for i in range(n)]
    assert (18, 0, 4) in ranges


def test_garbage_and_oversized_frames_close_only_their_connection(cluster):
    create_topic(cluster.bootstrap, "calm")
    with KafkaClient(cluster.bootstrap) as good:
        good.refresh_metadata(["calm"])
        with connect(cluster, timeout=10) as bad:
            bad.sendall(struct.pack(">i", 8) + b"\xff" * 8)  # a frame with a nonsense header
            assert bad.recv(10) == b""
        with connect(cluster, timeout=10) as big:
            big.sendall(struct.pack(">i", 2_000_000_000))  # beyond socket.request.max.bytes
            assert big.recv(10) == b""
        with connect(cluster, timeout=10) as unknown:
            unknown.sendall(struct.pack(">ihhih", 10, 999, 0, 1, 1) + b"c" + b"\x00\x00")
            assert unknown.recv(10) == b""
        # the well-behaved connection is unaffected
        batch = records.build_batch([(b"k", b"v", [], int(time.time() * 1000))])
        resp = _produce(good, "calm", batch)
        assert resp.responses[0].partition_responses[0].error_code == 0
    out = kcat(cluster.bootstrap, "-C", "-t", "calm", "-e", "-f", "%k=%s\n").stdout
    assert out == "k=v\n"


def test_old_message_format_and_bad_acks_are_refused_per_partition(cluster):
    create_topic(cluster.bootstrap, "fmt")
    v2 = bytearray(records.build_batch([(None, b"x", [], 1)]))
    v1 = bytearray(v2)
    v1[16] = 1  # magic byte: the broker must not store message format v1
    with KafkaClient(cluster.bootstrap) as k:
        r = _produce(k, "fmt", bytes(v1))
        assert r.responses[0].partition_responses[0].error_code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT
        corrupt = bytearray(v2)
        corrupt[-1] ^= 0xFF
        r = _produce(k, "fmt", bytes(corrupt))
        assert r.responses[0].partition_responses[0].error_code == ErrorCode.CORRUPT_MESSAGE
        r = _produce(k, "fmt", bytes(v2), acks=2)
        assert r.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
        r = _produce(k, "nope", bytes(v2))
        assert r.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        r = _produce(k, "fmt", bytes(v2))
        assert r.responses[0].partition_responses[0].error_code == 0
        assert r.responses[0].partition_responses[0].base_offset == 0


def test_message_too_large_is_refused(cluster):
    create_topic(cluster.bootstrap, "small", configs={"max.message.bytes": "1000"})
    big = records.build_batch([(None, b"x" * 5000, [], 1)])
    with KafkaClient(cluster.bootstrap) as k:
        r = _produce(k, "small", big)
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.MESSAGE_TOO_LARGE


def test_fetch_long_polls_until_data_arrives(cluster):
    create_topic(cluster.bootstrap, "poll")
    with KafkaClient(cluster.bootstrap) as k:
        t0 = time.monotonic()
        r = k.call(ApiKey.Fetch, lambda cls, v: cls(
            replica_id=-1, max_wait_ms=700, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
            session_epoch=-1, topics=[cls.FetchTopic(topic="poll", partitions=[cls.FetchTopic.FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                partition_max_bytes=1 << 20)])], forgotten_topics_data=[], rack_id=""), max_version=12)  # by name
        waited = time.monotonic() - t0
    assert 0.6 <= waited < 5
    assert not r.responses[0].partitions[0].records


def test_list_offsets_by_timestamp(cluster):
    create_topic(cluster.bootstrap, "ts")
    with KafkaClient(cluster.bootstrap) as k:
        for i in range(5):
            _produce(k, "ts", records.build_batch([(None, b"v", [], 1000 * (i + 1))]))

        def lookup(ts):
            r = k.call(ApiKey.ListOffsets, lambda cls, v: cls(replica_id=-1, isolation_level=0, topics=[
                cls.ListOffsetsTopic(name="ts", partitions=[cls.ListOffsetsTopic.ListOffsetsPartition(
                    partition_index=0, current_leader_epoch=-1, timestamp=ts)])]), max_version=7)
            p = r.topics[0].partitions[0]
            return p.error_code, p.offset, p.timestamp

        assert lookup(-2) == (0, 0, -1)
        assert lookup(-1) == (0, 5, -1)
        assert lookup(2500) == (0, 2, 3000)
        assert lookup(1000) == (0, 0, 1000)
        assert lookup(9999)[1] == -1
