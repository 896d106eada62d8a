"""Fetch responses encoded by hand so record bytes go from segment files to the socket untouched.

The generic codec would need every record set in memory; here the response is a list of parts:
`bytes` for the protocol fields and opaque "file chunks" (anything with a `size`, e.g. the log's
FileSlice) that the server sends with sendfile. Versions 4-17, flexible (compact lengths, tagged
fields) from 12, topics named by id from 13, exactly as Kafka's FetchResponse.json.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field
from typing import Any

from pylog.protocol.codec import RequestHeader, uvarint_bytes

MIN_VERSION = 4
READ_COMMITTED = 1  # the isolation_level of Fetch v4+ and ListOffsets v2+ (0 = read_uncommitted)
MAX_VERSION = 17
FLEXIBLE_FROM = 12
TOPIC_IDS_FROM = 13
NODE_ENDPOINTS_FROM = 16

_ZERO_UUID = uuid.UUID(int=0)
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_PART_V4 = struct.Struct(">ihqq")  # partition, error, high watermark, last stable offset
_I64 = struct.Struct(">q")
_ABORTED = struct.Struct(">qq")  # producer id, first offset


@dataclass(slots=True)
class FetchPartitionData:
    """One partition's part of a Fetch response."""

    partition: int
    error_code: int = 0
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    preferred_read_replica: int = -1
    aborted_transactions: list[tuple[int, int]] | None = None  # (producer id, first offset); null if uncommitted
    records: list[Any] = field(default_factory=list)  # bytes or file chunks with a .size
    diverging_epoch: tuple[int, int] | None = None  # v12+ (KIP-320): (epoch, end offset) the fetcher truncates to
    current_leader: tuple[int, int] | None = None  # v12+ (KIP-951): (leader id, leader epoch) on NOT_LEADER

    @property
    def records_size(self) -> int:
        """Bytes of record data this partition carries."""
        return sum(len(c) if isinstance(c, (bytes, bytearray, memoryview)) else c.size for c in self.records)


def _count(n: int, flexible: bool) -> bytes:
    """An array length: compact (n + 1 as a varint) when flexible, else int32."""
    return uvarint_bytes(n + 1) if flexible else _I32.pack(n)


def _string(value: str | None, flexible: bool) -> bytes:
    if value is None:
        return b"\x00" if flexible else b"\xff\xff"
    raw = value.encode()
    return (uvarint_bytes(len(raw) + 1) if flexible else _I16.pack(len(raw))) + raw


def _tagged(fields: list[tuple[int, bytes]]) -> bytes:
    """A tagged-fields section: count, then tag, size and value of each (in tag order)."""
    out = bytearray(uvarint_bytes(len(fields)))
    for tag, value in fields:
        out += uvarint_bytes(tag) + uvarint_bytes(len(value)) + value
    return bytes(out)


def _partition_tags(p: FetchPartitionData) -> bytes:
    """DivergingEpoch (tag 0) and CurrentLeader (tag 1), each a struct with its own empty tag section."""
    fields = []
    if p.diverging_epoch is not None:
        fields.append((0, _I32.pack(p.diverging_epoch[0]) + _I64.pack(p.diverging_epoch[1]) + b"\x00"))
    if p.current_leader is not None:
        fields.append((1, _I32.pack(p.current_leader[0]) + _I32.pack(p.current_leader[1]) + b"\x00"))
    return _tagged(fields)


def _node_endpoints(nodes: list[tuple[int, str, int, str | None]]) -> bytes:
    """NodeEndpoints (top-level tag 0, v16+): the brokers named by CurrentLeader fields."""
    if not nodes:
        return b"\x00"
    value = bytearray(_count(len(nodes), True))
    for node_id, host, port, rack in nodes:
        value += _I32.pack(node_id) + _string(host, True) + _I32.pack(port) + _string(rack, True) + b"\x00"
    return _tagged([(0, bytes(value))])


def encode_fetch_response(
    header: RequestHeader,
    topics: list[tuple[str, list[FetchPartitionData]]],
    throttle_time_ms: int = 0,
    error_code: int = 0,
    session_id: int = 0,
    topic_ids: list[uuid.UUID | None] | None = None,
    node_endpoints: list[tuple[int, str, int, str | None]] = (),
) -> list[Any]:
    """Encode a framed Fetch response (v4-v17) as parts: bytes and file chunks, in send order.

    From v13 each topic is named by its id: `topic_ids` runs parallel to `topics`.
    """
    version = header.api_version
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ValueError(f"Fetch v{version} is not encodable here")
    flexible = version >= FLEXIBLE_FROM
    parts: list[Any] = []
    buf = bytearray()
    buf += _I32.pack(header.correlation_id)
    if flexible:
        buf.append(0)  # response header v1: its tagged fields
    buf += _I32.pack(throttle_time_ms)
    if version >= 7:
        buf += _I16.pack(error_code)
        buf += _I32.pack(session_id)
    buf += _count(len(topics), flexible)
    total = 0
    for i, (topic, partitions) in enumerate(topics):
        if version >= TOPIC_IDS_FROM:
            buf += ((topic_ids[i] if topic_ids else None) or _ZERO_UUID).bytes  # None: the zero uuid as decoded
        else:
            buf += _string(topic, flexible)
        buf += _count(len(partitions), flexible)
        for p in partitions:
            buf += _PART_V4.pack(p.partition, p.error_code, p.high_watermark, p.last_stable_offset)
            if version >= 5:
                buf += _I64.pack(p.log_start_offset)
            aborted = p.aborted_transactions
            if aborted is None:
                buf += b"\x00" if flexible else _I32.pack(-1)
            else:
                buf += _count(len(aborted), flexible)
                for producer_id, first_offset in aborted:
                    buf += _ABORTED.pack(producer_id, first_offset)
                    if flexible:
                        buf.append(0)
            if version >= 11:
                buf += _I32.pack(p.preferred_read_replica)
            size = p.records_size
            buf += uvarint_bytes(size + 1) if flexible else _I32.pack(size)
            for chunk in p.records:
                if isinstance(chunk, (bytes, bytearray, memoryview)):
                    buf += chunk
                else:
                    total += len(buf)
                    parts.append(bytes(buf))
                    buf = bytearray()
                    parts.append(chunk)
                    total += chunk.size
            if flexible:
                buf += _partition_tags(p)
        if flexible:
            buf.append(0)  # topic tagged fields
    if flexible:
        buf += _node_endpoints(list(node_endpoints)) if version >= NODE_ENDPOINTS_FROM else b"\x00"
    total += len(buf)
    parts.append(bytes(buf))
    parts[0] = _I32.pack(total) + parts[0]
    return parts
