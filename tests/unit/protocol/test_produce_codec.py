"""The hand-written Produce codec must agree with kafka-python's schema codec at every version."""

import struct

import pytest

from pylog.protocol import api, records
from pylog.protocol.codec import MalformedRequest, decode_request_body, decode_response, encode_request, encode_response
from pylog.protocol.codec import parse_request_header
from pylog.protocol.produce import PartitionProduceResult, decode_produce_request, encode_produce_response

BATCH_A = records.build_batch([(b"k", b"v" * 50, [("h", b"1")], 1_700_000_000_000)])
BATCH_B = records.build_batch([(None, b"w", [], 1_700_000_000_001), (None, b"x", [], 1_700_000_000_002)])


def produce_frame(version, transactional_id=None, acks=-1):
    cls = api.request_class(0)[version]
    tpd = cls.TopicProduceData
    msg = cls(transactional_id=transactional_id, acks=acks, timeout_ms=1234, topic_data=[
        tpd(name="tópic-a", partition_data=[tpd.PartitionProduceData(index=0, records=BATCH_A),
                                            tpd.PartitionProduceData(index=7, records=None)]),
        tpd(name="b", partition_data=[tpd.PartitionProduceData(index=3, records=BATCH_B)])])
    return bytearray(encode_request(msg, version, 11, "rdkafka")[4:])


@pytest.mark.parametrize("version", range(0, 12))
def test_request_decodes_like_the_schema_codec(version):
    frame = produce_frame(version, transactional_id="tx" if version >= 3 else None)
    hdr = parse_request_header(frame)
    ours = decode_produce_request(hdr, frame)
    theirs = decode_request_body(hdr, bytes(frame))
    assert (ours.acks, ours.timeout_ms) == (theirs.acks, theirs.timeout_ms) == (-1, 1234)
    assert ours.transactional_id == (theirs.transactional_id if version >= 3 else None)
    flat = [(t.name, p.index, None if p.records is None else bytes(p.records))
            for t in ours.topic_data for p in t.partition_data]
    assert flat == [(t.name, p.index, None if p.records is None else bytes(p.records))
                    for t in theirs.topic_data for p in t.partition_data]
    assert flat == [("tópic-a", 0, BATCH_A), ("tópic-a", 7, None), ("b", 3, BATCH_B)]


def test_records_are_writable_views_into_the_frame():
    frame = produce_frame(10)
    req = decode_produce_request(parse_request_header(frame), frame)
    view = req.topic_data[0].partition_data[0].records
    assert not view.readonly and view.obj is frame
    pos = bytes(frame).index(BATCH_A[16:]) - 16
    records.assign_offsets(view, records.validate_batches(view), 42, 5)
    stamped = records.parse_header(frame, pos)  # the frame itself changed: no copy was made
    assert (stamped.base_offset, stamped.partition_leader_epoch) == (42, 5)


def test_tagged_fields_are_skipped_at_every_level():
    # v9 by hand: header, null transactional id, acks, timeout, 1 topic "t" with 1 partition, unknown
    # tags (tag 5 of 2 bytes) on the partition, the topic and the request.
    tag = b"\x01\x05\x02zz"
    body = (b"\x00" + struct.pack(">hi", 1, 100) + b"\x02" + b"\x02t" + b"\x02" + struct.pack(">i", 4)
            + bytes([len(BATCH_B) + 1]) + BATCH_B + tag + tag + tag)
    frame = bytearray(struct.pack(">hhih", 0, 9, 1, 1) + b"c" + b"\x00" + body)
    req = decode_produce_request(parse_request_header(frame), frame)
    assert req.topic_data[0].name == "t"
    assert (req.topic_data[0].partition_data[0].index, bytes(req.topic_data[0].partition_data[0].records)) == (4, BATCH_B)


@pytest.mark.parametrize("version", [3, 9])
def test_every_truncation_is_a_malformed_request(version):
    frame = produce_frame(version)
    hdr = parse_request_header(frame)
    for cut in range(hdr.size, len(frame)):
        with pytest.raises(MalformedRequest):
            decode_produce_request(hdr, frame[:cut])


