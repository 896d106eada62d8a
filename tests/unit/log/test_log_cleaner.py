"""The log cleaner on real segment files: latest value per key, offsets kept, tombstones, lags, swaps."""

from __future__ import annotations

import os

import pytest
from kafka.record.memory_records import MemoryRecords
from logtest import BASE_TS, offsets_in, slice_bytes

from pylog.log import Log, LogConfig, LogManager, RecordValidationError
from pylog.log.checkpoint import OffsetCheckpoint
from pylog.log.cleaner import CleaningAborted, finish_clean, plan_clean, run_clean
from pylog.log.cleaner_manager import CLEANER_OFFSET_CHECKPOINT, LogCleanerManager, cleanable_offsets, log_to_clean
from pylog.log.cleaner_swap import CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_SUFFIX, segment_files
from pylog.protocol.records import build_batch, iter_batches, read_records, validate_batches

COMPACT = {"cleanup_policy": ("compact",), "segment_bytes": 300}
DAY = 86_400_000


def put(plog: Log, key: bytes | None, value: bytes | None, ts: int = BASE_TS, **producer) -> None:
    buf = bytearray(build_batch([(key, value, [], ts)], **producer))
    plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=ts)
    plog.high_watermark = plog.log_end_offset


def clean(plog: Log, now: int = BASE_TS, checkpoint: int | None = None, map_entries: int = 10**6):
    ltc = log_to_clean(plog, checkpoint, now)
    plan = plan_clean(plog, ltc.first_dirty, ltc.first_uncleanable, now, map_entries)
    run_clean(plan)
    finish_clean(plan)
    return plan


def contents(plog: Log, start: int | None = None) -> list[tuple[int, bytes | None, bytes | None]]:
    data = slice_bytes(plog.read(plog.log_start_offset if start is None else start, 10**7))
    offsets_in(data)  # every CRC checks out for a stock client's decoder
    out = []
    for h in iter_batches(data):
        out += [(r.offset, r.key, r.value) for r in read_records(data[h.position: h.position + h.size])]
    return out


def twenty_updates(open_log, **cfg) -> Log:
    """Keys k0..k2 updated in turn at offsets 0..19; 4 records per segment, 16.. is active."""
    plog = open_log(**{**COMPACT, **cfg})
    for i in range(20):
        put(plog, b"k%d" % (i % 3), b"v%d" % i)
    assert [s.base_offset for s in plog.segments] == [0, 4, 8, 12, 16]
    return plog


def test_keeps_the_latest_value_per_key_and_the_offsets(open_log):
    plog = twenty_updates(open_log)
    plan = clean(plog)
    assert plan.end_offset == 16
    # The active segment (16..19) is untouched; below it only the latest of each key survives,
    # at its original offset: a consumer sees increasing offsets with gaps.
    assert contents(plog) == [(13, b"k1", b"v13"), (14, b"k2", b"v14"), (15, b"k0", b"v15"),
                              (16, b"k1", b"v16"), (17, b"k2", b"v17"), (18, b"k0", b"v18"),
                              (19, b"k1", b"v19")]
    assert contents(plog, start=2) == contents(plog)  # a removed offset reads from the next batch
    assert plog.log_end_offset == 20 and plog.log_start_offset == 0
    assert not [n for n in os.listdir(plog.dir) if n.endswith((CLEANED_SUFFIX, SWAP_SUFFIX, DELETED_SUFFIX))]


def test_a_second_clean_merges_the_shrunken_segments_and_keeps_the_result(open_log):
    plog = twenty_updates(open_log)
    clean(plog)
    first = contents(plog)
    plog.roll()
    plan = clean(plog, checkpoint=16)
    # The four shrunken segments 0..12 fit one group now; 16 (full) does not fit with them.
    assert [base for base, _ in plan.result] == [0, 16]
    assert [s.base_offset for s in plog.segments] == [0, 16, 20]
    assert contents(plog) == [(17, b"k2", b"v17"), (18, b"k0", b"v18"), (19, b"k1", b"v19")]
    assert set(first) >= set(contents(plog))


def test_cleaned_log_reopens_with_consistent_indexes_and_epochs(open_log, log_dir):
    plog = twenty_updates(open_log)
    plog.epoch_cache.assign(3, 10)
    epochs = plog.epoch_cache.entries
    assert epochs[-1].start_offset == 10
    clean(plog)
    expected = contents(plog)
    plog.close()
    for clean_shutdown in (True, False):
        again = Log.open(plog.dir, LogConfig(**COMPACT), 0, clean_shutdown=clean_shutdown)
        for seg in again.segments:
            seg.check_indexes()
        assert contents(again) == expected
        assert again.log_end_offset == 20
        assert again.offset_for_timestamp(BASE_TS).offset == 13
        assert again.epoch_cache.entries == epochs
        again.close()


