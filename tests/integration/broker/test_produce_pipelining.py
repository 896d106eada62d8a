"""acks=all produce pipelining on one connection: appends in arrival order, responses in request order.

Two real brokers; `slow` is replicated to broker 1 (min.insync.replicas 1, so it stays writable),
`fast` lives on broker 0 alone, and broker 0 leads both. Stopping broker 1 (SIGSTOP) holds every
acks=all response to `slow` until it resumes (or the request's timeout_ms passes); it stays in the
ISR meanwhile (the lag time and session timeout are far longer than these tests).
"""

from __future__ import annotations

import contextlib
import re
import select
import signal
import socket
import struct
import time
from typing import Iterator

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from pylog.broker.server import _MAX_OWED
from pylog.client.sync import KafkaClient
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import decode_response, encode_request
from pylog.protocol.errors import ErrorCode
from support.clients import kcat, wait_for
from support.inspect import partitions
from support.wire import read_frame

pytestmark = pytest.mark.integration

PRODUCE_V, FETCH_V, API_VERSIONS_V = 9, 11, 3
PATIENT = {"replica.lag.time.max.ms": "60000", "zookeeper.session.timeout.ms": "30000"}


@pytest.fixture
def pair(cluster_factory):
    """Brokers 0 and 1 with `slow` (replicas 0, 1, both in sync) and `fast` (replica 0)."""
    c = cluster_factory(2, overrides=PATIENT)
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    futures = admin.create_topics([NewTopic("slow", num_partitions=1, replica_assignment=[[0, 1]]),
                                   NewTopic("fast", num_partitions=1, replica_assignment=[[0]])],
                                  operation_timeout=30, request_timeout=30)
    for f in futures.values():
        f.result(60)
    wait_for(lambda: partitions(c.bootstrap, "slow")[0].isr == (0, 1) and partitions(c.bootstrap, "fast")[0].leader == 0,
             30, "slow in sync on brokers 0 and 1, fast led by 0")
    return c


@contextlib.contextmanager
def follower_stopped(cluster) -> Iterator[None]:
    """Broker 1 stopped (SIGSTOP), resumed on exit even if the test fails."""
    cluster.brokers[1].signal(signal.SIGSTOP)
    try:
        yield
    finally:
        cluster.brokers[1].signal(signal.SIGCONT)


def leader_socket(cluster) -> socket.socket:
    return socket.create_connection(("127.0.0.1", cluster.brokers[0].port), timeout=30)


def produce(corr: int, topic: str, value: bytes, acks: int, timeout_ms: int = 30000) -> bytes:
    cls = request_class(ApiKey.Produce)[PRODUCE_V]
    batch = records.build_batch([(None, value, (), None)])
    msg = cls(transactional_id=None, acks=acks, timeout_ms=timeout_ms, topic_data=[cls.TopicProduceData(
        name=topic, partition_data=[cls.TopicProduceData.PartitionProduceData(index=0, records=batch)])])
    return encode_request(msg, PRODUCE_V, corr, "pipeline")


def fetch(corr: int, topic: str, offset: int) -> bytes:
    cls = request_class(ApiKey.Fetch)[FETCH_V]
    ft = cls.FetchTopic
    msg = cls(replica_id=-1, max_wait_ms=300, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
              session_id=0, session_epoch=-1, topics=[ft(topic=topic, partitions=[ft.FetchPartition(
                  partition=0, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                  partition_max_bytes=1 << 20)])], forgotten_topics_data=[], rack_id="")
    return encode_request(msg, FETCH_V, corr, "pipeline")


def api_versions(corr: int) -> bytes:
    cls = request_class(ApiKey.ApiVersions)[API_VERSIONS_V]
    return encode_request(cls(client_software_name="t", client_software_version="1"), API_VERSIONS_V, corr, "pipeline")


def produced(s: socket.socket) -> tuple[int, int, int]:
    """The next response, a Produce one: (correlation id, error code, base offset)."""
    corr, resp = decode_response(ApiKey.Produce, PRODUCE_V, read_frame(s))
    p = resp.responses[0].partition_responses[0]
    return corr, p.error_code, p.base_offset


def end_offset(cluster, topic: str) -> int:
    """What a consumer sees as the end of partition 0 (its high watermark), asked on another connection."""
    with KafkaClient(cluster.brokers[0].address, timeout=10) as k:
        r = k.call(ApiKey.ListOffsets, lambda cls, v: cls(replica_id=-1, isolation_level=0, topics=[
            cls.ListOffsetsTopic(name=topic, partitions=[cls.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=0, current_leader_epoch=-1, timestamp=-1)])]), node=0, max_version=7)
    return r.topics[0].partitions[0].offset


def nothing_received(s: socket.socket) -> bool:
    return not select.select([s], [], [], 0)[0]


def values(cluster, topic: str) -> list[str]:
    return kcat(cluster.bootstrap, "-C", "-t", topic, "-e", "-f", "%s\n").stdout.split()


