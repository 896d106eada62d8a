"""Log: appends, reads, rolls, index lookups, timestamps, truncation, follower appends."""

import os
import struct

import pytest

from pylog.log import (
    FileSlice,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    UnexpectedAppendOffsetError,
)
from pylog.protocol.records import read_records, validate_batches

from logtest import BASE_TS, append, make_batch, offsets_in, slice_bytes


def test_append_assigns_offsets_and_stores_bytes_as_sent(open_log):
    log = open_log()
    buf = make_batch(3)
    original = bytes(buf)
    info = log.append_as_leader(buf, validate_batches(buf), leader_epoch=5, now_ms=BASE_TS)
    assert (info.first_offset, info.last_offset, info.num_records, info.size) == (0, 2, 3, len(buf))
    assert info.max_timestamp == BASE_TS + 2 and info.log_append_time == -1
    info2 = append(log, 2)
    assert (info2.first_offset, info2.last_offset) == (3, 4)
    assert log.log_end_offset == 5
    with open(os.path.join(log.dir, "00000000000000000000.log"), "rb") as f:
        stored = f.read()
    # Only base offset (bytes 0-7) and leader epoch (12-15) differ from what the client sent.
    first = stored[: len(original)]
    assert first[8:12] == original[8:12] and first[16:] == original[16:]
    assert struct.unpack_from(">q", first, 0)[0] == 0 and struct.unpack_from(">i", first, 12)[0] == 5
    assert offsets_in(stored) == [0, 1, 2, 3, 4]


def test_leader_epoch_recorded_on_change_only(open_log):
    log = open_log()
    append(log, 2, epoch=0)
    append(log, 2, epoch=0)
    append(log, 1, epoch=3)
    assert [tuple(e) for e in log.epoch_cache.entries] == [(0, 0), (3, 4)]
    with open(os.path.join(log.dir, "leader-epoch-checkpoint")) as f:
        assert f.read() == "0\n2\n0 0\n3 4\n"


def test_read_returns_whole_batches_within_max_bytes(open_log):
    log = open_log()
    sizes = [append(log, 2).size for _ in range(5)]  # offsets 0-9, two per batch
    slices = log.read(0, sizes[0] + sizes[1] + 5)
    assert offsets_in(slice_bytes(slices)) == [0, 1, 2, 3]
    # starting inside a batch returns that whole batch (the client skips earlier records)
    assert offsets_in(slice_bytes(log.read(3, 10**6))) == list(range(2, 10))
    # max_bytes smaller than one batch: the first batch anyway (min_one), or nothing
    assert offsets_in(slice_bytes(log.read(4, 1))) == [4, 5]
    assert log.read(4, 1, min_one=False) == []


def test_read_never_goes_beyond_max_offset(open_log):
    log = open_log()
    for _ in range(5):
        append(log, 2)
    log.high_watermark = 6
    assert offsets_in(slice_bytes(log.read(0, 10**6, max_offset=log.high_watermark))) == [0, 1, 2, 3, 4, 5]
    assert log.read(6, 10**6, max_offset=6) == []
    # a max_offset inside a batch excludes that whole batch
    assert offsets_in(slice_bytes(log.read(0, 10**6, max_offset=5))) == [0, 1, 2, 3]


def test_read_at_and_beyond_the_ends(open_log):
    log = open_log()
    append(log, 3)
    assert log.read(3, 100) == []
    with pytest.raises(OffsetOutOfRangeError, match=r"offset 4 for partition foo-0, but we only have log segments in the range 0 to 3") as e:
        log.read(4, 100)
    assert e.value.error_code == 1


def test_segments_roll_by_size_and_reads_span_them(open_log):
    log = open_log(segment_bytes=1000)
    for _ in range(20):
        append(log, 2, value=b"x" * 150)  # ~380 bytes per batch: two per segment
    names = sorted(n for n in os.listdir(log.dir) if n.endswith(".log"))
    assert names[:3] == ["00000000000000000000.log", "00000000000000000004.log", "00000000000000000008.log"]
    assert all(os.path.exists(os.path.join(log.dir, n[:-4] + ext)) for n in names for ext in (".index", ".timeindex"))
    assert len(names) == 10
    assert all(os.path.getsize(os.path.join(log.dir, n)) <= 1000 for n in names)
    assert offsets_in(slice_bytes(log.read(3, 10**6))) == list(range(2, 40))
    assert len(log.read(3, 10**6)) == 10  # one slice per segment


