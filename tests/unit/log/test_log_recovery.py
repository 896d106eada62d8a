"""Recovery after kill -9: torn/corrupt tails, the recovery point, clean shutdown, lost indexes."""

import logging
import os

import pytest

from pylog.log import KafkaStorageError, Log, LogConfig
from pylog.protocol.records import BATCH_OVERHEAD

from logtest import BASE_TS, append, make_batch, offsets_in, slice_bytes


def seg_path(log: Log, base: int, ext: str = ".log") -> str:
    return os.path.join(log.dir, f"{base:020d}{ext}")


def crash(log: Log) -> None:
    """Simulate kill -9: drop the file descriptors, write nothing more."""
    for seg in log.segments:
        os.close(seg._fd)
        seg._fd = -1
        seg.index.close()
        seg.time_index.close()


def test_torn_tail_is_truncated_to_last_valid_batch(open_log, caplog):
    log = open_log()
    for _ in range(3):
        append(log, 2)
    good_size = log.active_segment.size
    crash(log)
    half = make_batch(2)[:40]
    with open(seg_path(log, 0), "ab") as f:
        f.write(half)
    with caplog.at_level(logging.WARNING, logger="pylog.log"):
        log2 = open_log(recovery_point=0)
    assert log2.log_end_offset == 6
    assert os.path.getsize(seg_path(log2, 0)) == good_size
    assert offsets_in(slice_bytes(log2.read(0, 10**6))) == [0, 1, 2, 3, 4, 5]
    assert any("Truncated 40 bytes" in r.getMessage() and "torn batch" in r.getMessage() for r in caplog.records)
    assert append(log2, 1).first_offset == 6


def test_partial_header_tail_is_truncated(open_log):
    log = open_log()
    append(log, 2)
    crash(log)
    with open(seg_path(log, 0), "ab") as f:
        f.write(b"\x00" * (BATCH_OVERHEAD - 1))
    assert open_log().log_end_offset == 2


def test_corrupt_batch_above_recovery_point_cuts_it_and_later_segments(open_log, caplog):
    log = open_log(segment_bytes=700)
    for _ in range(9):
        append(log, 2, value=b"x" * 100)  # ~290-byte batches, two per segment
    log.flush(4)  # recovery point 4: segments 0 and 4 hold flushed data
    assert log.recovery_point == 4
    bases = [s.base_offset for s in log.segments]
    assert bases[:4] == [0, 4, 8, 12]
    crash(log)
    with open(seg_path(log, 8), "r+b") as f:  # corrupt the second batch (offsets 10-11) of segment 8
        f.seek(os.path.getsize(seg_path(log, 8)) - 5)
        f.write(b"XXXX")
    with caplog.at_level(logging.WARNING, logger="pylog.log"):
        log2 = open_log(recovery_point=4, segment_bytes=700)
    assert log2.log_end_offset == 10
    assert [s.base_offset for s in log2.segments] == [0, 4, 8]
    assert not os.path.exists(seg_path(log2, 12))
    assert offsets_in(slice_bytes(log2.read(0, 10**6))) == list(range(10))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "corrupt batch at offset 10" in text and "Deleting segment" in text


def test_recovery_never_drops_data_below_the_recovery_point(open_log):
    log = open_log()
    for _ in range(3):
        append(log, 2)
    log.flush()
    assert log.recovery_point == 6
    append(log, 2)
    crash(log)
    path = seg_path(log, 0)
    with open(path, "r+b") as f:  # bit rot inside the first (flushed) batch's records
        f.seek(BATCH_OVERHEAD + 5)
        f.write(b"\xff")
    with open(path, "ab") as f:  # and a torn write after the unflushed batch
        f.write(b"\x00\x00\x00")
    log2 = open_log(recovery_point=6)
    # the flushed batches are trusted as they are, the unflushed one was valid, the tear is gone
    assert log2.log_end_offset == 8
    assert [h.base_offset for h in _headers(log2)] == [0, 2, 4, 6]


def test_damage_below_the_recovery_point_is_refused_not_truncated(open_log):
    log = open_log()
    for _ in range(3):
        append(log, 2)
    log.flush()
    crash(log)
    path = seg_path(log, 0)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # the length field of the last flushed batch now overruns the file
        f.truncate(size - 10)
    with pytest.raises(KafkaStorageError, match="below the recovery point 6"):
        Log.open(log.dir, LogConfig(), recovery_point=6)
    assert os.path.getsize(path) == size - 10  # nothing was cut


def test_unflushed_corruption_is_truncated_even_in_the_first_batch(open_log):
    log = open_log()
    for _ in range(3):
        append(log, 2)
    crash(log)
    with open(seg_path(log, 0), "r+b") as f:
        f.seek(BATCH_OVERHEAD + 5)
        f.write(b"\xff")
    log2 = open_log(recovery_point=0)
    assert log2.log_end_offset == 0
    assert os.path.getsize(seg_path(log2, 0)) == 0


