"""The Log's own segment list: its snapshot, its generation, and the operations retention, the cleaner
and truncation go through (remove the oldest, replace a cleaned run, truncate)."""

from __future__ import annotations

import os

import pytest
from logtest import BASE_TS, append, offsets_in, slice_bytes

from pylog.log import LogConfig
from pylog.log.cleaner import finish_clean, plan_clean, run_clean
from pylog.log.cleaner_manager import log_to_clean
from pylog.log.loader import new_segment
from pylog.log.segment_list import SegmentList
from pylog.protocol.records import build_batch, validate_batches

COMPACT = {"cleanup_policy": ("compact",), "segment_bytes": 300}


def five_segments(open_log, **cfg):
    """Offsets 0..9, two per segment: [0,1] [2,3] [4,5] [6,7] [8,9], all below the high watermark."""
    plog = open_log(segment_bytes=250, **cfg)
    for _ in range(10):
        append(plog, 1, value=b"x" * 50)
    plog.high_watermark = plog.log_end_offset
    assert [s.base_offset for s in plog.segments] == [0, 2, 4, 6, 8]
    return plog


def files(plog, suffix=".log"):
    return sorted(int(n[:20]) for n in os.listdir(plog.dir) if n.endswith(suffix))


def readable(plog, start=None):
    return offsets_in(slice_bytes(plog.read(plog.log_start_offset if start is None else start, 10**6)))


def test_segments_is_a_snapshot_the_log_alone_changes(open_log):
    plog = five_segments(open_log)
    before = plog.segments
    assert isinstance(before, tuple)
    plog.roll()
    plog.truncate_to(3)
    assert [s.base_offset for s in before] == [0, 2, 4, 6, 8]  # the caller's copy is untouched
    assert [s.base_offset for s in plog.segments] == [0, 2]


def test_generation_changes_exactly_when_a_truncation_removes_offsets(open_log):
    plog = five_segments(open_log, retention_ms=1)
    g = plog.generation
    append(plog, 1)
    plog.roll()
    append(plog, 1)
    plog.maybe_increment_log_start_offset(4)
    assert plog.apply_retention(BASE_TS + 10**9) > 0  # segments leave from the start
    plog.flush()
    assert plog.generation == g
    assert plog.truncate_to(plog.log_end_offset) is False  # nothing to remove: nothing changes
    assert plog.generation == g
    assert plog.truncate_to(plog.log_end_offset - 1) is True
    assert plog.generation == g + 1
    plog.truncate_fully_and_start_at(100)
    assert plog.generation == g + 2


def test_a_clean_swap_leaves_the_generation_and_keeps_lookups_in_step(open_log):
    plog = open_log(**COMPACT)
    for i in range(20):
        buf = bytearray(build_batch([(b"k%d" % (i % 3), b"v%d" % i, [], BASE_TS)]))
        plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    plog.high_watermark = plog.log_end_offset
    g = plog.generation
    for swapped in (4, 1):  # the first clean shrinks each segment, the second merges the four into one
        ltc = log_to_clean(plog, None, BASE_TS)
        plan = run_clean(plan_clean(plog, ltc.first_dirty, ltc.first_uncleanable, BASE_TS, 10**6))
        assert finish_clean(plan) == swapped
    assert plog.generation == g
    assert [s.base_offset for s in plog.segments] == [0, 16]
    assert readable(plog, 14) == [14, 15, 16, 17, 18, 19]  # found by base offset: the new one, not the old four
    assert readable(plog, 17) == [17, 18, 19]


def test_truncate_to_deletes_later_segments_and_lowers_the_recovery_point(open_log):
    plog = five_segments(open_log)
    plog.flush()
    lowered = []
    plog.recovery_point_listener = lambda lg: lowered.append(lg.recovery_point)
    assert plog.truncate_to(5)
    assert files(plog) == [0, 2, 4]
    assert plog.log_end_offset == 5 and plog.high_watermark == 5 and lowered == [5]
    assert readable(plog) == [0, 1, 2, 3, 4]
    append(plog, 1)
    assert readable(plog, 4) == [4, 5]