def test_small_reads_come_back_as_bytes_and_large_ones_as_file_slices(open_log):
    # The fetch path reads a segment's part of up to inline_bytes at once, through the open segment.
    log = open_log(segment_bytes=1000)
    for _ in range(20):
        append(log, 2, value=b"x" * 150)
    as_slices = log.read(3, 10**6)
    assert as_slices[0].size < as_slices[1].size  # offset 3 starts in the first segment's second batch
    mixed = log.read(3, 10**6, inline_bytes=as_slices[0].size)
    assert [type(p) for p in mixed] == [bytes] + [FileSlice] * (len(as_slices) - 1)
    assert b"".join(p if isinstance(p, bytes) else p.read() for p in mixed) == slice_bytes(as_slices)
    assert offsets_in(b"".join(p if isinstance(p, bytes) else p.read() for p in mixed)) == list(range(2, 40))


def test_roll_by_segment_ms_uses_record_timestamps(open_log):
    log = open_log(segment_ms=60_000)
    append(log, 1, ts=BASE_TS)
    append(log, 1, ts=BASE_TS + 59_000)
    assert len(log.segments) == 1
    append(log, 1, ts=BASE_TS + 61_000)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_sparse_index_every_index_interval_bytes(open_log):
    log = open_log(index_interval_bytes=1000)
    positions = []
    pos = 0
    for i in range(30):
        info = append(log, 1, value=b"x" * 200)
        positions.append((i, pos))
        pos += info.size
    idx = log.active_segment.index
    entries = [idx.entry(i) for i in range(idx.entries)]
    assert len(entries) >= 5
    # every entry points at the batch of that offset, and they are more than 1000 bytes apart
    assert all((off, p) in positions for off, p in entries)
    gaps = [b[1] - a[1] for a, b in zip(entries, entries[1:])]
    assert all(g > 1000 for g in gaps)
    with open(idx.path, "rb") as f:
        raw = f.read()
    assert len(raw) == 8 * len(entries)
    assert struct.unpack(">ii", raw[:8]) == entries[0]
    # lookups land on the right batch whatever the index granularity
    for target in (0, 5, 13, 29):
        assert offsets_in(slice_bytes(log.read(target, 1)))[0] == target


def test_offset_for_timestamp(open_log):
    log = open_log(index_interval_bytes=100, segment_bytes=1000)
    for i in range(40):
        append(log, 2, ts=BASE_TS + 10 * i)  # records at BASE_TS + 10i, + 10i + 1
    assert len(log.segments) > 2
    assert log.offset_for_timestamp(BASE_TS) == (0, BASE_TS)
    assert log.offset_for_timestamp(BASE_TS + 1) == (1, BASE_TS + 1)
    assert log.offset_for_timestamp(BASE_TS + 2) == (2, BASE_TS + 10)
    found = log.offset_for_timestamp(BASE_TS + 205)
    assert (found.offset, found.timestamp) == (42, BASE_TS + 210)
    assert log.offset_for_timestamp(BASE_TS + 10_000) is None
    assert log.offset_for_timestamp(-1) == (80, -1)  # latest
    assert log.offset_for_timestamp(-2) == (0, -1)  # earliest
    assert log.offset_for_timestamp(-3) == log.max_timestamp_offset() == (79, BASE_TS + 391)


def test_offset_for_timestamp_in_compressed_batches(open_log):
    log = open_log()
    buf = make_batch(5, ts=BASE_TS, compression=4)
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    assert log.offset_for_timestamp(BASE_TS + 3) == (3, BASE_TS + 3)


