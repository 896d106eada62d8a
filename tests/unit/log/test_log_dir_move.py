"""Moving a replica between log dirs: the future copy, catching up, the swap, and reload."""

import os

from pylog.broker.log_dir_mover import copy_step
from pylog.log import LogConfig, LogManager
from pylog.protocol.records import read_records

from logtest import append, slice_bytes


def _copy_all(mgr: LogManager, topic: str, partition: int, max_bytes: int = 300):
    current, future = mgr.get(topic, partition), mgr.future_log(topic, partition)
    steps = 0
    while not copy_step(current, future, max_bytes):
        steps += 1
        assert steps < 1000
    return steps


def _records(plog):
    return [(r.offset, r.value) for r in read_records_all(plog)]


def read_records_all(plog):
    """Every record from the log start on (the first batch may begin below it)."""
    data = slice_bytes(plog.read(plog.log_start_offset, 10**8))
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12
        out.extend(read_records(data[pos:pos + size]))
        pos += size
    return out


def test_move_copies_everything_and_swaps_in_the_other_dir(tmp_path):
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], LogConfig(segment_bytes=500))
    mgr.load()
    plog = mgr.get_or_create("m", 0, topic_id="Q3d0tlcKRqmP8CEmlQ1Tyg")
    assert os.path.dirname(plog.dir) == d1
    for i in range(20):
        append(plog, 3, epoch=i // 7)
    plog.high_watermark = 60
    plog.maybe_increment_log_start_offset(10)  # mid-batch: the copy starts at that batch
    before = _records(plog)
    future = mgr.create_future("m", 0, d2)
    assert os.path.basename(future.dir).startswith("m-0.") and future.dir.endswith("-future")
    assert _copy_all(mgr, "m", 0) > 1
    append(plog, 2, epoch=3)  # the replica moves on while being copied: the copy follows
    plog.high_watermark = 62
    assert not copy_step(plog, future) and copy_step(plog, future)
    epochs = [tuple(e) for e in plog.epoch_cache.entries]
    new = mgr.replace_current_with_future("m", 0)
    assert new.dir == os.path.join(d2, "m-0") and not os.path.exists(os.path.join(d1, "m-0"))
    assert [e for e in os.listdir(d1) if e.startswith("m-0")] == []
    assert (new.log_start_offset, new.log_end_offset, new.high_watermark) == (10, 62, 62)
    assert _records(new) == before + [(60, b"v" * 10), (61, b"v" * 10)]
    assert [tuple(e) for e in new.epoch_cache.entries] == epochs == [(0, 10), (1, 21), (2, 42), (3, 60)]
    assert new.topic_id == "Q3d0tlcKRqmP8CEmlQ1Tyg"
    mgr.shutdown()
    again = LogManager([d1, d2], LogConfig(segment_bytes=500))
    again.load()
    reloaded = again.get("m", 0)
    assert os.path.dirname(reloaded.dir) == d2 and _records(reloaded)[-1] == (61, b"v" * 10)
    assert reloaded.log_start_offset == 10
    again.shutdown()


def test_a_truncated_replica_restarts_the_copy(tmp_path):
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], LogConfig())
    mgr.load()
    plog = mgr.get_or_create("t", 0)
    for _ in range(5):
        append(plog, 2)
    future = mgr.create_future("t", 0, d2)
    assert not copy_step(plog, future, max_bytes=10**6) and copy_step(plog, future)  # one chunk, then caught up
    plog.truncate_to(6)  # a follower's truncation, then other batches at the same offsets
    append(plog, 1, value=b"other")
    append(plog, 3, value=b"other")
    while not copy_step(plog, future):
        pass
    assert [(r.offset, r.value) for r in read_records_all(future)] == \
        [(r.offset, r.value) for r in read_records_all(plog)]
    assert read_records_all(future)[6].value == b"other"
    mgr.shutdown()


def test_an_interrupted_move_is_loaded_and_resumes_after_a_crash(tmp_path):
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], LogConfig(segment_bytes=500))
    mgr.load()
    plog = mgr.get_or_create("t", 0)
    for i in range(20):
        append(plog, 3, epoch=i // 7)
    plog.flush()
    before = _records(plog)
    future = mgr.create_future("t", 0, d2)
    assert not copy_step(plog, future, 300)  # part of the copy, then a crash: no shutdown, no checkpoints
    future.flush()
    path, copied = future.dir, future.log_end_offset
    assert 0 < copied < plog.log_end_offset
    again = LogManager([d1, d2], LogConfig(segment_bytes=500))
    again.load()
    resumed = again.future_log("t", 0)
    assert again.resumable_moves() == [("t", 0)] and resumed.dir == path
    assert resumed.log_end_offset == copied  # picks up where the copy got to, not from scratch
    _copy_all(again, "t", 0)
    new = again.replace_current_with_future("t", 0)
    assert new.dir == os.path.join(d2, "t-0") and _records(new) == before
    assert [e for e in os.listdir(d1) if e.startswith("t-0")] == []
    again.shutdown()


def test_a_future_dir_without_its_replica_is_dropped_on_load(tmp_path):
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], LogConfig())
    mgr.load()
    append(mgr.get_or_create("t", 0), 2)
    path = mgr.create_future("t", 0, d2).dir
    mgr.shutdown()
    os.rename(os.path.join(d1, "t-0"), os.path.join(d1, "gone"))  # the replica itself is no longer here
    again = LogManager([d1, d2], LogConfig())
    again.load()
    assert not os.path.exists(path) and again.future_log("t", 0) is None and again.get("t", 0) is None
    again.shutdown()
