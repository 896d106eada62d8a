"""LogManager: placement across log dirs, checkpoints, clean shutdown, reload, delete."""

import os

import pytest

from pylog.log import CLEAN_SHUTDOWN_FILE, LogConfig, LogManager

from logtest import BASE_TS, append


def text(root: str, name: str) -> str:
    with open(os.path.join(root, name)) as f:
        return f.read()


@pytest.fixture
def dirs(tmp_path):
    return [str(tmp_path / "d1"), str(tmp_path / "d2")]


@pytest.fixture
def manager(dirs):
    """Factory: a loaded LogManager over `dirs` with config overrides."""

    def _make(**cfg) -> LogManager:
        mgr = LogManager(dirs, LogConfig(**cfg))
        mgr.load()
        return mgr

    return _make


def test_partitions_spread_over_log_dirs_and_checkpoints_are_written(dirs, manager):
    mgr = manager()
    a = mgr.get_or_create("foo", 0, topic_id="Q3d0tlcKRqmP8CEmlQ1Tyg")
    b = mgr.get_or_create("foo", 1)
    assert {os.path.dirname(a.dir), os.path.dirname(b.dir)} == set(dirs)
    assert mgr.get_or_create("foo", 0) is a
    assert text(a.dir, "partition.metadata") == "version: 0\ntopic_id: Q3d0tlcKRqmP8CEmlQ1Tyg"
    append(a, 5)
    a.high_watermark = 4
    mgr.checkpoint_high_watermarks()
    assert text(dirs[0], "replication-offset-checkpoint") == "0\n1\nfoo 0 4\n"
    assert text(dirs[1], "replication-offset-checkpoint") == "0\n1\nfoo 1 0\n"
    mgr.shutdown()


def test_clean_shutdown_then_reload(dirs, manager):
    mgr = manager()
    log = mgr.get_or_create("foo", 0)
    append(log, 3)
    log.high_watermark = 3
    mgr.shutdown()
    root = dirs[0]
    assert os.path.exists(os.path.join(root, CLEAN_SHUTDOWN_FILE))
    assert text(root, "recovery-point-offset-checkpoint") == "0\n1\nfoo 0 3\n"
    assert text(root, "log-start-offset-checkpoint") == "0\n0\n"  # start offsets equal to the first segment's base are left out

    mgr.shutdown()  # a second shutdown must not wipe the checkpoints
    assert text(root, "recovery-point-offset-checkpoint") == "0\n1\nfoo 0 3\n"

    mgr2 = manager()
    assert mgr2.had_clean_shutdown[root]
    assert not os.path.exists(os.path.join(root, CLEAN_SHUTDOWN_FILE))  # a crash now must recover
    log2 = mgr2.get("foo", 0)
    assert (log2.log_end_offset, log2.high_watermark, log2.recovery_point) == (3, 3, 3)
    mgr2.shutdown()


def test_crash_reload_recovers_from_checkpointed_recovery_point(dirs, manager):
    mgr = manager()
    log = mgr.get_or_create("foo", 0)
    append(log, 3)
    log.flush()
    mgr.checkpoint_recovery_points()
    append(log, 2)
    # kill -9: no shutdown; tear the unflushed batch
    path = log.active_segment.path
    size = os.path.getsize(path)
    os.truncate(path, size - 7)
    mgr2 = manager()
    assert not mgr2.had_clean_shutdown[dirs[0]]
    assert mgr2.get("foo", 0).log_end_offset == 3
    mgr2.shutdown()


def test_truncation_rewrites_the_recovery_point_checkpoint(dirs, manager):
    mgr = manager()
    log = mgr.get_or_create("foo", 0)
    append(log, 2)
    append(log, 2)
    log.flush()
    mgr.checkpoint_recovery_points()
    log.truncate_to(2)
    assert text(dirs[0], "recovery-point-offset-checkpoint") == "0\n1\nfoo 0 2\n"
    mgr.shutdown()


def test_retention_and_log_start_checkpoint(dirs, manager):
    mgr = manager(segment_bytes=250, retention_ms=1000)
    log = mgr.get_or_create("foo", 0)
    for i in range(5):
        append(log, 1, ts=BASE_TS, value=b"x" * 50)
    log.high_watermark = 5
    assert mgr.run_retention(BASE_TS + 2000) == 2
    log.maybe_increment_log_start_offset(5)
    mgr.checkpoint_log_start_offsets()
    assert text(dirs[0], "log-start-offset-checkpoint") == "0\n1\nfoo 0 5\n"
    mgr.shutdown()


def test_delete_removes_the_partition(dirs, manager):
    mgr = manager()
    log = mgr.get_or_create("foo", 0)
    append(log, 1)
    assert mgr.delete("foo", 0)
    assert mgr.get("foo", 0) is None
    assert not any(n.startswith("foo-0") for n in os.listdir(dirs[0]))
    assert not mgr.delete("foo", 0)
    mgr.shutdown()


def test_load_cleans_delete_dirs_and_ignores_strays(dirs, manager):
    os.makedirs(os.path.join(dirs[0], "foo-0.0123456789abcdef0123456789abcdef-delete"))
    os.makedirs(os.path.join(dirs[0], "lost+found"))
    mgr = manager()
    assert mgr.all_logs() == []
    assert sorted(os.listdir(dirs[0]))[0] == "log-start-offset-checkpoint"
    assert "lost+found" in os.listdir(dirs[0])
    assert not any(n.endswith("-delete") for n in os.listdir(dirs[0]))


def test_duplicate_partition_dirs_are_an_error(dirs):
    for d in dirs:
        os.makedirs(os.path.join(d, "foo-0"))
    with pytest.raises(Exception, match="Duplicate log directories for foo-0"):
        LogManager(dirs, LogConfig()).load()


def test_flush_due_honours_flush_ms(dirs, manager):
    mgr = manager(flush_ms=1000)
    log = mgr.get_or_create("foo", 0)
    log.flush(now_ms=BASE_TS)
    append(log, 1)
    assert mgr.flush_due(BASE_TS + 500) == 0
    assert mgr.flush_due(BASE_TS + 1000) == 1
    assert log.recovery_point == 1
    mgr.shutdown()


def test_choose_dirs_counts_once_and_spreads_a_batch(dirs, manager):
    mgr = manager()
    mgr.get_or_create("foo", 0)  # d1 has one partition
    mgr.preferred_dirs[("bar", 3)] = dirs[0]
    chosen = mgr.choose_dirs([("bar", 0), ("bar", 1), ("bar", 2), ("bar", 3)])
    # fewest first, counting the batch's own choices; an AlterReplicaLogDirs preference wins
    assert chosen == {("bar", 0): dirs[1], ("bar", 1): dirs[0], ("bar", 2): dirs[1], ("bar", 3): dirs[0]}
    assert ("bar", 3) not in mgr.preferred_dirs
    plog = mgr.register("bar", 0, LogManager.open_new(chosen[("bar", 0)], "bar", 0, LogConfig(), None))
    assert mgr.get("bar", 0) is plog and os.path.dirname(plog.dir) == dirs[1]
    mgr.shutdown()
