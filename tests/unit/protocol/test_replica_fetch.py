"""The follower's hand-written Fetch v11 codec must agree with kafka-python's schema codec both ways."""

import pytest

from pylog.client.versions import INTER_BROKER
from pylog.protocol import api, replica_fetch
from pylog.protocol.api import ApiKey
from pylog.protocol.codec import decode_request_body, decode_response, encode_request, encode_response
from pylog.protocol.codec import parse_request_header
from pylog.protocol.records import build_batch

V = replica_fetch.VERSION


def test_it_is_the_version_brokers_fetch_with():
    assert INTER_BROKER[ApiKey.Fetch] == V


def _request():
    p = replica_fetch.FetchPartitionRequest
    return replica_fetch.ReplicaFetch(2, 500, 1, 10_485_760, [
        ("tópic-a", [p(0, 3, 1_234_567_890_123, 17, 1_048_576), p(5, -1, 0, -1, 65536)]),
        ("b", [p(1, 0, 42, 0, 1)])])


def _schema_request(req):
    cls = api.request_class(ApiKey.Fetch)[V]
    ft = cls.FetchTopic
    return cls(replica_id=req.replica_id, max_wait_ms=req.max_wait_ms, min_bytes=req.min_bytes,
               max_bytes=req.max_bytes, isolation_level=0, session_id=0, session_epoch=-1, topics=[
                   ft(topic=t, partitions=[ft.FetchPartition(
                       partition=q.partition, current_leader_epoch=q.current_leader_epoch, fetch_offset=q.fetch_offset,
                       log_start_offset=q.log_start_offset, partition_max_bytes=q.partition_max_bytes) for q in ps])
                   for t, ps in req.topics], forgotten_topics_data=[], rack_id="")


@pytest.mark.parametrize("client_id", ["broker-1-fetcher-0", None])
def test_request_is_byte_for_byte_the_schema_codecs(client_id):
    req = _request()
    ours = replica_fetch.encode_request(req, 77, client_id)
    assert ours == encode_request(_schema_request(req), V, 77, client_id)
    frame = bytearray(ours[4:])
    header = parse_request_header(frame)  # and the broker reads it back as sent
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (1, V, 77, client_id)
    back = decode_request_body(header, frame)
    assert [(t.topic, [(p.partition, p.fetch_offset, p.partition_max_bytes) for p in t.partitions])
            for t in back.topics] == [(t, [(p.partition, p.fetch_offset, p.partition_max_bytes) for p in ps])
                                      for t, ps in req.topics]


def _schema_response():
    cls = api.response_class(ApiKey.Fetch)[V]
    ft = cls.FetchableTopicResponse
    pd = ft.PartitionData
    batch = build_batch([(b"k", b"v" * 50, (), 1_700_000_000_000)] * 3, base_offset=10)
    return batch, cls(throttle_time_ms=5, error_code=0, session_id=0, responses=[
        ft(topic="tópic-a", partitions=[
            pd(partition_index=0, error_code=0, high_watermark=13, last_stable_offset=13, log_start_offset=2,
               aborted_transactions=None, preferred_read_replica=-1, records=batch),
            pd(partition_index=5, error_code=6, high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
               aborted_transactions=[pd.AbortedTransaction(producer_id=9, first_offset=4)],
               preferred_read_replica=-1, records=None)]),
        ft(topic="b", partitions=[pd(partition_index=1, error_code=0, high_watermark=42, last_stable_offset=40,
                                     log_start_offset=0, aborted_transactions=[], preferred_read_replica=3,
                                     records=b"")])])


def test_response_decodes_like_the_schema_codec():
    batch, resp = _schema_response()
    header = parse_request_header(bytearray(replica_fetch.encode_request(_request(), 31, "f")[4:]))
    frame = encode_response(header, resp)[4:]
    corr, ours = replica_fetch.decode_response(frame)
    corr2, theirs = decode_response(ApiKey.Fetch, V, frame)
    assert corr == corr2 == 31
    assert (ours.throttle_time_ms, ours.error_code, ours.session_id) == (5, 0, 0)
    flat = [(t.topic, p.partition_index, p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset,
             p.preferred_read_replica, None if p.records is None else bytes(p.records)) for t in theirs.responses
            for p in t.partitions]
    assert [(t.topic, p.partition_index, p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset,
             p.preferred_read_replica, p.records) for t in ours.responses for p in t.partitions] == flat
    assert ours.responses[0].partitions[0].records == batch
    assert [p.aborted_transactions for p in ours.responses[0].partitions] == [None, [(9, 4)]]
    assert ours.responses[1].partitions[0].aborted_transactions == []


def test_a_truncated_response_is_an_error_not_a_short_answer():
    _batch, resp = _schema_response()
    header = parse_request_header(bytearray(replica_fetch.encode_request(_request(), 31, "f")[4:]))
    frame = encode_response(header, resp)[4:]
    for cut in (3, 20, len(frame) // 2, len(frame) - 1):
        with pytest.raises(ValueError):
            replica_fetch.decode_response(frame[:cut])


def test_the_leader_reads_a_v11_request_as_the_schema_codec_does():
    from pylog.broker.handlers.fetch import decode_fetch_request
    req = _schema_request(_request())
    req.forgotten_topics_data = [api.request_class(ApiKey.Fetch)[V].ForgottenTopic(topic="gone", partitions=[3, 4])]
    req.rack_id = "rack-a"
    frame = bytearray(encode_request(req, V, 5, "rdkafka")[4:])
    header = parse_request_header(frame)
    ours, theirs = decode_fetch_request(header, frame), decode_request_body(header, frame)
    for field in ("replica_id", "max_wait_ms", "min_bytes", "max_bytes", "isolation_level", "session_id",
                  "session_epoch", "rack_id"):
        assert getattr(ours, field) == getattr(theirs, field)
    assert [(t.topic, [(p.partition, p.current_leader_epoch, p.fetch_offset, p.log_start_offset,
                        p.partition_max_bytes) for p in t.partitions]) for t in ours.topics] == \
        [(t.topic, [(p.partition, p.current_leader_epoch, p.fetch_offset, p.log_start_offset, p.partition_max_bytes)
                    for p in t.partitions]) for t in theirs.topics]
    assert ours.forgotten_topics_data == [("gone", [3, 4])]
    assert getattr(ours.topics[0].partitions[0], "last_fetched_epoch", -1) == -1  # as the handler reads v11


def test_the_leader_refuses_a_truncated_or_padded_v11_request():
    from pylog.broker.handlers.fetch import decode_fetch_request
    from pylog.protocol.codec import MalformedRequest
    frame = bytearray(encode_request(_schema_request(_request()), V, 5, "f")[4:])
    header = parse_request_header(frame)
    for bad in (frame[:-1], frame[:header.size + 10], frame + b"\x00"):
        with pytest.raises(MalformedRequest):
            decode_fetch_request(header, bad)
