"""A failed log dir goes offline alone (KIP-112): LogManager's side."""

from __future__ import annotations

import os

import pytest

from pylog.log import KafkaStorageError, LogConfig, LogManager

from logtest import append


def _break(root: str) -> None:
    """The dir vanishes under the broker and a file takes its place (new opens fail with ENOTDIR)."""
    os.rename(root, root + ".broken")
    with open(root, "w") as f:
        f.write("x")


def test_a_checkpoint_failure_is_reported_and_fail_dir_forgets_only_that_dirs_logs(tmp_path):
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], LogConfig())
    mgr.load()
    reports = []
    mgr.failure_listener = lambda root, exc: reports.append((root, type(exc)))
    a, b = mgr.get_or_create("t", 0), mgr.get_or_create("t", 1)
    assert (mgr.log_dir_of(a), mgr.log_dir_of(b)) == (d1, d2)
    append(b, 2)
    _break(d2)
    mgr.checkpoint_high_watermarks()
    assert reports == [(d2, NotADirectoryError)]
    assert mgr.fail_dir(d2) == [("t", 1)] and mgr.fail_dir(d2) == []
    assert mgr.get("t", 1) is None and mgr.get("t", 0) is a and mgr.online_dirs == [d1]
    mgr.checkpoint_high_watermarks()  # the offline dir is not written (nor reported) again
    assert len(reports) == 1
    assert mgr.log_dir_of(mgr.get_or_create("t", 2)) == d1  # new replicas go to online dirs only
    mgr.shutdown()
    assert os.path.exists(os.path.join(d1, ".kafka_cleanshutdown"))


def test_an_unusable_dir_at_start_stays_offline_and_all_failing_is_fatal(tmp_path):
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], LogConfig())
    mgr.load()
    append(mgr.get_or_create("t", 0), 3)
    append(mgr.get_or_create("t", 1), 3)
    mgr.shutdown()
    _break(d2)
    again = LogManager([d1, d2], LogConfig())
    again.load()
    assert again.offline_dirs == {d2} and again.get("t", 0).log_end_offset == 3 and again.get("t", 1) is None
    again.shutdown()
    _break(d1)
    with pytest.raises(KafkaStorageError, match="All log dirs"):
        LogManager([d1, d2], LogConfig()).load()