def test_garbage_lengths_are_malformed():
    hdr_bytes = struct.pack(">hhih", 0, 7, 1, -1)
    for body in (b"\xff\xff" + struct.pack(">hi", 1, 1) + struct.pack(">i", 10**9),  # huge topic count
                 b"\xff\xff" + struct.pack(">hi", 1, 1) + struct.pack(">i", -1),  # null topic array
                 b"\xff\xff" + struct.pack(">hi", 1, 1) + struct.pack(">ih", 1, 30) + b"abc"):  # name too long
        frame = bytearray(hdr_bytes + body)
        with pytest.raises(MalformedRequest):
            decode_produce_request(parse_request_header(frame), frame)


@pytest.mark.parametrize("version", range(0, 12))
def test_response_matches_the_schema_codec_byte_for_byte(version):
    frame = produce_frame(version)
    hdr = parse_request_header(frame)
    results = [("tópic-a", [PartitionProduceResult(0, 0, 100, -1, 5), PartitionProduceResult(7, 6)]),
               ("b", [PartitionProduceResult(3, 0, 2**40, 1_700_000_000_000, 0)])]
    ours = encode_produce_response(hdr, results)
    cls = api.response_class(0)[version]
    tpr = cls.TopicProduceResponse
    theirs = encode_response(hdr, cls(throttle_time_ms=0, responses=[
        tpr(name=name, partition_responses=[tpr.PartitionProduceResponse(
            index=p.index, error_code=p.error_code, base_offset=p.base_offset, log_append_time_ms=p.log_append_time_ms,
            log_start_offset=p.log_start_offset, record_errors=[], error_message=None) for p in parts])
        for name, parts in results]))
    assert ours == theirs
    corr, decoded = decode_response(0, version, ours[4:])
    assert corr == 11
    assert [(t.name, p.index, p.error_code, p.base_offset) for t in decoded.responses for p in t.partition_responses] \
        == [("tópic-a", 0, 0, 100), ("tópic-a", 7, 6, -1), ("b", 3, 0, 2**40)]


@pytest.mark.parametrize("version", range(8, 12))
def test_record_errors_and_error_message_match_the_schema_codec(version):
    frame = produce_frame(version)
    hdr = parse_request_header(frame)
    bad = PartitionProduceResult(0, 87, -1, -1, 0, record_errors=[(0, "no key in tópic-a-0"), (2, None)],
                                 error_message="One or more records have been rejected")
    ours = encode_produce_response(hdr, [("tópic-a", [bad, PartitionProduceResult(7, 6)])])
    cls = api.response_class(0)[version]
    tpr = cls.TopicProduceResponse
    ppr = tpr.PartitionProduceResponse
    theirs = encode_response(hdr, cls(throttle_time_ms=0, responses=[tpr(name="tópic-a", partition_responses=[
        ppr(index=0, error_code=87, base_offset=-1, log_append_time_ms=-1, log_start_offset=0,
            record_errors=[ppr.BatchIndexAndErrorMessage(batch_index=0, batch_index_error_message="no key in tópic-a-0"),
                           ppr.BatchIndexAndErrorMessage(batch_index=2, batch_index_error_message=None)],
            error_message="One or more records have been rejected"),
        ppr(index=7, error_code=6, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1, record_errors=[],
            error_message=None)])]))
    assert ours == theirs


@pytest.mark.parametrize("version", [10, 11])
def test_current_leader_and_node_endpoints_match_the_schema_codec(version):
    frame = produce_frame(version)
    hdr = parse_request_header(frame)
    moved = PartitionProduceResult(7, 6, current_leader=(2, 9))
    ours = encode_produce_response(hdr, [("t", [PartitionProduceResult(0, 0, 5, -1, 0), moved])],
                                   node_endpoints=[(2, "h2", 9093, None)])
    cls = api.response_class(0)[version]
    tpr = cls.TopicProduceResponse
    ppr = tpr.PartitionProduceResponse
    theirs = encode_response(hdr, cls(throttle_time_ms=0, responses=[tpr(name="t", partition_responses=[
        ppr(index=0, error_code=0, base_offset=5, log_append_time_ms=-1, log_start_offset=0, record_errors=[],
            error_message=None),
        ppr(index=7, error_code=6, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1, record_errors=[],
            error_message=None, current_leader=ppr.LeaderIdAndEpoch(leader_id=2, leader_epoch=9))])],
        node_endpoints=[cls.NodeEndpoint(node_id=2, host="h2", port=9093, rack=None)]))
    assert ours == theirs
    _, decoded = decode_response(0, version, ours[4:])
    assert decoded.responses[0].partition_responses[1].current_leader.leader_id == 2
    assert [(n.node_id, n.host, n.port) for n in decoded.node_endpoints] == [(2, "h2", 9093)]