def test_requests_behind_a_waiting_acks_all_produce_are_handled_and_answered_in_order(pair):
    with leader_socket(pair) as s:
        with follower_stopped(pair):
            s.sendall(produce(1, "slow", b"s0", acks=-1) + produce(2, "fast", b"f0", acks=1) +
                      produce(3, "fast", b"f1", acks=0) + produce(4, "fast", b"f2", acks=1) +
                      fetch(5, "fast", 0) + api_versions(6) + produce(7, "fast", b"f3", acks=1))
            # the requests after the waiting one were appended: a consumer sees them already. The last
            # one (7) comes after the Fetch and ApiVersions, and a connection's requests are handled in
            # order, so once it is appended their responses, were they not held, would be on the socket ...
            wait_for(lambda: end_offset(pair, "fast") == 4, 20, "fast's four records appended")
            # ... but no response may overtake the acks=all one (correlation ids are matched in order)
            assert nothing_received(s)
        assert produced(s) == (1, ErrorCode.NONE, 0)
        assert produced(s) == (2, ErrorCode.NONE, 0)
        assert produced(s) == (4, ErrorCode.NONE, 2)
        corr, fetched = decode_response(ApiKey.Fetch, FETCH_V, read_frame(s))
        part = fetched.responses[0].partitions[0]
        assert (corr, part.error_code) == (5, 0)
        got = [r.value for b in records.iter_batches(part.records)
               for r in records.read_records(memoryview(part.records)[b.position:b.position + b.size])]
        assert got == [b"f0", b"f1", b"f2"]
        frame = read_frame(s)
        assert struct.unpack_from(">ih", frame) == (6, 0)  # ApiVersions keeps its v0 response header
        assert produced(s) == (7, ErrorCode.NONE, 3)
    assert values(pair, "slow") == ["s0"]


def test_a_burst_with_mixed_acks_is_appended_in_arrival_order(pair):
    acks = [(-1, 1, 0)[i % 3] for i in range(300)]
    with leader_socket(pair) as s:
        burst = [produce(i + 1, "slow", b"m%d" % i, acks=a) for i, a in enumerate(acks)]
        burst.insert(150, api_versions(1000))
        s.sendall(b"".join(burst))
        answers = []
        for i, a in enumerate(acks):
            if i == 150:
                frame = read_frame(s)
                answers.append(struct.unpack_from(">ih", frame))
            if a != 0:
                answers.append(produced(s))
    expected = [(i + 1, 0, i) for i, a in enumerate(acks) if a != 0]
    expected.insert(sum(1 for a in acks[:150] if a != 0), (1000, 0))
    assert answers == expected
    assert values(pair, "slow") == [f"m{i}" for i in range(300)]


def test_a_connection_owing_the_most_responses_reads_no_further_request(pair):
    with leader_socket(pair) as s:
        with follower_stopped(pair):
            # _MAX_OWED - 1 waiting responses, then one acks=1 response queued behind them: the cap
            s.sendall(b"".join(produce(i + 1, "slow", b"s%d" % i, acks=-1) for i in range(_MAX_OWED - 1)) +
                      produce(_MAX_OWED, "fast", b"first", acks=1) + produce(_MAX_OWED + 1, "fast", b"second", acks=1))
            wait_for(lambda: end_offset(pair, "fast") >= 1, 20, "the first acks=1 produce appended")
            time.sleep(1.0)
            assert end_offset(pair, "fast") == 1, "a request beyond the cap was handled"
            assert nothing_received(s)
        answers = [produced(s) for _ in range(_MAX_OWED + 1)]
    assert answers == [(i + 1, 0, i) for i in range(_MAX_OWED - 1)] + [(_MAX_OWED, 0, 0), (_MAX_OWED + 1, 0, 1)]
    assert values(pair, "fast") == ["first", "second"]


def test_each_waiting_produce_times_out_after_its_own_timeout(pair):
    with leader_socket(pair) as s:
        with follower_stopped(pair):
            start = time.monotonic()
            s.sendall(produce(1, "slow", b"a", acks=-1, timeout_ms=1500) +
                      produce(2, "slow", b"b", acks=-1, timeout_ms=2000) + produce(3, "fast", b"c", acks=1))
            first = produced(s)
            t1 = time.monotonic() - start
            second = produced(s)
            t2 = time.monotonic() - start
            third = produced(s)
    assert (first, second, third) == ((1, ErrorCode.REQUEST_TIMED_OUT, -1), (2, ErrorCode.REQUEST_TIMED_OUT, -1),
                                      (3, ErrorCode.NONE, 0))
    assert 1.4 <= t1 and 1.9 <= t2
    # the second request's 2 s ran from its arrival, not from the first response (that would be 3.5 s)
    assert t2 < 3.2, f"the second timeout ended {t2:.1f}s after sending"
    # timed out is not failed: the records were appended and commit once the follower is back
    wait_for(lambda: end_offset(pair, "slow") == 2, 30, "the timed-out records committed")
    assert values(pair, "slow") == ["a", "b"]


def test_a_connection_closed_or_fed_garbage_while_responses_wait(pair):
    with follower_stopped(pair):
        with leader_socket(pair) as gone:
            gone.sendall(produce(1, "slow", b"s0", acks=-1) + produce(2, "slow", b"s1", acks=-1) +
                         produce(3, "fast", b"f0", acks=1))
            wait_for(lambda: end_offset(pair, "fast") == 1, 20, "the closed connection's requests handled")
        garbage = leader_socket(pair)
        with garbage:
            garbage.sendall(produce(1, "slow", b"s2", acks=-1) + struct.pack(">i", 8) + b"\xff" * 8)
            time.sleep(0.5)
            assert nothing_received(garbage)  # neither the response nor the close overtakes the wait
            pair.brokers[1].signal(signal.SIGCONT)
            assert produced(garbage) == (1, ErrorCode.NONE, 2)
            assert garbage.recv(10) == b""  # then the garbage closes it
    # the appends of the closed connection stay; the broker serves on
    with leader_socket(pair) as s:
        s.sendall(produce(7, "slow", b"s3", acks=-1))
        assert produced(s) == (7, ErrorCode.NONE, 3)
    assert values(pair, "slow") == ["s0", "s1", "s2", "s3"]
    log_text = pair.brokers[0].log_path.read_text()
    assert not re.search(r"Traceback|never retrieved|destroyed but it is pending|Unexpected error", log_text)
