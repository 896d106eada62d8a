"""The hand-written OffsetCommit codec must agree with kafka-python's schema codec at every version."""

import struct

import pytest

from pylog.protocol import api
from pylog.protocol.codec import MalformedRequest, decode_request_body, decode_response, encode_request
from pylog.protocol.codec import parse_request_header
from pylog.protocol.offset_commit import decode_offset_commit_request, encode_offset_commit_response

VERSIONS = range(2, 10)


def commit_frame(version):
    cls = api.request_class(8)[version]
    t = cls.OffsetCommitRequestTopic
    fields = dict(group_id="grüppe", generation_id_or_member_epoch=7, member_id="m-1", topics=[
        t(name="tópic-a", partitions=[
            t.OffsetCommitRequestPartition(partition_index=0, committed_offset=123456789012,
                                           committed_leader_epoch=4, committed_metadata="meta"),
            t.OffsetCommitRequestPartition(partition_index=9, committed_offset=-1, committed_leader_epoch=-1,
                                           committed_metadata=None)]),
        t(name="b", partitions=[t.OffsetCommitRequestPartition(partition_index=2, committed_offset=5,
                                                                committed_leader_epoch=1, committed_metadata="")])])
    if version <= 4:
        fields["retention_time_ms"] = 60_000
    if version >= 7:
        fields["group_instance_id"] = "static-1"
    return bytearray(encode_request(cls(**fields), version, 11, "rdkafka")[4:])


def _flat(req):
    return [(t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
            for t in req.topics for p in t.partitions]


@pytest.mark.parametrize("version", VERSIONS)
def test_request_decodes_like_the_schema_codec(version):
    frame = commit_frame(version)
    hdr = parse_request_header(frame)
    ours = decode_offset_commit_request(hdr, frame)
    theirs = decode_request_body(hdr, bytes(frame))
    assert (ours.group_id, ours.generation_id_or_member_epoch, ours.member_id) == \
        (theirs.group_id, theirs.generation_id_or_member_epoch, theirs.member_id) == ("grüppe", 7, "m-1")
    assert ours.group_instance_id == ("static-1" if version >= 7 else None)
    assert ours.retention_time_ms == (60_000 if version <= 4 else -1)
    epoch = 4 if version >= 6 else -1  # no leader epoch on the wire before v6
    assert _flat(ours) == [("tópic-a", 0, 123456789012, epoch, "meta"), ("tópic-a", 9, -1, -1, None),
                           ("b", 2, 5, 1 if version >= 6 else -1, "")]
    assert [x[:3] + x[4:] for x in _flat(ours)] == [x[:3] + x[4:] for x in _flat(theirs)]


@pytest.mark.parametrize("version", VERSIONS)
def test_response_decodes_with_the_schema_codec(version):
    hdr = parse_request_header(commit_frame(version))
    order = [("tópic-a", 0), ("b", 2), ("tópic-a", 9), ("b", 2)]  # grouped by topic, each partition once
    frame = encode_offset_commit_response(hdr, order, {("tópic-a", 0): 0, ("tópic-a", 9): 3, ("b", 2): 25})
    (size,) = struct.unpack_from(">i", frame)
    assert size == len(frame) - 4
    corr, resp = decode_response(8, version, frame[4:])
    assert corr == 11
    if version >= 3:
        assert resp.throttle_time_ms == 0
    assert [(t.name, p.partition_index, p.error_code) for t in resp.topics for p in t.partitions] == \
        [("tópic-a", 0, 0), ("tópic-a", 9, 3), ("b", 2, 25)]


@pytest.mark.parametrize("version", VERSIONS)
def test_response_bytes_equal_the_schema_codec(version):
    hdr = parse_request_header(commit_frame(version))
    cls = api.response_class(8)[version]
    t = cls.OffsetCommitResponseTopic
    msg = cls(throttle_time_ms=0, topics=[t(name="x", partitions=[t.OffsetCommitResponsePartition(
        partition_index=1, error_code=22)])])
    from pylog.protocol.codec import encode_response
    assert encode_offset_commit_response(hdr, [("x", 1)], {("x", 1): 22}) == encode_response(hdr, msg)


def test_tagged_fields_are_skipped_at_every_level():
    # v8 by hand: group "g", generation 1, member "m", null instance id, 1 topic "t" with partition 4 at
    # offset 10, epoch -1, null metadata; an unknown tag (5, 2 bytes) on the partition, the topic and the request.
    tag = b"\x01\x05\x02zz"
    body = (b"\x02g" + struct.pack(">i", 1) + b"\x02m" + b"\x00" + b"\x02" + b"\x02t" + b"\x02"
            + struct.pack(">iqi", 4, 10, -1) + b"\x00" + tag + tag + tag)
    frame = bytearray(struct.pack(">hhih", 8, 8, 1, 1) + b"c" + b"\x00" + body)
    req = decode_offset_commit_request(parse_request_header(frame), frame)
    assert (req.group_id, req.member_id, req.group_instance_id) == ("g", "m", None)
    assert _flat(req) == [("t", 4, 10, -1, None)]


@pytest.mark.parametrize("version", [2, 6, 8])
def test_every_truncation_is_a_malformed_request(version):
    frame = commit_frame(version)
    hdr = parse_request_header(frame)
    for cut in range(hdr.size, len(frame)):
        with pytest.raises(MalformedRequest):
            decode_offset_commit_request(hdr, frame[:cut])


def test_garbage_counts_are_malformed():
    head = struct.pack(">hhih", 8, 5, 1, -1) + struct.pack(">h", 1) + b"g" + struct.pack(">ih", 1, 0)
    for body in (struct.pack(">i", 10**9), struct.pack(">i", -1), struct.pack(">ih", 1, 30) + b"abc"):
        frame = bytearray(head + body)
        with pytest.raises(MalformedRequest):
            decode_offset_commit_request(parse_request_header(frame), frame)
