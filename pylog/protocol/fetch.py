"""Fetch responses encoded by hand so record bytes go from segment files to the socket untouched.

The generic codec would need every record set in memory; here the response is a list of parts:
`bytes` for the protocol fields and opaque "file chunks" (anything with a `size`, e.g. the log's
FileSlice) that the server sends with sendfile. Only the non-flexible versions 4-11 are encoded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from pylog.protocol.codec import RequestHeader

MIN_VERSION = 4
READ_COMMITTED = 1  # the isolation_level of Fetch v4+ and ListOffsets v2+ (0 = read_uncommitted)
MAX_VERSION = 11

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

    @property
    def records_size(self) -> int:
        """Bytes of record data this partition carries."""
        return sum(len(c) if isinstance(c, (bytes, bytearray, memoryview)) else c.size for c in self.records)


def encode_fetch_response(
    header: RequestHeader,
    topics: list[tuple[str, list[FetchPartitionData]]],
    throttle_time_ms: int = 0,
    error_code: int = 0,
    session_id: int = 0,
) -> list[Any]:
    """Encode a framed Fetch response (v4-v11) as parts: bytes and file chunks, in send order."""
    version = header.api_version
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise ValueError(f"Fetch v{version} is not encodable here")
    parts: list[Any] = []
    buf = bytearray()
    buf += _I32.pack(header.correlation_id)
    buf += _I32.pack(throttle_time_ms)
    if version >= 7:
        buf += _I16.pack(error_code)
        buf += _I32.pack(session_id)
    buf += _I32.pack(len(topics))
    total = 0
    for topic, partitions in topics:
        name = topic.encode()
        buf += _I16.pack(len(name)) + name
        buf += _I32.pack(len(partitions))
        for p in partitions:
            buf += _PART_V4.pack(p.partition, p.error_code, p.high_watermark, p.last_stable_offset)
            if version >= 5:
                buf += _I64.pack(p.log_start_offset)
            aborted = p.aborted_transactions
            if aborted is None:
                buf += _I32.pack(-1)
            else:
                buf += _I32.pack(len(aborted))
                for producer_id, first_offset in aborted:
                    buf += _ABORTED.pack(producer_id, first_offset)
            if version >= 11:
                buf += _I32.pack(p.preferred_read_replica)
            size = p.records_size
            buf += _I32.pack(size)
            for chunk in p.records:
                if isinstance(chunk, (bytes, bytearray, memoryview)):
                    buf += chunk
                else:
                    total += len(buf)
                    parts.append(bytes(buf))
                    buf = bytearray()
                    parts.append(chunk)
                    total += chunk.size
    total += len(buf)
    parts.append(bytes(buf))
    parts[0] = _I32.pack(total) + parts[0]
    return parts
