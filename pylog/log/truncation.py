"""Truncation of a partition's log: to an offset (a follower's divergence, KIP-101/279) or fully.

Kept apart from log.py so the Log class stays readable; these functions own the Log's
segments, offsets and the producer/transaction state that must follow a truncation.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pylog.log.loader import new_segment
from pylog.log.producer_recovery import reload_after_truncation, restart_producer_state_at
from pylog.log.stable import OpenTransactions
from pylog.log.txn_tracking import rebuild_open_transactions

if TYPE_CHECKING:
    from pylog.log.log import Log

log = logging.getLogger("pylog.log")


def truncate_to(lg: Log, offset: int) -> bool:
    """Remove everything from the batch containing `offset` on; False if nothing to remove."""
    if offset < 0:
        raise ValueError(f"Cannot truncate partition {lg.name} to a negative offset ({offset}).")
    if offset >= lg.next_offset:
        log.info(
            "[Log partition=%s] Truncating to %d has no effect as the largest offset in the log is %d",
            lg.name, offset, lg.next_offset - 1,
        )
        return False
    log.info("[Log partition=%s] Truncating to offset %d", lg.name, offset)
    if lg.segments[0].base_offset > offset:
        lg.truncate_fully_and_start_at(offset)
        return True
    while len(lg.segments) > 1 and lg.segments[-1].base_offset > offset:
        lg._bases.pop()
        lg.segments.pop().delete()
    active = lg.segments[-1]
    active.truncate_to(offset)
    lg.next_offset = active.read_next_offset()
    lg._dir_dirty = True
    lg.epoch_cache.truncate_from_end(lg.next_offset)
    lg.log_start_offset = min(lg.log_start_offset, lg.next_offset)
    lg._hw = min(lg._hw, lg.next_offset)
    reload_after_truncation(lg)  # drops snapshots past the new end, replays up to it if needed
    if lg._flush_pending_upto is not None and lg._flush_pending_upto > lg.next_offset:
        lg._flush_pending_upto = None
    lg._lower_recovery_point(lg.next_offset)
    if lg.has_txn_batches:  # a truncated marker may reopen a transaction
        rebuild_open_transactions(lg)
    return True


def truncate_fully_and_start_at(lg: Log, offset: int) -> None:
    """Delete all data and restart the log empty at `offset` (start = LEO = HW = offset)."""
    log.info("[Log partition=%s] Truncate fully and start at offset %d", lg.name, offset)
    for seg in lg.segments:
        seg.delete()
    lg.segments = [new_segment(lg.dir, offset, lg.config)]
    lg._bases = [offset]
    lg.next_offset = offset
    lg.log_start_offset = offset
    lg._hw = offset
    lg.open_txns = OpenTransactions()
    lg._dir_dirty = True
    lg._flush_pending_upto = None
    lg._unflushed_messages = 0
    lg.epoch_cache.clear_and_flush()
    restart_producer_state_at(lg, offset)
    lg._truncations += 1
    lg.recovery_point = offset
    if lg.recovery_point_listener is not None:
        lg.recovery_point_listener(lg)
