"""Leader epoch cache: Kafka's LeaderEpochFileCache rules (KIP-101, KIP-279)."""

import pytest

from pylog.log import LeaderEpochCache


@pytest.fixture
def leo():
    return {"value": 0}


@pytest.fixture
def cache(tmp_path, leo):
    return LeaderEpochCache(str(tmp_path / "leader-epoch-checkpoint"), lambda: leo["value"], "foo-0")


def entries(cache):
    return [tuple(e) for e in cache.entries]


def test_assign_ignores_same_epoch_and_persists_changes(cache, tmp_path):
    cache.assign(0, 0)
    cache.assign(0, 5)  # same epoch, later offset: nothing new
    cache.assign(2, 10)
    assert entries(cache) == [(0, 0), (2, 10)]
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n2 10\n"
    assert cache.latest_epoch == 2


def test_assign_same_epoch_with_lower_offset_replaces_it(cache):
    cache.assign(1, 10)
    cache.assign(1, 7)
    assert entries(cache) == [(1, 7)]


def test_assign_older_epoch_truncates_conflicting_entries(cache, caplog):
    cache.assign(1, 0)
    cache.assign(3, 10)
    cache.assign(4, 20)
    cache.assign(2, 15)  # epochs >= 2 or starts >= 15 are removed first
    assert entries(cache) == [(1, 0), (2, 15)]
    assert "caused truncation of conflicting entries" in caplog.text


def test_assign_rejects_negative(cache):
    with pytest.raises(ValueError, match="Received invalid partition leader epoch entry"):
        cache.assign(-1, 0)


def test_end_offset_for_kip279_rules(cache, leo):
    assert cache.end_offset_for(0) == (-1, -1)  # empty cache
    cache.assign(2, 10)
    cache.assign(4, 20)
    cache.assign(7, 30)
    leo["value"] = 42
    assert cache.end_offset_for(-1) == (-1, -1)  # UNDEFINED_EPOCH
    assert cache.end_offset_for(7) == (7, 42)  # latest epoch: the log end offset
    assert cache.end_offset_for(4) == (4, 30)  # start of the next epoch
    assert cache.end_offset_for(5) == (4, 30)  # unknown epoch: the largest smaller one, and its end
    assert cache.end_offset_for(6) == (4, 30)
    assert cache.end_offset_for(2) == (2, 20)
    assert cache.end_offset_for(1) == (1, 10)  # older than all: requested epoch, first start offset
    assert cache.end_offset_for(8) == (-1, -1)  # newer than all


def test_kip101_scenario_follower_truncates_to_leader_epoch_end(tmp_path):
    # Leader wrote epoch 1 up to offset 4 and moved to epoch 2 at offset 5; a follower that still
    # has uncommitted epoch-1 data up to offset 7 asks for epoch 1's end and truncates there.
    leader = LeaderEpochCache(str(tmp_path / "l"), lambda: 9)
    leader.assign(1, 0)
    leader.assign(2, 5)
    assert leader.end_offset_for(1) == (1, 5)


def test_truncate_from_end(cache):
    for epoch, start in [(1, 0), (2, 10), (3, 20)]:
        cache.assign(epoch, start)
    cache.truncate_from_end(20)
    assert entries(cache) == [(1, 0), (2, 10)]
    cache.truncate_from_end(11)
    assert entries(cache) == [(1, 0), (2, 10)]
    cache.truncate_from_end(10)
    assert entries(cache) == [(1, 0)]


def test_truncate_from_start(cache):
    for epoch, start in [(1, 0), (2, 10), (3, 20)]:
        cache.assign(epoch, start)
    cache.truncate_from_start(15)
    assert entries(cache) == [(2, 15), (3, 20)]
    cache.truncate_from_start(20)  # exclusive: the entry at 20 stays
    assert entries(cache) == [(3, 20)]
    cache.truncate_from_start(5)
    assert entries(cache) == [(3, 20)]


def test_reload_from_file(tmp_path, cache):
    cache.assign(0, 0)
    cache.assign(5, 100)
    again = LeaderEpochCache(str(tmp_path / "leader-epoch-checkpoint"), lambda: 0)
    assert entries(again) == [(0, 0), (5, 100)]
    assert again.epoch_for_offset(99) == 0 and again.epoch_for_offset(100) == 5


def test_clear(cache, tmp_path):
    cache.assign(1, 1)
    cache.clear_and_flush()
    assert cache.entries == [] and cache.latest_epoch is None
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n0\n"


def test_truncate_from_start_where_the_first_epoch_starts_leaves_the_file_alone(cache, tmp_path):
    # Every log load asks for this with the log start offset; rewriting an unchanged file cost two
    # fsyncs per partition at start-up.
    cache.assign(0, 0)
    cache.assign(2, 10)
    path = tmp_path / "leader-epoch-checkpoint"
    inode = path.stat().st_ino
    cache.truncate_from_start(0)
    assert path.stat().st_ino == inode  # not replaced
    assert entries(cache) == [(0, 0), (2, 10)]
    cache.truncate_from_start(10)  # a real change still rewrites it
    assert entries(cache) == [(2, 10)]
    assert path.read_text() == "0\n1\n2 10\n"


def test_assign_without_sync_writes_the_file_and_says_so(cache, tmp_path):
    from pylog.log.checkpoint import sync_file
    assert cache.assign(3, 7, sync=False) is True
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n1\n3 7\n"
    assert cache.assign(3, 9, sync=False) is False  # nothing new: nothing written
    sync_file(cache.path)  # what the caller does next; the file stays as it is
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n1\n3 7\n"
