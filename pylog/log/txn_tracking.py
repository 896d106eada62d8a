"""Keeping a log's open transactions, LSO and `.txnindex` in step with its batches.

Appends fold each transactional or control batch into `Log.open_txns` and index aborts in the
active segment. After truncation or at load the open transactions are rebuilt by replaying the
batch headers (markers are read in full), as Kafka's producer state reload does; the `.txnindex`
files themselves are already consistent (truncated with their segments).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

from pylog.log.control import read_marker
from pylog.log.stable import OpenTransactions
from pylog.protocol.records import BATCH_OVERHEAD, CONTROL_MASK, TRANSACTIONAL_MASK, BatchHeader, parse_header

if TYPE_CHECKING:
    from pylog.log.log import Log

_TXN_BITS = TRANSACTIONAL_MASK | CONTROL_MASK


def track_appended(log: Log, buf: bytes | bytearray | memoryview, headers: Sequence[BatchHeader]) -> None:
    """Fold just-appended batches (headers carry their offsets and positions in `buf`) into the log's state."""
    view = None
    for h in headers:
        if not h.attributes & _TXN_BITS:
            continue
        log.has_txn_batches = True
        marker = None
        if h.is_control:
            view = view if view is not None else memoryview(buf)
            marker = read_marker(h, view[h.position:h.position + h.size])
            if marker is not None:
                log.producer_state.note_marker(h.producer_id, marker.coordinator_epoch)
        done = log.open_txns.on_batch(h, marker)
        if done is not None and done[1] is not None:
            log.active_segment.txn_index.append(done[1])


def rebuild_open_transactions(log: Log) -> None:
    """Recompute `log.open_txns` from the batches in the log (after load or truncation)."""
    open_txns = OpenTransactions()
    for seg in log.segments:
        if seg.size == 0:
            continue
        fd = os.open(seg.path, os.O_RDONLY)
        try:
            for info in seg.walk():
                raw = os.pread(fd, BATCH_OVERHEAD, info.position)
                h = parse_header(raw)
                if not h.attributes & _TXN_BITS or info.last_offset < log.log_start_offset:
                    continue
                marker = read_marker(h, os.pread(fd, info.size, info.position)) if h.is_control else None
                open_txns.on_batch(h, marker)
                log.has_txn_batches = True
        finally:
            os.close(fd)
    log.open_txns = open_txns
