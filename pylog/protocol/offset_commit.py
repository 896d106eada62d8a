"""OffsetCommit requests decoded and responses encoded by hand: a synchronous committer's whole round trip.

A consumer that commits after every record sends one small OffsetCommit per record, so the
schema-compiled codec's per-message objects (a container per topic and partition, tagged-field
bookkeeping, the response's message tree) were a large part of the broker's CPU per commit. Versions
2-9 (flexible from 8) exactly as Kafka's OffsetCommitRequest.json and OffsetCommitResponse.json; unit
tests check both directions against kafka-python's codec.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Mapping, Sequence

from pylog.protocol.codec import MalformedRequest, RequestHeader, response_header, uvarint_bytes
from pylog.protocol.produce import read_length, skip_tags

MIN_VERSION, MAX_VERSION = 2, 9
FLEXIBLE_FROM = 8

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_OFFSET = struct.Struct(">iq")  # partition index, committed offset
_OFFSET_EPOCH = struct.Struct(">iqi")  # v6+: and the committed leader epoch
_RESULT = struct.Struct(">ih")  # partition index, error code


@dataclass(slots=True)
class OffsetCommitPartition:
    """One partition's commit (the attribute names of kafka-python's request)."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    committed_metadata: str | None


@dataclass(slots=True)
class OffsetCommitTopic:
    """The partitions of one topic in an OffsetCommit request."""

    name: str
    partitions: list[OffsetCommitPartition]


@dataclass(slots=True)
class OffsetCommitRequest:
    """A decoded OffsetCommit request (the attribute names of kafka-python's OffsetCommitRequest)."""

    group_id: str | None
    generation_id_or_member_epoch: int
    member_id: str | None
    group_instance_id: str | None
    retention_time_ms: int
    topics: list[OffsetCommitTopic]


def decode_offset_commit_request(header: RequestHeader, frame: bytes | bytearray | memoryview) -> OffsetCommitRequest:
    """Decode the OffsetCommit body after `header`; raises MalformedRequest for anything that doesn't parse."""
    version = header.api_version
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise MalformedRequest(f"OffsetCommit v{version} is not decodable here")
    mv = memoryview(frame)
    try:
        return _decode(mv, header.size, len(mv), version, version >= FLEXIBLE_FROM)
    except MalformedRequest:
        raise
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise MalformedRequest(f"cannot decode OffsetCommitRequest v{version}: {exc}") from exc


def _string(mv: memoryview, pos: int, end: int, flexible: bool) -> tuple[str | None, int]:
    if flexible and mv[pos] < 0x80:  # a compact length of one byte: every string of a commit but huge metadata
        n = mv[pos] - 1
        pos += 1
    else:
        n, pos = read_length(mv, pos, flexible, _I16)
    if n < 0:
        return None, pos
    stop = pos + n
    if stop > end:
        raise MalformedRequest("a string runs past the end of the frame")
    return str(mv[pos:stop], "utf-8"), stop


def _count(mv: memoryview, pos: int, end: int, flexible: bool, what: str) -> tuple[int, int]:
    n, pos = read_length(mv, pos, flexible, _I32)
    if not 0 <= n <= end - pos:  # null, or more elements than bytes left
        raise MalformedRequest(f"bad {what} count {n}")
    return n, pos


def _decode(mv: memoryview, pos: int, end: int, version: int, flexible: bool) -> OffsetCommitRequest:
    group_id, pos = _string(mv, pos, end, flexible)
    (generation,) = _I32.unpack_from(mv, pos)
    member_id, pos = _string(mv, pos + 4, end, flexible)
    instance_id = None
    if version >= 7:
        instance_id, pos = _string(mv, pos, end, flexible)
    retention = -1
    if version <= 4:
        (retention,) = _I64.unpack_from(mv, pos)
        pos += 8
    part = _OFFSET_EPOCH if version >= 6 else _OFFSET
    n_topics, pos = _count(mv, pos, end, flexible, "topic")
    topics = []
    for _ in range(n_topics):
        name, pos = _string(mv, pos, end, flexible)
        n_parts, pos = _count(mv, pos, end, flexible, "partition")
        parts = []
        for _ in range(n_parts):
            fields = part.unpack_from(mv, pos)
            metadata, pos = _string(mv, pos + part.size, end, flexible)
            if flexible:
                pos = skip_tags(mv, pos)
            parts.append(OffsetCommitPartition(fields[0], fields[1], fields[2] if version >= 6 else -1, metadata))
        if flexible:
            pos = skip_tags(mv, pos)
        topics.append(OffsetCommitTopic(name or "", parts))
    if flexible:
        pos = skip_tags(mv, pos)
    if pos > end:
        raise MalformedRequest("the request runs past the end of the frame")
    return OffsetCommitRequest(group_id, generation, member_id, instance_id, retention, topics)


def encode_offset_commit_response(header: RequestHeader, order: Sequence[tuple[str, int]], errors: Mapping[tuple[str, int], int],
                                  throttle_time_ms: int = 0) -> bytes:
    """A framed OffsetCommit response at the request's version: each partition of `order` (once) with its error
    code, grouped by topic in request order."""
    version = header.api_version
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ValueError(f"OffsetCommit v{version} is not encodable here")
    flexible = version >= FLEXIBLE_FROM
    topics: dict[str, list[tuple[int, int]]] = {}
    for tp in dict.fromkeys(order) if len(order) > 1 else order:
        topics.setdefault(tp[0], []).append((tp[1], errors[tp]))
    out = bytearray(response_header(header))
    if version >= 3:
        out += _I32.pack(throttle_time_ms)
    out += uvarint_bytes(len(topics) + 1) if flexible else _I32.pack(len(topics))
    for name, parts in topics.items():
        raw = name.encode()
        out += (uvarint_bytes(len(raw) + 1) if flexible else _I16.pack(len(raw))) + raw
        out += uvarint_bytes(len(parts) + 1) if flexible else _I32.pack(len(parts))
        for index, error in parts:
            out += _RESULT.pack(index, error)
            if flexible:
                out.append(0)  # partition tagged fields
        if flexible:
            out.append(0)  # topic tagged fields
    if flexible:
        out.append(0)
    return _I32.pack(len(out)) + bytes(out)