def test_tombstones_stay_until_delete_retention_then_go(open_log):
    plog = open_log(**COMPACT, delete_retention_ms=DAY)
    for i in range(6):
        put(plog, b"k%d" % i, b"v")
    put(plog, b"k1", None)  # tombstone at offset 6
    for i in range(5):
        put(plog, b"x", b"filler%d" % i)
    plog.roll()
    clean(plog, now=BASE_TS)
    assert (6, b"k1", None) in contents(plog)
    assert all(k != b"k1" or v is None for _, k, v in contents(plog))
    horizon = [h.delete_horizon_ms for h in iter_batches(slice_bytes(plog.read(6, 100)))][0]
    assert horizon == BASE_TS + DAY  # KIP-534: the first clean stamps the horizon into the batch
    clean(plog, now=BASE_TS + DAY - 1)
    assert (6, b"k1", None) in contents(plog)
    clean(plog, now=BASE_TS + DAY)
    assert [k for _, k, _ in contents(plog)] == [b"k0", b"k2", b"k3", b"k4", b"k5", b"x"]


def test_producer_fields_survive_and_its_last_batch_stays_empty(open_log):
    plog = open_log(**COMPACT)
    put(plog, b"a", b"1", producer_id=77, producer_epoch=2, base_sequence=0)
    put(plog, b"a", b"2", producer_id=77, producer_epoch=2, base_sequence=1)
    put(plog, b"b", b"3", producer_id=88, producer_epoch=0, base_sequence=0)
    put(plog, b"b", b"4")
    put(plog, b"a", b"5")  # supersedes producer 77's last record
    plog.roll()
    clean(plog)
    batches = list(iter_batches(slice_bytes(plog.read(0, 10**6))))
    by_pid = {h.producer_id: h for h in batches}
    assert [h.base_offset for h in batches] == [1, 2, 3, 4]
    assert (by_pid[77].base_offset, by_pid[77].records_count, by_pid[77].producer_epoch,
            by_pid[77].base_sequence, by_pid[77].last_sequence) == (1, 0, 2, 1, 1)
    assert (by_pid[88].base_offset, by_pid[88].records_count) == (2, 0)
    assert contents(plog) == [(3, b"b", b"4"), (4, b"a", b"5")]


def test_compressed_batches_are_thinned_in_their_codec(open_log):
    plog = open_log(**COMPACT)
    for codec in (1, 4):
        buf = bytearray(build_batch([(b"k%d" % i, b"c%d" % codec, [("h", b"x")], BASE_TS + i) for i in range(4)],
                                    compression=codec))
        plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    buf = bytearray(build_batch([(b"k1", b"new", [], BASE_TS)]))
    plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    plog.high_watermark = plog.log_end_offset
    plog.roll()
    clean(plog)
    data = slice_bytes(plog.read(0, 10**6))
    assert [h.compression for h in iter_batches(data)] == [4, 0]
    records = MemoryRecords(data)
    batch = records.next_batch()
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in batch] == [
        (4, b"k0", b"c4", [("h", b"x")], BASE_TS), (6, b"k2", b"c4", [("h", b"x")], BASE_TS + 2),
        (7, b"k3", b"c4", [("h", b"x")], BASE_TS + 3)]
    assert [h.last_offset_delta for h in iter_batches(data)] == [3, 0]  # last offset kept