def test_a_truncation_during_a_flush_keeps_the_recovery_point_at_the_truncation(open_log):
    """flush() may run in a worker thread: it must not move the recovery point past data a truncation removed."""
    plog = five_segments(open_log)
    plog.flush(up_to=4)
    unflushed = plog.segments[2]  # [4,5]: the first segment this flush fsyncs
    real_flush = unflushed.flush

    def truncating_flush():  # the event loop truncates while the worker is in the middle of fsyncs
        plog.truncate_to(3)
        real_flush()

    unflushed.flush = truncating_flush
    plog.flush()
    assert plog.log_end_offset == 3 and plog.recovery_point == 3  # not 10, the end when the flush began


def test_remove_oldest_deletes_files_and_moves_the_start_but_never_the_active_segment(open_log):
    plog = five_segments(open_log)
    plog.remove_oldest(2)
    assert files(plog) == [4, 6, 8]
    assert plog.log_start_offset == 4 and plog.recovery_point >= 4
    assert readable(plog) == [4, 5, 6, 7, 8, 9]
    with pytest.raises(ValueError):
        plog.remove_oldest(3)  # would take the active segment too
    assert files(plog) == [4, 6, 8] and plog.log_start_offset == 4


def test_only_adjacent_closed_segments_can_be_replaced(open_log):
    plog = five_segments(open_log)
    s = plog.segments
    assert plog.holds_closed_segments(s[1:3])
    assert not plog.holds_closed_segments([s[1], s[3]])  # not adjacent
    assert not plog.holds_closed_segments(s[3:])  # the active segment is never replaced
    assert not plog.holds_closed_segments([])
    with pytest.raises(ValueError):
        plog.replace_segments(s[3:], s[3])
    plog.remove_oldest(1)
    assert not plog.holds_closed_segments(s[0:2])  # retention took one of them
    assert [x.base_offset for x in plog.segments] == [2, 4, 6, 8]


def test_segment_list_keeps_its_bases_in_step(tmp_path):
    d = str(tmp_path / "t-0")
    os.makedirs(d)
    created = []

    def seg(base):
        created.append(new_segment(d, base, LogConfig()))
        return created[-1]

    segs = SegmentList(seg(b) for b in (0, 10, 20))
    assert [segs.floor_index(o) for o in (0, 9, 10, 25, -1)] == [0, 0, 1, 2, 0]
    with pytest.raises(ValueError):
        segs.append(seg(20))  # not above the active segment
    segs.append(seg(30))
    assert segs.index_of_run(segs[1:3]) == 1 and segs.index_of_run([segs[2], segs[1]]) == -1
    assert segs.truncate_after(15).base_offset == 10 and len(segs) == 2
    segs.replace_run(segs[0:1], seg(5))
    assert [s.base_offset for s in segs] == [5, 10] and segs.floor_index(7) == 0
    with pytest.raises(ValueError):
        SegmentList([])
    for s in created:
        s.delete()


def test_reads_at_and_inside_the_last_append_see_every_record_after_truncation_too(open_log):
    # Reads at the log's end start from the last append's position (the segment's tail hint): every
    # offset inside and after the last append must still be found, also once a truncation has moved
    # the end back and later appends have other sizes.
    plog = open_log(segment_bytes=10**6, index_interval_bytes=4096)
    for _ in range(30):
        append(plog, 4, value=b"x" * 100)  # small batches: many between index entries
    end = plog.log_end_offset
    for start in range(end - 8, end):
        assert readable(plog, start) == list(range(start - start % 4, end))
    plog.truncate_to(end - 6)  # inside the second-to-last batch: it goes too
    assert plog.log_end_offset == end - 8
    append(plog, 3, value=b"y" * 10)
    append(plog, 1, value=b"z" * 500)
    for start in range(end - 12, end - 4):
        first = start if start >= end - 8 else start - start % 4
        if end - 8 <= start < end - 5:
            first = end - 8
        assert readable(plog, start) == list(range(first, end - 4))