def test_log_append_time_stamps_the_batch(open_log):
    log = open_log(message_timestamp_type="LogAppendTime")
    buf = make_batch(2, ts=5)
    info = log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS + 7)
    assert info.log_append_time == BASE_TS + 7
    recs = read_records(slice_bytes(log.read(0, 10**6)))
    assert [r.timestamp for r in recs] == [BASE_TS + 7] * 2


def test_size_limits(open_log):
    log = open_log(max_message_bytes=200, segment_bytes=10_000)
    buf = make_batch(1, value=b"x" * 300)
    with pytest.raises(RecordTooLargeError) as e:
        log.append_as_leader(buf, validate_batches(buf), 0)
    assert e.value.error_code == 10
    log = open_log(name="foo-1", segment_bytes=1000, max_message_bytes=10**6)
    buf = make_batch(1, value=b"x" * 2000)
    with pytest.raises(RecordBatchTooLargeError) as e:
        log.append_as_leader(buf, validate_batches(buf), 0)
    assert e.value.error_code == 18
    assert log.log_end_offset == 0


def test_timestamp_difference_limit(open_log):
    from pylog.log import InvalidTimestampError

    log = open_log(message_timestamp_difference_max_ms=60_000)
    append(log, 1, ts=BASE_TS - 59_000)
    buf = make_batch(2, ts=BASE_TS + 60_000)  # second record at +60001
    with pytest.raises(InvalidTimestampError, match=r"Timestamp 1690000060001 of message with offset 0 is out of range") as e:
        log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    assert e.value.error_code == 32
    assert log.log_end_offset == 1


