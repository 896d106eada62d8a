"""A follower's Fetch v11 request and its response, by hand, both ways (sans I/O).

A follower sends one Fetch per replication round trip; at RF 3 with small requests that is two per
produced batch per follower. kafka-python's message objects (one per topic and partition, built,
encoded, then decoded into more objects) were a fifth of the follower's CPU in the profile
(BENCHMARKS.md, "The request path's CPU"). Byte for byte what kafka-python's codec writes and
reads at v11 (checked both ways by tests/unit/protocol/test_replica_fetch.py). The leader decodes
v11 requests (its followers', and clients that stop at v11) with decode_request for the same reason.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Sequence

from pylog.protocol.api import ApiKey

VERSION = 11
_HEAD = struct.Struct(">hhi")  # api key, version, correlation id
_FIXED = struct.Struct(">iiiibii")  # replica, max wait, min bytes, max bytes, isolation, session id, epoch
_PART = struct.Struct(">iiqqi")  # partition, current leader epoch, fetch offset, log start offset, max bytes
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_RESP_HEAD = struct.Struct(">iihi")  # correlation id, throttle time, error code, session id
_RESP_PART = struct.Struct(">ihqqq")  # partition, error, high watermark, last stable offset, log start offset
_ABORTED = struct.Struct(">qq")


@dataclass(slots=True)
class FetchPartitionRequest:
    """One partition a follower asks for."""

    partition: int
    current_leader_epoch: int
    fetch_offset: int
    log_start_offset: int
    partition_max_bytes: int


@dataclass(slots=True)
class ReplicaFetch:
    """The fields of a follower's Fetch request (no sessions, no forgotten topics, no rack)."""

    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    topics: Sequence[tuple[str, Sequence[FetchPartitionRequest]]]


@dataclass(slots=True)
class FetchTopicRequest:
    """One topic of a decoded Fetch v11 request (kafka-python's FetchTopic names)."""

    topic: str
    partitions: list[FetchPartitionRequest]


@dataclass(slots=True)
class FetchRequest:
    """A decoded Fetch v11 request, with the attribute names of kafka-python's FetchRequest."""

    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int
    session_epoch: int
    topics: list[FetchTopicRequest]
    forgotten_topics_data: list[tuple[str, list[int]]]
    rack_id: str


@dataclass(slots=True)
class PartitionData:
    """One partition of a Fetch v11 response (the names kafka-python's FetchResponse uses)."""

    partition_index: int
    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted_transactions: list[tuple[int, int]] | None
    preferred_read_replica: int
    records: bytes | None


@dataclass(slots=True)
class TopicData:
    """One topic of a Fetch v11 response."""

    topic: str
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(slots=True)
class FetchResponse:
    """A Fetch v11 response."""

    throttle_time_ms: int
    error_code: int
    session_id: int
    responses: list[TopicData]


def _string(value: str) -> bytes:
    raw = value.encode("utf-8")
    return _I16.pack(len(raw)) + raw


def encode_request(req: ReplicaFetch, correlation_id: int, client_id: str | None) -> bytes:
    """The framed request (size prefix, header v1, body) at v11."""
    cid = b"\xff\xff" if client_id is None else _string(client_id)
    parts = [_HEAD.pack(ApiKey.Fetch, VERSION, correlation_id), cid,
             _FIXED.pack(req.replica_id, req.max_wait_ms, req.min_bytes, req.max_bytes, 0, 0, -1),
             _I32.pack(len(req.topics))]
    for topic, partitions in req.topics:
        parts.append(_string(topic))
        parts.append(_I32.pack(len(partitions)))
        parts.extend(_PART.pack(p.partition, p.current_leader_epoch, p.fetch_offset, p.log_start_offset,
                                p.partition_max_bytes) for p in partitions)
    parts.append(b"\x00\x00\x00\x00\x00\x00")  # no forgotten topics, empty rack id
    body = b"".join(parts)
    return _I32.pack(len(body)) + body


class _Reader:
    """Reads big-endian fields from a frame; ValueError when it runs past the end."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int) -> None:
        self.buf, self.pos = buf, pos

    def unpack(self, s: struct.Struct) -> tuple:
        try:
            out = s.unpack_from(self.buf, self.pos)
        except struct.error as exc:
            raise ValueError(f"truncated Fetch response: {exc}") from None
        self.pos += s.size
        return out

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise ValueError("field runs past the end of the frame")
        out = bytes(self.buf[self.pos:end])
        self.pos = end
        return out

    def int32(self) -> int:
        return self.unpack(_I32)[0]


def _string_at(r: "_Reader") -> str:
    n = r.unpack(_I16)[0]
    if n < 0:
        raise ValueError("null string where a string is required")
    return r.take(n).decode("utf-8")


def decode_request(frame: bytes | bytearray | memoryview, pos: int) -> FetchRequest:
    """The Fetch v11 request body starting at `pos` (after the header); ValueError when it is not one."""
    r = _Reader(frame, pos)
    replica, wait, min_bytes, max_bytes, isolation, session, epoch = r.unpack(_FIXED)
    topics = []
    for _ in range(r.int32()):
        topic = FetchTopicRequest(_string_at(r), [])
        for _ in range(r.int32()):
            topic.partitions.append(FetchPartitionRequest(*r.unpack(_PART)))
        topics.append(topic)
    forgotten = []
    for _ in range(r.int32()):
        name = _string_at(r)
        forgotten.append((name, [r.int32() for _ in range(r.int32())]))
    rack = _string_at(r)
    if r.pos != len(frame):
        raise ValueError(f"{len(frame) - r.pos} bytes after the request")
    return FetchRequest(replica, wait, min_bytes, max_bytes, isolation, session, epoch, topics, forgotten, rack)


def decode_response(frame: bytes | bytearray | memoryview) -> tuple[int, FetchResponse]:
    """(correlation id, response) of a Fetch v11 response frame (without its size prefix)."""
    r = _Reader(frame, 0)
    corr, throttle, error, session = r.unpack(_RESP_HEAD)
    topics = []
    for _ in range(r.int32()):
        topic = TopicData(r.take(r.unpack(_I16)[0]).decode("utf-8"))
        for _ in range(r.int32()):
            index, err, hw, lso, log_start = r.unpack(_RESP_PART)
            n = r.int32()
            aborted = None if n < 0 else [r.unpack(_ABORTED) for _ in range(n)]
            preferred = r.int32()
            size = r.int32()
            records = None if size < 0 else r.take(size)
            topic.partitions.append(PartitionData(index, err, hw, lso, log_start, aborted, preferred, records))
        topics.append(topic)
    return corr, FetchResponse(throttle, error, session, topics)
