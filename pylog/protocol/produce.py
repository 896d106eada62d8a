"""Produce requests decoded and responses encoded by hand: the broker's hottest path.

The schema-compiled codec copies every record set out of the frame into a new `bytes` (and the
handler then needs a mutable copy to stamp offsets), and builds several objects per partition for
the response. Here a request's record sets are writable memoryviews into the received frame, so a
1 MB batch is never copied between the socket and the segment file, and the response is packed
straight into bytes. Versions 0-11 (flexible from 9; KIP-951's CurrentLeader and NodeEndpoints from
10) exactly as Kafka's ProduceRequest.json and
ProduceResponse.json; unit tests check both directions against kafka-python's codec.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Sequence

from pylog.protocol.codec import (MalformedRequest, RequestHeader, read_uvarint, response_header,
                                  skip_tagged_fields, uvarint_bytes)

MAX_VERSION = 12  # v12 (transaction version 2) is v11 on the wire
FLEXIBLE_FROM = 9
CURRENT_LEADER_FROM = 10

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT = struct.Struct(">hi")
# partition index, error code, base offset, then per version: log append time (v2+), log start (v5+)
_PART = (struct.Struct(">ihq"), struct.Struct(">ihqq"), struct.Struct(">ihqqq"))


@dataclass(slots=True)
class PartitionProduceData:
    """One partition's record set: a view into the request frame (writable when the frame is)."""

    index: int
    records: memoryview | None


@dataclass(slots=True)
class TopicProduceData:
    """The partitions of one topic in a Produce request."""

    name: str
    partition_data: list[PartitionProduceData]


@dataclass(slots=True)
class ProduceRequest:
    """A decoded Produce request (the attribute names of kafka-python's ProduceRequest)."""

    transactional_id: str | None
    acks: int
    timeout_ms: int
    topic_data: list[TopicProduceData]


@dataclass(slots=True)
class PartitionProduceResult:
    """What the response says about one partition."""

    index: int
    error_code: int
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    record_errors: Sequence[tuple[int, str | None]] = ()  # v8+: (batch index, message) per bad record
    error_message: str | None = None  # v8+
    current_leader: tuple[int, int] | None = None  # v10+ (KIP-951): (leader id, epoch) on NOT_LEADER_OR_FOLLOWER


def decode_produce_request(header: RequestHeader, frame: bytes | bytearray | memoryview) -> ProduceRequest:
    """Decode the Produce body after `header`; raises MalformedRequest for anything that doesn't parse."""
    version = header.api_version
    if not 0 <= version <= MAX_VERSION:
        raise MalformedRequest(f"Produce v{version} is not decodable here")
    mv = memoryview(frame)
    end = len(mv)
    try:
        return _decode(mv, header.size, end, version, version >= FLEXIBLE_FROM)
    except MalformedRequest:
        raise
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise MalformedRequest(f"cannot decode ProduceRequest v{version}: {exc}") from exc


def read_length(mv: memoryview, pos: int, flexible: bool, fixed: struct.Struct) -> tuple[int, int]:
    """A string/array/bytes length (-1 = null): compact (varint - 1) when flexible, else `fixed`."""
    if flexible:
        n = mv[pos]
        if n < 0x80:
            return n - 1, pos + 1
        n, pos = read_uvarint(mv, pos)
        return n - 1, pos
    return fixed.unpack_from(mv, pos)[0], pos + fixed.size


def skip_tags(mv: memoryview, pos: int) -> int:
    """The position after a tagged-fields section (the OffsetCommit codec shares it)."""
    return skip_tagged_fields(mv, pos) if mv[pos] else pos + 1  # almost always an empty section


def _decode(mv: memoryview, pos: int, end: int, version: int, flexible: bool) -> ProduceRequest:
    transactional_id = None
    if version >= 3:
        n, pos = read_length(mv, pos, flexible, _I16)
        if n >= 0:
            if pos + n > end:
                raise MalformedRequest("transactional_id runs past the end of the frame")
            transactional_id = str(mv[pos:pos + n], "utf-8")
            pos += n
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(mv, pos)
    n_topics, pos = read_length(mv, pos + 6, flexible, _I32)
    if not 0 <= n_topics <= end - pos:  # null, or more elements than bytes left
        raise MalformedRequest(f"bad topic count {n_topics}")
    topics = []
    for _ in range(n_topics):
        n, pos = read_length(mv, pos, flexible, _I16)
        if not 0 <= n <= end - pos:
            raise MalformedRequest(f"bad topic name length {n}")
        name = str(mv[pos:pos + n], "utf-8")
        n_parts, pos = read_length(mv, pos + n, flexible, _I32)
        if not 0 <= n_parts <= end - pos:
            raise MalformedRequest(f"bad partition count {n_parts}")
        parts = []
        for _ in range(n_parts):
            (index,) = _I32.unpack_from(mv, pos)
            size, pos = read_length(mv, pos + 4, flexible, _I32)
            records = None
            if size >= 0:
                if pos + size > end:
                    raise MalformedRequest("record set runs past the end of the frame")
                records = mv[pos:pos + size]
                pos += size
            if flexible:
                pos = skip_tags(mv, pos)
            parts.append(PartitionProduceData(index, records))
        if flexible:
            pos = skip_tags(mv, pos)
        topics.append(TopicProduceData(name, parts))
    if flexible:
        pos = skip_tags(mv, pos)
    if pos > end:
        raise MalformedRequest("tagged fields run past the end of the frame")
    return ProduceRequest(transactional_id, acks, timeout_ms, topics)