def test_truncate_to_removes_whole_batches_and_later_segments(open_log):
    log = open_log(segment_bytes=1000)
    for i in range(10):
        append(log, 2, value=b"x" * 100, epoch=i // 4)
    log.high_watermark = 20
    assert log.truncate_to(9)  # offset 9 is inside batch [8, 9]
    assert log.log_end_offset == 8
    assert log.high_watermark == 8
    assert offsets_in(slice_bytes(log.read(0, 10**6))) == list(range(8))
    assert [tuple(e) for e in log.epoch_cache.entries] == [(0, 0)]
    assert all(s.base_offset < 8 for s in log.segments)
    assert not log.truncate_to(8)
    info = append(log, 1, epoch=4)
    assert info.first_offset == 8
    assert [tuple(e) for e in log.epoch_cache.entries] == [(0, 0), (4, 8)]


def test_truncate_fully_and_start_at(open_log):
    log = open_log()
    append(log, 5, epoch=1)
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (100, 100, 100)
    assert log.epoch_cache.entries == []
    assert sorted(n for n in os.listdir(log.dir) if n.endswith(".log")) == ["00000000000000000100.log"]
    assert append(log, 1).first_offset == 100
    with pytest.raises(OffsetOutOfRangeError):
        log.read(99, 100)


def test_follower_append_keeps_leader_offsets_and_epochs(open_log):
    leader = open_log(name="foo-0")
    append(leader, 2, epoch=1)
    append(leader, 3, epoch=2)
    follower = open_log(name="foo-1")
    data = bytearray(slice_bytes(leader.read(0, 10**6)))
    info = follower.append_as_follower(data, validate_batches(data))
    assert (info.first_offset, info.last_offset) == (0, 4)
    assert [tuple(e) for e in follower.epoch_cache.entries] == [(1, 0), (2, 2)]
    assert slice_bytes(follower.read(0, 10**6)) == bytes(data)
    with pytest.raises(UnexpectedAppendOffsetError):
        follower.append_as_follower(data, validate_batches(data))  # starts at 0, LEO is 5


def test_high_watermark_is_clamped(open_log):
    log = open_log()
    append(log, 3)
    log.high_watermark = 10
    assert log.high_watermark == 3
    log.high_watermark = -5
    assert log.high_watermark == 0


def test_flush_advances_recovery_point(open_log):
    log = open_log(flush_messages=3)
    append(log, 2)
    assert log.recovery_point == 0
    append(log, 1)  # reaches flush.messages
    assert log.recovery_point == 3
    append(log, 1)
    log.flush()
    assert log.recovery_point == 4


def test_roll_leaves_flush_to_flush_due(open_log):
    log = open_log(segment_bytes=500)
    for _ in range(4):
        append(log, 1, value=b"x" * 200)
    assert len(log.segments) > 1 and log.recovery_point == 0
    assert log.flush_due(now_ms=BASE_TS)
    assert log.recovery_point == log.active_segment.base_offset


def test_log_config_from_topic_props():
    from pylog.common.configdef import ConfigError
    from pylog.log import LogConfig

    default = LogConfig()
    assert (default.segment_bytes, default.retention_ms, default.index_interval_bytes) == (1 << 30, 604800000, 4096)
    assert default.cleanup_policy == ("delete",) and default.flush_messages == 2**63 - 1
    cfg = LogConfig.from_props({"segment.bytes": "1000", "cleanup.policy": "compact,delete", "x.y": "1"})
    assert cfg.segment_bytes == 1000 and cfg.cleanup_policy == ("compact", "delete")
    assert cfg.originals["x.y"] == "1"
    assert LogConfig.from_props({"retention.ms": "5"}, base=cfg).segment_bytes == 1000
    with pytest.raises(ConfigError, match="Invalid value 1 for configuration segment.bytes"):
        LogConfig.from_props({"segment.bytes": "1"})


def test_read_matches_a_brute_force_walk(open_log):
    """read() jumps over batches with the sparse index; it must pick exactly the batches a full walk would."""
    import random

    from pylog.protocol.records import iter_batches

    rng = random.Random(7)
    log = open_log(index_interval_bytes=150, segment_bytes=5000)
    for _ in range(120):
        append(log, rng.randint(1, 4), value=b"z" * rng.randint(0, 120))
    everything = [(h.base_offset, h.last_offset, h.size) for s in log.segments
                  for h in iter_batches(FileSlice(s.path, 0, s.size).read())]
    leo = log.log_end_offset
    for _ in range(400):
        start = rng.randrange(0, leo)
        max_bytes = rng.choice([1, 50, 200, 700, 3000, 20000])
        max_offset = rng.choice([None, rng.randrange(start, leo + 1)])
        min_one = rng.random() < 0.7
        expected, total = [], 0
        for base, last, size in everything:
            if last < start:
                continue
            if max_offset is not None and last >= max_offset:
                break
            if total + size > max_bytes and not (min_one and not expected):
                break
            expected.append(base)
            total += size
        got = [h.base_offset for h in iter_batches(slice_bytes(log.read(start, max_bytes, max_offset, min_one)))]
        assert got == expected, (start, max_bytes, max_offset, min_one)


def test_flush_and_checkpoints_from_a_worker_thread_while_appending(tmp_path):
    """The broker fsyncs and checkpoints in an executor thread while its loop appends and truncates."""
    import threading

    from pylog.log import LogConfig, LogManager

    mgr = LogManager([str(tmp_path)], LogConfig(segment_bytes=600, retention_ms=1))
    mgr.load()
    log = mgr.get_or_create("foo", 0)
    stop = threading.Event()
    errors = []

    def worker():
        while not stop.is_set():
            try:
                mgr.flush_due(BASE_TS)
                log.flush()
                mgr.checkpoint_recovery_points()
                mgr.checkpoint_high_watermarks()
            except Exception as e:  # pragma: no cover - what the test is looking for
                errors.append(e)

    t = threading.Thread(target=worker)
    t.start()
    try:
        for i in range(200):
            append(log, 1, value=b"x" * 100)
            log.high_watermark = log.log_end_offset
            if i % 50 == 49:
                log.truncate_to(log.log_end_offset - 3)
            if i % 70 == 69:
                log.apply_retention(BASE_TS + 10_000)
    finally:
        stop.set()
        t.join(timeout=30)
    assert not errors
    assert log.recovery_point <= log.log_end_offset
    log.flush()
    mgr.shutdown()
    again = LogManager([str(tmp_path)], LogConfig(segment_bytes=600))
    again.load()
    assert again.get("foo", 0).log_end_offset == log.log_end_offset
    again.shutdown()