def test_clean_shutdown_skips_recovery(open_log):
    log = open_log()
    for _ in range(3):
        append(log, 2)
    log.close()
    with open(seg_path(log, 0), "r+b") as f:  # a bad CRC that recovery would cut off
        f.seek(os.path.getsize(seg_path(log, 0)) - 3)
        f.write(b"\xff")
    log2 = open_log(recovery_point=0, clean_shutdown=True)
    assert log2.log_end_offset == 6
    assert log2.recovery_point == 6
    log3 = open_log(recovery_point=0, clean_shutdown=False)
    assert log3.log_end_offset == 4


def _headers(log):
    from pylog.protocol.records import iter_batches

    return list(iter_batches(slice_bytes(log.read(log.log_start_offset, 10**9))))


@pytest.mark.parametrize("damage", ["delete", "garbage"])
def test_lost_or_corrupt_index_is_rebuilt_identically(open_log, damage, caplog):
    log = open_log(segment_bytes=3000, index_interval_bytes=300)
    for i in range(30):
        append(log, 1, ts=BASE_TS + i, value=b"x" * 100)
    assert len(log.segments) >= 2
    log.close()
    idx, tidx = seg_path(log, 0, ".index"), seg_path(log, 0, ".timeindex")
    with open(idx, "rb") as f:
        original_index = f.read()
    with open(tidx, "rb") as f:
        original_time_index = f.read()
    assert len(original_index) >= 16 and len(original_time_index) >= 24
    if damage == "delete":
        os.unlink(idx)
        os.unlink(tidx)
    else:
        with open(idx, "ab") as f:
            f.write(b"\x01\x02\x03")
    with caplog.at_level(logging.WARNING, logger="pylog.log"):
        log2 = open_log(clean_shutdown=True, segment_bytes=3000, index_interval_bytes=300)
        assert offsets_in(slice_bytes(log2.read(7, 10**6)))[0] == 7  # uses (and rebuilds) the index
    with open(idx, "rb") as f:
        assert f.read() == original_index
    with open(tidx, "rb") as f:
        rebuilt = f.read()
    # the closed segment's final entry (written on roll) is part of the original, not of a rebuild
    assert original_time_index.startswith(rebuilt) and len(rebuilt) >= len(original_time_index) - 12
    assert any("rebuilding" in r.getMessage() for r in caplog.records)


def test_recovered_index_matches_the_one_written_by_appends(open_log):
    log = open_log(index_interval_bytes=200)
    for _ in range(20):
        append(log, 1, value=b"y" * 90)
    crash(log)
    idx = seg_path(log, 0, ".index")
    with open(idx, "rb") as f:
        written = f.read()
    log2 = open_log(index_interval_bytes=200)  # recovery from 0 rebuilds the index
    assert log2.log_end_offset == 20
    with open(idx, "rb") as f:
        assert f.read() == written


def test_leftover_and_orphan_files_are_removed(open_log):
    log = open_log()
    append(log, 1)
    log.close()
    for name in ("00000000000000000000.log.deleted", "leader-epoch-checkpoint.tmp", "00000000000000000050.index"):
        open(os.path.join(log.dir, name), "wb").close()
    open_log(clean_shutdown=True)
    left = sorted(os.listdir(log.dir))
    # close() wrote the producer state snapshot at the log end, as Kafka does on a clean shutdown
    assert left == ["00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
                    "00000000000000000001.snapshot", "leader-epoch-checkpoint"]


def test_log_start_offset_beyond_log_end_empties_the_log(log_dir, caplog):
    path = os.path.join(log_dir, "foo-0")
    log = Log.open(path, LogConfig())
    append(log, 3)
    log.close()
    with caplog.at_level(logging.WARNING, logger="pylog.log"):
        log2 = Log.open(path, LogConfig(), recovery_point=3, log_start_offset=10, clean_shutdown=True)
    assert (log2.log_start_offset, log2.log_end_offset) == (10, 10)
    assert any("smaller than logStartOffset (10)" in r.getMessage() for r in caplog.records)
    log2.close()


def test_epoch_cache_is_trimmed_to_the_recovered_log(open_log):
    log = open_log()
    append(log, 2, epoch=1)
    append(log, 2, epoch=2)
    crash(log)
    with open(seg_path(log, 0), "r+b") as f:  # tear the epoch-2 batch
        f.truncate(os.path.getsize(seg_path(log, 0)) - 1)
    log2 = open_log()
    assert log2.log_end_offset == 2
    assert [tuple(e) for e in log2.epoch_cache.entries] == [(1, 0)]
