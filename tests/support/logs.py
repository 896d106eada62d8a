"""Build real partition logs for unit tests."""

from __future__ import annotations

from pylog.protocol import records


def append(log, values, epoch: int, leader: bool = True, base: int | None = None) -> None:
    """Append one batch per value, as leader (offsets assigned) or follower (offsets given)."""
    for v in values:
        buf = bytearray(records.build_batch([(None, v, [], 1000)],
                                            base_offset=log.log_end_offset if base is None else base,
                                            leader_epoch=epoch))
        headers = records.validate_batches(buf)
        if leader:
            log.append_as_leader(buf, headers, epoch)
        else:
            log.append_as_follower(buf, headers)
