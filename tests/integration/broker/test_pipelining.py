"""Pipelined requests on one connection: responses in request order, none held back by a later long poll."""

from __future__ import annotations

import time

import pytest

from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import decode_response, encode_request
from support.clients import create_topic
from support.wire import connect, read_frame

pytestmark = pytest.mark.integration

PRODUCE_V, FETCH_V = 9, 11


def _produce(corr: int, topic: str, value: bytes) -> bytes:
    cls = request_class(ApiKey.Produce)[PRODUCE_V]
    batch = records.build_batch([(None, value, (), None)])
    msg = cls(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[cls.TopicProduceData(
        name=topic, partition_data=[cls.TopicProduceData.PartitionProduceData(index=0, records=batch)])])
    return encode_request(msg, PRODUCE_V, corr, "pipeline")


def _fetch(corr: int, topic: str, offset: int, max_wait_ms: int) -> bytes:
    cls = request_class(ApiKey.Fetch)[FETCH_V]
    ft = cls.FetchTopic
    msg = cls(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
              session_id=0, session_epoch=-1, topics=[ft(topic=topic, partitions=[ft.FetchPartition(
                  partition=0, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                  partition_max_bytes=1 << 20)])], forgotten_topics_data=[], rack_id="")
    return encode_request(msg, FETCH_V, corr, "pipeline")


def test_a_burst_of_pipelined_produces_is_answered_in_order(cluster):
    create_topic(cluster.bootstrap, "burst")
    with connect(cluster) as s:
        s.sendall(b"".join(_produce(corr, "burst", b"v%d" % corr) for corr in range(1, 201)))
        answers = [decode_response(ApiKey.Produce, PRODUCE_V, read_frame(s)) for _ in range(200)]
    assert [corr for corr, _ in answers] == list(range(1, 201))
    parts = [resp.responses[0].partition_responses[0] for _, resp in answers]
    assert [(p.error_code, p.base_offset) for p in parts] == [(0, i) for i in range(200)]


def test_a_long_poll_does_not_hold_back_the_response_before_it(cluster):
    create_topic(cluster.bootstrap, "poll")
    with connect(cluster) as s:
        start = time.monotonic()
        # produce (offset 0), then a fetch at offset 1 that can only wait out its 3 s, then a produce
        s.sendall(_produce(1, "poll", b"a") + _fetch(2, "poll", 1, 3000) + _produce(3, "poll", b"b"))
        corr, _ = decode_response(ApiKey.Produce, PRODUCE_V, read_frame(s))
        first = time.monotonic() - start
        corr2, fetched = decode_response(ApiKey.Fetch, FETCH_V, read_frame(s))
        corr3, produced = decode_response(ApiKey.Produce, PRODUCE_V, read_frame(s))
    assert (corr, corr2, corr3) == (1, 2, 3)
    assert first < 2.0, f"the produce response waited {first:.1f}s behind the long poll"
    assert fetched.responses[0].partitions[0].error_code == 0
    assert produced.responses[0].partition_responses[0].base_offset == 1
