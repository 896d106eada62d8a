"""Producer state snapshot files, `<20-digit offset>.snapshot`, in Kafka's format.

Kafka's ProducerStateManager schema, version 1, big-endian:

    version int16 (1) | crc uint32 (CRC32C of everything after it) | entry count int32 |
    entries of { producer_id int64, epoch int16, last_sequence int32, last_offset int64,
                 offset_delta int32, timestamp int64, coordinator_epoch int32,
                 current_txn_first_offset int64 }

Only each producer's last batch is stored (as Kafka does), so after a restart the older four
batches of a producer are known only if the log after the snapshot holds them. The offset in
the name is the log offset the state reflects (everything below it).
"""

from __future__ import annotations

import os
import struct
from typing import Iterable

from crc32c import crc32c

from pylog.log.checkpoint import write_atomic
from pylog.log.producer_state import BatchMetadata, ProducerEntry

SNAPSHOT_SUFFIX = ".snapshot"
VERSION = 1
_HEAD = struct.Struct(">hIi")  # version, crc, entry count
_ENTRY = struct.Struct(">qhiqiqiq")
_CRC_START = 6  # the CRC covers everything after version and crc


class CorruptSnapshotError(Exception):
    """A snapshot file that cannot be trusted (bad version, size or CRC)."""


def snapshot_path(dir: str, offset: int) -> str:
    """`<dir>/<20-digit offset>.snapshot`."""
    return os.path.join(dir, f"{offset:020d}{SNAPSHOT_SUFFIX}")


def list_snapshots(dir: str) -> list[int]:
    """Offsets of the snapshot files in `dir`, ascending."""
    out = []
    for name in os.listdir(dir):
        stem = name[: -len(SNAPSHOT_SUFFIX)]
        if name.endswith(SNAPSHOT_SUFFIX) and len(stem) == 20 and stem.isdigit():
            out.append(int(stem))
    return sorted(out)


def encode_snapshot(entries: Iterable[ProducerEntry]) -> bytes:
    """The bytes of a snapshot holding `entries`."""
    body = bytearray()
    count = 0
    for e in entries:
        last = e.batches[-1] if e.batches else None
        body += _ENTRY.pack(
            e.producer_id, e.epoch,
            last.last_seq if last else -1, last.last_offset if last else -1, last.offset_delta if last else 0,
            e.last_timestamp, e.coordinator_epoch, e.current_txn_first_offset)
        count += 1
    tail = struct.pack(">i", count) + bytes(body)
    return struct.pack(">hI", VERSION, crc32c(tail)) + tail


def decode_snapshot(data: bytes) -> list[ProducerEntry]:
    """Parse a snapshot; raises CorruptSnapshotError when it cannot be trusted."""
    if len(data) < _HEAD.size:
        raise CorruptSnapshotError(f"Snapshot is truncated: {len(data)} bytes")
    version, crc, count = _HEAD.unpack_from(data, 0)
    if version != VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    if count < 0 or len(data) != _HEAD.size + count * _ENTRY.size:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: {count} entries in {len(data)} bytes")
    computed = crc32c(data[_CRC_START:])
    if computed != crc:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}")
    entries = []
    for pid, epoch, seq, offset, delta, ts, coord_epoch, txn_first in _ENTRY.iter_unpack(data[_HEAD.size:]):
        batches = [BatchMetadata(seq, offset, delta, ts)] if offset >= 0 else []
        entries.append(ProducerEntry(pid, epoch, batches, coord_epoch, ts, txn_first))
    return entries


def write_snapshot(dir: str, offset: int, entries: Iterable[ProducerEntry], sync: bool) -> None:
    """Write `<offset>.snapshot` atomically (a crash leaves the old file or the new, never half)."""
    write_atomic(snapshot_path(dir, offset), encode_snapshot(entries), sync)


def read_snapshot(dir: str, offset: int) -> list[ProducerEntry]:
    """Read `<offset>.snapshot`; raises CorruptSnapshotError or OSError."""
    with open(snapshot_path(dir, offset), "rb") as f:
        return decode_snapshot(f.read())


def delete_snapshot(dir: str, offset: int) -> None:
    """Remove `<offset>.snapshot` if present."""
    try:
        os.unlink(snapshot_path(dir, offset))
    except FileNotFoundError:
        pass