def test_dirty_ratio_and_min_compaction_lag_decide_what_is_cleanable(open_log):
    plog = twenty_updates(open_log, min_cleanable_dirty_ratio=0.5)
    ltc = log_to_clean(plog, None, BASE_TS)
    assert (ltc.first_dirty, ltc.first_uncleanable, ltc.clean_bytes) == (0, 16, 0) and ltc.due
    ltc = log_to_clean(plog, 12, BASE_TS)  # 3 clean segments, 1 dirty: ratio 0.25
    assert (ltc.first_dirty, round(ltc.cleanable_ratio, 2), ltc.due) == (12, 0.25, False)
    plog.high_watermark = 9  # never past the high watermark: down to its segment's base
    assert log_to_clean(plog, None, BASE_TS).first_uncleanable == 8
    plog.high_watermark = 20
    lagged = open_log(name="lag-0", **COMPACT, min_compaction_lag_ms=DAY)
    for i in range(12):
        put(lagged, b"k", b"v", ts=BASE_TS + i * DAY // 4)
    # Records younger than a day at BASE_TS + 3 days: from the segment holding offset 9 on.
    assert log_to_clean(lagged, None, BASE_TS + 3 * DAY).first_uncleanable == 8


def test_max_compaction_lag_makes_a_log_due_whatever_its_ratio(open_log):
    plog = twenty_updates(open_log, min_cleanable_dirty_ratio=0.9, max_compaction_lag_ms=DAY)
    assert not log_to_clean(plog, 12, BASE_TS).due
    assert log_to_clean(plog, 12, BASE_TS + DAY + 1).due


def test_truncation_during_a_clean_aborts_it(open_log):
    plog = twenty_updates(open_log)
    ltc = log_to_clean(plog, None, BASE_TS)
    plan = plan_clean(plog, ltc.first_dirty, ltc.first_uncleanable, BASE_TS, 10**6)
    run_clean(plan)
    before = contents(plog, 0)
    plog.truncate_to(18)
    with pytest.raises(CleaningAborted):
        finish_clean(plan)
    assert contents(plog) == before[:18]
    assert not [n for n in os.listdir(plog.dir) if n.endswith(CLEANED_SUFFIX)]


def _cleaned_but_not_swapped(plog: Log):
    ltc = log_to_clean(plog, None, BASE_TS)
    plan = plan_clean(plog, ltc.first_dirty, ltc.first_uncleanable, BASE_TS, 10**6)
    run_clean(plan)
    return plan


@pytest.mark.parametrize("crash_after", ["cleaned", "swap", "deleted_some", "renamed_indexes"])
def test_a_crash_during_the_swap_recovers_at_load(open_log, crash_after):
    big = LogConfig(cleanup_policy=("compact",), segment_bytes=1200)  # segments 0..12 -> one cleaned segment
    plog = twenty_updates(open_log)
    reference = twenty_updates(open_log, name="ref-0")
    for p in (plog, reference):
        p.update_config(big)
    clean(reference)
    plan = _cleaned_but_not_swapped(plog)
    (base, old), = plan.result
    assert base == 0 and len(old) == 4
    before = contents(plog)
    for seg in plog.segments:
        seg.close()
    if crash_after != "cleaned":
        for path in segment_files(plog.dir, 0, CLEANED_SUFFIX):
            os.replace(path, path[: -len(CLEANED_SUFFIX)] + SWAP_SUFFIX)
    if crash_after in ("deleted_some", "renamed_indexes"):
        for seg in old[:2]:
            for path in segment_files(plog.dir, seg.base_offset):
                os.replace(path, path + DELETED_SUFFIX)
    if crash_after == "renamed_indexes":
        for path in segment_files(plog.dir, 0, SWAP_SUFFIX)[:1]:
            os.replace(path, path[: -len(SWAP_SUFFIX)])
    again = Log.open(plog.dir, big, 0)
    for seg in again.segments:
        seg.check_indexes()
    assert contents(again) == (before if crash_after == "cleaned" else contents(reference))
    assert again.log_end_offset == 20
    assert not [n for n in os.listdir(plog.dir) if n.endswith((CLEANED_SUFFIX, SWAP_SUFFIX, DELETED_SUFFIX))]
    again.close()


def test_manager_picks_the_filthiest_due_log_and_checkpoints_it(log_dir):
    logs = LogManager([log_dir], LogConfig(**COMPACT))
    logs.load()
    plain = logs.get_or_create("plain", 0, LogConfig(segment_bytes=300))
    compacted = logs.get_or_create("comp", 0, LogConfig(**COMPACT))
    for plog in (plain, compacted):
        for i in range(20):
            put(plog, b"k%d" % (i % 3), b"v%d" % i)
    cleaner = LogCleanerManager(logs)
    plan = cleaner.grab_filthiest(BASE_TS)
    assert plan is not None and plan.log is compacted
    assert cleaner.grab_filthiest(BASE_TS) is None  # in progress
    run_clean(plan)
    finish_clean(plan)
    root, offsets = cleaner.done(plan, cleaned=True)
    cleaner.write_checkpoint(root, offsets)
    assert OffsetCheckpoint(os.path.join(log_dir, CLEANER_OFFSET_CHECKPOINT)).read() == {("comp", 0): 16}
    assert cleaner.grab_filthiest(BASE_TS) is None  # nothing dirty below the active segment
    fresh = LogCleanerManager(logs)
    assert fresh.checkpoint_of(compacted) == 16
    compacted.truncate_to(10)
    assert fresh.checkpoint_of(compacted) is None  # truncated since: everything is dirty again
    logs.shutdown()


def test_a_compacted_log_refuses_records_without_a_key(open_log):
    plog = open_log(**COMPACT)
    buf = bytearray(build_batch([(b"a", b"1", [], BASE_TS), (None, b"2", [], BASE_TS), (None, b"3", [], BASE_TS)]))
    with pytest.raises(RecordValidationError) as e:
        plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    msg = "Compacted topic cannot accept message without key in topic partition foo-0"
    assert e.value.error_code == 87
    assert e.value.record_errors == [(1, msg), (2, msg)]
    assert str(e.value).startswith("One or more records have been rejected due to 2 record errors in total")
    assert plog.log_end_offset == 0 and plog.segments[0].size == 0
    plain = open_log(name="plain-0")
    plain.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    assert plain.log_end_offset == 3


def test_a_follower_appends_a_compacted_range_with_its_gaps(open_log):
    leader = twenty_updates(open_log)
    clean(leader)
    data = bytearray(slice_bytes(leader.read(0, 10**6)))
    headers = validate_batches(data, check_offsets=False)
    assert headers[0].base_offset == 13  # offsets 0..12 were compacted away
    follower = open_log(name="foo-1", cleanup_policy=("compact",))
    info = follower.append_as_follower(data, headers)
    assert (info.first_offset, info.last_offset, follower.log_end_offset) == (13, 19, 20)
    assert contents(follower, 0) == contents(leader)


def test_retention_during_a_clean_aborts_its_swap(open_log):
    plog = twenty_updates(open_log, cleanup_policy=("compact", "delete"))
    ltc = log_to_clean(plog, None, BASE_TS)
    plan = plan_clean(plog, ltc.first_dirty, ltc.first_uncleanable, BASE_TS, 10**6)
    run_clean(plan)
    plog.maybe_increment_log_start_offset(4)  # DeleteRecords; retention then drops segment 0
    assert plog.apply_retention(BASE_TS) == 1
    before = contents(plog)
    with pytest.raises(CleaningAborted):
        finish_clean(plan)
    assert contents(plog) == before and before[0][0] == 4
    assert not [n for n in os.listdir(plog.dir) if n.endswith(CLEANED_SUFFIX)]


def test_cleaning_keeps_aborted_transactions_indexed_and_their_markers(open_log):
    from pylog.log.control import ControlType, Marker, build_marker
    from pylog.log.txn_index import AbortedTxn

    plog = open_log(**COMPACT)
    put(plog, b"k0", b"txn", producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)  # 0
    buf = bytearray(build_marker(Marker(7, 0, ControlType.ABORT, 3)))                                 # 1
    plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    for i in range(14):
        put(plog, b"k%d" % (i % 3), b"v%d" % i)
    expected = [AbortedTxn(7, 0, 1, 2)]
    assert plog.collect_aborted_txns(0, 16) == expected
    clean(plog)
    assert plog.collect_aborted_txns(0, 16) == expected
    assert any(h.is_control for h in iter_batches(slice_bytes(plog.read(0, 10**7))))
    assert not [n for n in os.listdir(plog.dir) if n.endswith((CLEANED_SUFFIX, SWAP_SUFFIX, DELETED_SUFFIX))]
    plog.close()
    assert open_log(**COMPACT).collect_aborted_txns(0, 16) == expected


def _marker(plog: Log, pid: int, kind) -> None:
    from pylog.log.control import Marker, build_marker
    buf = bytearray(build_marker(Marker(pid, 0, kind, 0)))
    plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)
    plog.high_watermark = plog.log_end_offset


