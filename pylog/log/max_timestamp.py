"""ListOffsets MAX_TIMESTAMP (-3, KIP-734): the offset of the record that carries the largest timestamp.

A segment (and its time index) only knows the last offset of the batch holding its largest
timestamp: that is Kafka's time index semantics and stays so. The record itself is found the way
Kafka does since KAFKA-16310: take the segment with the largest timestamp (the first such segment on
ties), read from the offset-index position of that batch to the first batch whose max timestamp
equals it, and scan that batch's records (decompressing if needed) for the first one carrying it.
"""

from __future__ import annotations

from typing import Sequence

from pylog.log.results import OffsetTimestamp
from pylog.log.segment import LogSegment
from pylog.protocol.records import read_records


def max_timestamp_offset(segments: Sequence[LogSegment]) -> OffsetTimestamp | None:
    """(offset, timestamp) of the first record with the log's largest timestamp; None if no timestamps."""
    if not segments:
        return None
    seg = max(segments, key=lambda s: s.max_timestamp)
    ts = seg.max_timestamp
    if ts < 0:
        return None
    _, pos = seg.index.lookup(seg.offset_of_max_timestamp)
    for b in seg.walk(pos):
        if b.max_timestamp != ts:
            continue
        records = read_records(seg.read_batch_bytes(b.position, b.size))
        for r in records:
            if r.timestamp == ts:
                return OffsetTimestamp(r.offset, ts)
        # A batch header whose max timestamp no record carries (a client's inconsistent batch):
        # answer with a pair that exists, the batch's first record with its largest timestamp.
        if records:
            best = max(records, key=lambda r: r.timestamp)
            return OffsetTimestamp(best.offset, best.timestamp)
        return None
    return None