def _nullable_string(value: str | None, flexible: bool) -> bytes:
    if value is None:
        return b"\x00" if flexible else b"\xff\xff"
    raw = value.encode()
    return (uvarint_bytes(len(raw) + 1) if flexible else _I16.pack(len(raw))) + raw


def _error_details(p: PartitionProduceResult, flexible: bool) -> bytes:
    """record_errors (batch index + message, each with tagged fields when flexible) and error_message."""
    out = bytearray(uvarint_bytes(len(p.record_errors) + 1) if flexible else _I32.pack(len(p.record_errors)))
    for index, message in p.record_errors:
        out += _I32.pack(index) + _nullable_string(message, flexible)
        if flexible:
            out.append(0)
    out += _nullable_string(p.error_message, flexible)
    return bytes(out)


def _tag(tag: int, value: bytes) -> bytes:
    """A tagged-fields section holding one field."""
    return b"\x01" + uvarint_bytes(tag) + uvarint_bytes(len(value)) + value


def _node_endpoints(nodes: Sequence[tuple[int, str, int, str | None]]) -> bytes:
    """The top-level tagged fields: NodeEndpoints (tag 0) when a partition names a current leader."""
    if not nodes:
        return b"\x00"
    value = bytearray(uvarint_bytes(len(nodes) + 1))
    for node_id, host, port, rack in nodes:
        value += _I32.pack(node_id) + _nullable_string(host, True) + _I32.pack(port) + _nullable_string(rack, True)
        value.append(0)
    return _tag(0, bytes(value))


def encode_produce_response(
    header: RequestHeader,
    topics: Sequence[tuple[str, Sequence[PartitionProduceResult]]],
    throttle_time_ms: int = 0,
    node_endpoints: Sequence[tuple[int, str, int, str | None]] = (),
) -> bytes:
    """A framed Produce response at the request's version (record errors and messages from v8; from v10 the
    current leader of a NOT_LEADER_OR_FOLLOWER partition and the `node_endpoints` (id, host, port, rack))."""
    version = header.api_version
    if not 0 <= version <= MAX_VERSION:
        raise ValueError(f"Produce v{version} is not encodable here")
    flexible = version >= FLEXIBLE_FROM
    part = _PART[0 if version < 2 else 1 if version < 5 else 2]
    # v8+: an empty record_errors array and a null error_message follow each partition
    tail = (b"\x01\x00" if flexible else b"\x00\x00\x00\x00\xff\xff") if version >= 8 else b""
    out = bytearray(response_header(header))
    out += uvarint_bytes(len(topics) + 1) if flexible else _I32.pack(len(topics))
    for name, parts in topics:
        raw = name.encode()
        out += (uvarint_bytes(len(raw) + 1) if flexible else _I16.pack(len(raw))) + raw
        out += uvarint_bytes(len(parts) + 1) if flexible else _I32.pack(len(parts))
        for p in parts:
            if version < 2:
                out += part.pack(p.index, p.error_code, p.base_offset)
            elif version < 5:
                out += part.pack(p.index, p.error_code, p.base_offset, p.log_append_time_ms)
            else:
                out += part.pack(p.index, p.error_code, p.base_offset, p.log_append_time_ms, p.log_start_offset)
            if version >= 8 and (p.record_errors or p.error_message is not None):
                out += _error_details(p, flexible)
            else:
                out += tail
            if version >= CURRENT_LEADER_FROM and p.current_leader is not None:
                out += _tag(0, _I32.pack(p.current_leader[0]) + _I32.pack(p.current_leader[1]) + b"\x00")
            elif flexible:
                out.append(0)  # partition tagged fields
        if flexible:
            out.append(0)  # topic tagged fields
    if version >= 1:
        out += _I32.pack(throttle_time_ms)
    if version >= CURRENT_LEADER_FROM:
        out += _node_endpoints(node_endpoints)
    elif flexible:
        out.append(0)
    return _I32.pack(len(out)) + bytes(out)