def _coordinator_put(plog: Log, pid: int, key: bytes, value: bytes) -> None:
    """A transactional offset commit as the group coordinator writes it (no sequence)."""
    buf = bytearray(build_batch([(key, value, [], BASE_TS)], producer_id=pid, producer_epoch=0, is_transactional=True))
    plog.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)
    plog.high_watermark = plog.log_end_offset


def test_an_aborted_transactional_record_does_not_shadow_the_older_value_of_its_key(open_log):
    from pylog.log.control import ControlType

    plog = open_log(**COMPACT)
    put(plog, b"k", b"committed")                       # 0
    _coordinator_put(plog, 9, b"k", b"aborted")          # 1
    _marker(plog, 9, ControlType.ABORT)                  # 2
    for i in range(14):
        put(plog, b"o%d" % (i % 3), b"v%d" % i)
    clean(plog)
    kept = [(o, v) for o, k, v in contents(plog) if k == b"k"]
    assert kept == [(0, b"committed"), (1, b"aborted")]  # the abort marker stays too: a reader drops offset 1


def test_nothing_past_the_first_open_transaction_is_cleaned(open_log):
    from pylog.log.control import ControlType

    plog = open_log(**COMPACT)
    put(plog, b"k", b"old")                              # 0
    _coordinator_put(plog, 9, b"k", b"pending")          # 1: still open
    for i in range(14):
        put(plog, b"k", b"v%d" % i)
    assert cleanable_offsets(plog, None, BASE_TS)[1] == 1
    clean(plog)
    assert [o for o, k, _ in contents(plog)][:2] == [0, 1]  # the value an abort would fall back to is kept
    _marker(plog, 9, ControlType.COMMIT)
    assert cleanable_offsets(plog, None, BASE_TS)[1] > 1
