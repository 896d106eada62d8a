"""The hand-written Fetch encoder must decode with the schema-driven codec at every version."""

import uuid
from typing import NamedTuple

import pytest

from pylog.protocol import api
from pylog.protocol.codec import decode_response, encode_request, parse_request_header
from pylog.protocol.fetch import FetchPartitionData, encode_fetch_response


TOPIC_A, TOPIC_B = uuid.uuid4(), uuid.uuid4()


class Chunk(NamedTuple):
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


@pytest.mark.parametrize("version", range(4, 18))
def test_encoded_fetch_response_decodes(version):
    req = api.request_class(1)[version](replica_id=-1, max_wait_ms=1, min_bytes=1, topics=[])
    hdr = parse_request_header(encode_request(req, version, 77, "c")[4:])
    parts = encode_fetch_response(hdr, [
        ("topic-a", [FetchPartitionData(0, 0, 10, 10, 2, records=[b"abc", Chunk(b"defg")]),
                     FetchPartitionData(1, 6, -1, -1, -1)]),
        ("b", [FetchPartitionData(3, 0, 5, 5, 0, records=[Chunk(b"zz")])]),
    ], session_id=0, topic_ids=[TOPIC_A, TOPIC_B])
    wire = b"".join(p if isinstance(p, bytes) else p.data for p in parts)
    assert int.from_bytes(wire[:4], "big") == len(wire) - 4
    corr, resp = decode_response(1, version, wire[4:])
    assert corr == 77
    t0, t1 = resp.responses
    if version >= 13:  # KIP-516: topics are named by id
        assert (t0.topic_id, t1.topic_id) == (TOPIC_A, TOPIC_B)
    else:
        assert t0.topic == "topic-a" and t1.topic == "b"
    p0, p1 = t0.partitions
    assert (p0.partition_index, p0.high_watermark, bytes(p0.records)) == (0, 10, b"abcdefg")
    assert p1.error_code == 6 and not p1.records
    if version >= 5:
        assert p0.log_start_offset == 2
    assert bytes(t1.partitions[0].records) == b"zz"
    # file chunks are passed through as objects, never copied into the byte parts
    assert sum(1 for p in parts if isinstance(p, Chunk)) == 2


@pytest.mark.parametrize("version", range(4, 18))
def test_aborted_transactions_and_lso_decode(version):
    req = api.request_class(1)[version](replica_id=-1, max_wait_ms=1, min_bytes=1, topics=[])
    hdr = parse_request_header(encode_request(req, version, 5, "c")[4:])
    parts = encode_fetch_response(hdr, [("t", [
        FetchPartitionData(0, 0, 10, 7, 0, aborted_transactions=[(1000, 2), (1001, 5)], records=[b"x"]),
        FetchPartitionData(1, 0, 10, 10, 0)])])
    _, resp = decode_response(1, version, b"".join(parts)[4:])
    p0, p1 = resp.responses[0].partitions
    assert p0.last_stable_offset == 7
    assert [(a.producer_id, a.first_offset) for a in p0.aborted_transactions] == [(1000, 2), (1001, 5)]
    assert p1.aborted_transactions is None  # read_uncommitted: null, as Kafka sends


@pytest.mark.parametrize("version", range(12, 18))
def test_diverging_epoch_current_leader_and_node_endpoints_decode(version):
    req = api.request_class(1)[version](max_wait_ms=1, min_bytes=1, topics=[])
    hdr = parse_request_header(encode_request(req, version, 9, "c")[4:])
    parts = encode_fetch_response(hdr, [("t", [
        FetchPartitionData(0, 0, 10, 10, 0, diverging_epoch=(3, 42)),
        FetchPartitionData(1, 6, -1, -1, -1, current_leader=(2, 7)),
        FetchPartitionData(2, 0, 10, 10, 0, records=[Chunk(b"r")])])],
        topic_ids=[TOPIC_A], node_endpoints=[(2, "h2", 9093, None), (5, "h5", 9094, "r1")])
    _, resp = decode_response(1, version, b"".join(p if isinstance(p, bytes) else p.data for p in parts)[4:])
    p0, p1, p2 = resp.responses[0].partitions
    assert (p0.diverging_epoch.epoch, p0.diverging_epoch.end_offset) == (3, 42)
    assert (p1.current_leader.leader_id, p1.current_leader.leader_epoch) == (2, 7)
    assert p2.diverging_epoch is None and p2.current_leader is None  # absent tags
    assert bytes(p2.records) == b"r"
    nodes = [(n.node_id, n.host, n.port, n.rack) for n in resp.node_endpoints or []]
    assert nodes == ([(2, "h2", 9093, None), (5, "h5", 9094, "r1")] if version >= 16 else [])
