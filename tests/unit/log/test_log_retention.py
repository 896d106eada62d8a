"""Retention: whole segments only, below the high watermark, never the active segment."""

import os

import pytest

from pylog.log import OffsetOutOfRangeError

from logtest import BASE_TS, append, offsets_in, slice_bytes

HOUR = 3600 * 1000


def four_segments(open_log, key=None, **cfg):
    """Segments [0,1] [2,3] [4,5] [6] with timestamps BASE_TS + i hours for batch i."""
    log = open_log(segment_bytes=250, **cfg)
    for i in range(7):
        append(log, 1, ts=BASE_TS + i * HOUR, value=b"x" * 50, key=key)
    assert [s.base_offset for s in log.segments] == [0, 2, 4, 6]
    return log


def log_files(log):
    return sorted(n for n in os.listdir(log.dir) if n.endswith(".log"))


def test_retention_by_time(open_log):
    log = four_segments(open_log, retention_ms=10 * HOUR)
    log.high_watermark = 7
    now = BASE_TS + 13 * HOUR + 1  # segments whose newest record is older than 10h: [0,1] and [2,3]
    assert log.apply_retention(now) == 2
    assert log_files(log) == ["00000000000000000004.log", "00000000000000000006.log"]
    assert log.log_start_offset == 4
    assert offsets_in(slice_bytes(log.read(4, 10**6))) == [4, 5, 6]
    with pytest.raises(OffsetOutOfRangeError):
        log.read(3, 100)
    assert log.apply_retention(now) == 0


def test_time_retention_never_deletes_the_active_segment(open_log):
    log = four_segments(open_log, retention_ms=1)
    log.high_watermark = 7
    assert log.apply_retention(BASE_TS + 100 * HOUR) == 3
    assert log_files(log) == ["00000000000000000006.log"]
    assert log.log_end_offset == 7 and log.log_start_offset == 6


def test_retention_stops_at_the_high_watermark(open_log):
    log = four_segments(open_log, retention_ms=1)
    log.high_watermark = 3  # segment [2,3] is not wholly below the HW
    assert log.apply_retention(BASE_TS + 100 * HOUR) == 1
    assert log_files(log)[0] == "00000000000000000002.log"


def test_retention_by_size(open_log):
    log = four_segments(open_log)
    log.high_watermark = 7
    sizes = [s.size for s in log.segments]
    total = log.size_bytes
    # Kafka's rule: delete oldest segments only while the log stays at or above retention.bytes
    limit = total - sizes[0] - 1
    log.update_config(log.config.__class__(segment_bytes=250, retention_bytes=limit))
    assert log.apply_retention(BASE_TS) == 1
    assert log.size_bytes == limit + 1  # one byte over: deleting [2,3] too would go below the limit
    assert log.log_start_offset == 2
    limit = total - sizes[0] - sizes[1]
    log.update_config(log.config.__class__(segment_bytes=250, retention_bytes=limit))
    assert log.apply_retention(BASE_TS) == 1
    assert log.size_bytes == limit
    assert log_files(log) == ["00000000000000000004.log", "00000000000000000006.log"]


def test_retention_by_size_keeps_what_fits(open_log):
    log = four_segments(open_log)
    log.high_watermark = 7
    log.update_config(log.config.__class__(segment_bytes=250, retention_bytes=log.size_bytes))
    assert log.apply_retention(BASE_TS) == 0


def test_epoch_cache_follows_the_log_start(open_log):
    log = open_log(segment_bytes=250, retention_ms=1)
    for i in range(7):
        append(log, 1, ts=BASE_TS, value=b"x" * 50, epoch=i)
    log.high_watermark = 7
    log.apply_retention(BASE_TS + HOUR)
    assert log.epoch_cache.entries[0] == (6, 6)


def test_log_start_offset_moves_then_retention_deletes_below_it(open_log):
    log = four_segments(open_log)
    log.high_watermark = 5
    with pytest.raises(OffsetOutOfRangeError, match="larger than the high watermark 5"):
        log.maybe_increment_log_start_offset(6)
    assert log.maybe_increment_log_start_offset(5)
    assert log.log_start_offset == 5
    with pytest.raises(OffsetOutOfRangeError):
        log.read(4, 100)
    assert log.apply_retention(BASE_TS) == 2  # [0,1] and [2,3]; [4,5] still holds offset 5
    assert log_files(log)[0] == "00000000000000000004.log"
    assert log.log_start_offset == 5


def test_compact_policy_keeps_time_and_size_retention_off(open_log):
    log = four_segments(open_log, key=b"k", retention_ms=1, cleanup_policy="compact")  # compacted: keys required
    log.high_watermark = 7
    assert log.apply_retention(BASE_TS + 100 * HOUR) == 0
