"""Producer state and the log kept consistent: loading, rebuilding after truncation, snapshots.

Kafka's rules: at load (and after a truncation) the state comes from the latest snapshot at or
below the log end offset -- snapshots above it describe data that is gone and are deleted, and
a corrupt one is deleted and the next older one tried -- and then every batch after the
snapshot is replayed from the log. Snapshots below the log start offset are deleted too: the
batches between them and the log start are gone, so replaying from them would leave stale
sequences. Snapshots are taken when a segment rolls and when the log closes.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from pylog.log.control import ControlRecordError, read_marker
from pylog.log.producer_snapshot import (CorruptSnapshotError, delete_snapshot, list_snapshots, read_snapshot,
                                         write_snapshot)
from pylog.protocol.records import BATCH_OVERHEAD, parse_header

if TYPE_CHECKING:
    from pylog.log.log import Log

log = logging.getLogger("pylog.log")

_INT_MAX = 2**31 - 1


def load_producer_state(plog: "Log") -> None:
    """Rebuild `plog.producer_state` from its latest usable snapshot plus the log after it."""
    psm = plog.producer_state
    start, end = plog.log_start_offset, plog.next_offset
    usable = []
    for offset in list_snapshots(plog.dir):
        if start <= offset <= end:
            usable.append(offset)
        else:
            delete_snapshot(plog.dir, offset)
    psm.clear(start)
    psm.last_snapshot_offset = start  # as Kafka: nothing worth a snapshot until the log grows past its start
    for offset in reversed(usable):
        try:
            psm.load_entries(read_snapshot(plog.dir, offset), offset)
            break
        except (CorruptSnapshotError, OSError) as exc:
            log.warning("[ProducerStateManager partition=%s] Failed to load producer snapshot at offset %d: %s",
                        plog.name, offset, exc)
            delete_snapshot(plog.dir, offset)
    _replay(plog)


def reload_after_truncation(plog: "Log") -> None:
    """Make the state match a log just truncated to its end offset.

    A truncation can only remove producers: with none known there is nothing to replay (Kafka skips
    the scan too, for logs of producers that never used idempotence); only later snapshots go.
    """
    psm = plog.producer_state
    if psm.producers:
        load_producer_state(plog)
        return
    end = plog.next_offset
    for offset in list_snapshots(plog.dir):
        if offset > end:
            delete_snapshot(plog.dir, offset)
    psm.map_end_offset = end
    psm.last_snapshot_offset = min(psm.last_snapshot_offset, end)


def _replay(plog: "Log") -> None:
    """Feed every batch from the state's end offset to the log end offset into the state.

    Only batch headers are read (one pread each), never record bytes: a follower's truncation
    replays up to a segment of data on the event loop.
    """
    psm = plog.producer_state
    offset = max(psm.map_end_offset, plog.log_start_offset)
    psm.map_end_offset = offset
    if offset >= plog.next_offset:
        return
    for sl in plog.read(offset, _INT_MAX):
        fd = os.open(sl.path, os.O_RDONLY)
        try:
            pos, end = sl.position, sl.position + sl.size
            while end - pos >= BATCH_OVERHEAD:
                h = parse_header(os.pread(fd, BATCH_OVERHEAD, pos))
                if h.base_offset + h.last_offset_delta >= offset:
                    psm.update((h,))
                    if h.is_control and h.producer_id >= 0:
                        try:
                            marker = read_marker(h, os.pread(fd, h.size, pos))
                        except ControlRecordError:
                            marker = None  # as the log's own tracking: the batch stays, only its epoch is unknown
                        if marker is not None:
                            psm.note_marker(h.producer_id, marker.coordinator_epoch)
                pos += h.size
        finally:
            os.close(fd)


def take_snapshot(plog: "Log", sync: bool) -> None:
    """Write the state to `<end offset>.snapshot` unless one is already there for that offset."""
    psm = plog.producer_state
    offset = psm.map_end_offset
    if offset <= psm.last_snapshot_offset:
        return
    write_snapshot(plog.dir, offset, psm.producers.values(), sync)
    psm.last_snapshot_offset = offset


def delete_snapshots_before(plog: "Log", offset: int) -> None:
    """Remove snapshot files below `offset` (their segments are gone)."""
    for off in list_snapshots(plog.dir):
        if off < offset:
            delete_snapshot(plog.dir, off)


def restart_producer_state_at(plog: "Log", offset: int) -> None:
    """The log restarts empty at `offset`: no producers, no snapshots."""
    delete_snapshots_before(plog, 2**63 - 1)
    plog.producer_state.clear(offset)
    plog.producer_state.last_snapshot_offset = offset
