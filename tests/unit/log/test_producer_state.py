"""The idempotent producer's per-partition state: Kafka's sequence/epoch rules, dedup, snapshots."""

from __future__ import annotations

import os
import struct

import pytest
from logtest import BASE_TS, offsets_in, slice_bytes

from pylog.log.producer_snapshot import (CorruptSnapshotError, decode_snapshot, encode_snapshot, list_snapshots,
                                         snapshot_path)
from pylog.log.producer_state import (NUM_BATCHES_TO_RETAIN, BatchMetadata, InvalidProducerEpochError,
                                      InvalidProducerRecordError, OutOfOrderSequenceError, ProducerEntry,
                                      ProducerStateManager, decrement_sequence, in_sequence)
from pylog.protocol.records import build_batch, parse_header, validate_batches

INT_MAX = 2**31 - 1


def batch(pid: int, epoch: int, seq: int, n: int = 1, ts: int = BASE_TS) -> bytearray:
    """A client batch of `n` records from producer `pid`."""
    return bytearray(build_batch([(None, b"v%d" % (seq + i), [], ts + i) for i in range(n)],
                                 producer_id=pid, producer_epoch=epoch, base_sequence=seq))


def headers(buf: bytearray, base_offset: int = 0):
    hs = validate_batches(buf)
    for h in hs:  # as appended: offsets assigned
        h.base_offset = base_offset
    return hs


def produce(log, pid: int, epoch: int, seq: int, n: int = 1):
    buf = batch(pid, epoch, seq, n)
    return log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)


# -- pure rules ---------------------------------------------------------------------------------

def test_sequence_arithmetic_wraps_like_kafka():
    assert in_sequence(4, 5) and in_sequence(INT_MAX, 0) and in_sequence(-1, 0)
    assert not in_sequence(4, 6) and not in_sequence(4, 4)
    assert decrement_sequence(5, 2) == 3 and decrement_sequence(1, 3) == INT_MAX - 1
    assert BatchMetadata(last_seq=1, last_offset=10, offset_delta=3, timestamp=0).first_seq == INT_MAX - 1


def test_new_producer_accepts_any_sequence_then_requires_the_next():
    psm = ProducerStateManager("t-0")
    assert psm.check_client_append(validate_batches(batch(7, 0, 42, n=3)), 0) is None  # KIP-360: no state, any seq
    psm.update(headers(batch(7, 0, 42, n=3), 0))
    assert psm.check_client_append(validate_batches(batch(7, 0, 45)), 3) is None
    with pytest.raises(OutOfOrderSequenceError, match="46 \\(incoming seq. number\\), 44"):
        psm.check_client_append(validate_batches(batch(7, 0, 46)), 3)


def test_retained_batches_are_duplicates_with_their_original_offsets():
    psm = ProducerStateManager("t-0")
    offset = 0
    for i in range(NUM_BATCHES_TO_RETAIN + 1):
        psm.update(headers(batch(1, 0, i * 2, n=2), offset))
        offset += 2
    # the oldest batch (seq 0-1) fell out; seq 2-3 at offsets 2-3 is still known
    dup = psm.check_client_append(validate_batches(batch(1, 0, 2, n=2)), offset)
    assert dup is not None and (dup.first_offset, dup.last_offset) == (2, 3)
    with pytest.raises(OutOfOrderSequenceError):
        psm.check_client_append(validate_batches(batch(1, 0, 0, n=2)), offset)
    # same first sequence but a different range is not a duplicate
    with pytest.raises(OutOfOrderSequenceError):
        psm.check_client_append(validate_batches(batch(1, 0, 2, n=3)), offset)


def test_epoch_rules():
    psm = ProducerStateManager("t-0")
    psm.update(headers(batch(3, 5, 0, n=2), 0))
    with pytest.raises(InvalidProducerEpochError, match="is 4, which is smaller than the last seen epoch 5"):
        psm.check_client_append(validate_batches(batch(3, 4, 2)), 2)
    with pytest.raises(OutOfOrderSequenceError, match="new epoch"):
        psm.check_client_append(validate_batches(batch(3, 6, 2)), 2)
    assert psm.check_client_append(validate_batches(batch(3, 6, 0)), 2) is None
    # once the new epoch wrote, a retry from the old epoch is fenced, not a duplicate
    psm.update(headers(batch(3, 6, 0), 2))
    with pytest.raises(InvalidProducerEpochError):
        psm.check_client_append(validate_batches(batch(3, 5, 0, n=2)), 3)


def test_several_batches_in_one_append_are_checked_in_order():
    psm = ProducerStateManager("t-0")
    psm.update(headers(batch(9, 0, 0), 0))
    assert psm.check_client_append(validate_batches(batch(9, 0, 1) + batch(9, 0, 2)), 1) is None
    with pytest.raises(OutOfOrderSequenceError):
        psm.check_client_append(validate_batches(batch(9, 0, 1) + batch(9, 0, 3)), 1)


def test_idempotent_batch_without_sequence_is_invalid_record():
    psm = ProducerStateManager("t-0")
    with pytest.raises(InvalidProducerRecordError):
        psm.check_client_append(validate_batches(batch(9, 0, -1)), 0)


def test_replicated_batches_update_without_checks():
    psm = ProducerStateManager("t-0")
    psm.update(headers(batch(2, 3, 10), 0))
    psm.update(headers(batch(2, 1, 50), 1), replicated=True)  # an older epoch from the leader: kept, warned
    assert psm.producers[2].epoch == 1 and psm.producers[2].last_seq == 50
    assert psm.map_end_offset == 2


def test_expiration_drops_idle_producers():
    psm = ProducerStateManager("t-0")
    psm.update(headers(batch(1, 0, 0, ts=1000), 0))
    psm.update(headers(batch(2, 0, 0, ts=5000), 1))
    assert psm.remove_expired(now_ms=6000, expiration_ms=4000) == 1
    assert list(psm.producers) == [2]


def test_expiration_keeps_a_producer_whose_transaction_is_open():
    psm = ProducerStateManager("t-0")
    psm.update(headers(batch(1, 0, 0, ts=1000), 0))
    psm.update(headers(batch(3, 0, 0, ts=1000), 1))
    assert psm.remove_expired(now_ms=9000, expiration_ms=4000, open_txns={1: 0}) == 1
    assert list(psm.producers) == [1]


# -- snapshot file format -----------------------------------------------------------------------

def test_snapshot_bytes_are_kafkas_layout():
    entry = ProducerEntry(1000, 2, [BatchMetadata(9, 104, 2, BASE_TS)], -1, BASE_TS, -1)
    data = encode_snapshot([entry])
    version, crc, count = struct.unpack_from(">hIi", data)
    assert (version, count, len(data)) == (1, 1, 10 + 46)
    assert struct.unpack_from(">qhiqiqiq", data, 10) == (1000, 2, 9, 104, 2, BASE_TS, -1, -1)
    assert decode_snapshot(data) == [entry]
    empty = ProducerEntry(5, 0, [], 3, 77, -1)  # a producer known only by epoch: offset -1, delta 0
    assert struct.unpack_from(">qhiqiqiq", encode_snapshot([empty]), 10) == (5, 0, -1, -1, 0, 77, 3, -1)
    assert decode_snapshot(encode_snapshot([empty])) == [empty]


@pytest.mark.parametrize("damage", ["crc", "truncate", "version"])
def test_damaged_snapshot_is_refused(damage):
    data = bytearray(encode_snapshot([ProducerEntry(1, 0, [BatchMetadata(0, 0, 0, 0)])]))
    if damage == "crc":
        data[-1] ^= 1
    elif damage == "truncate":
        data = data[:-3]
    else:
        data[1] = 9
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(bytes(data))


# -- the partition log ------------------------------------------------------------------------------

def test_duplicate_is_answered_with_original_offsets_and_not_appended(open_log):
    log = open_log()
    first = produce(log, 1, 0, 0, n=3)
    produce(log, 1, 0, 3, n=2)
    again = produce(log, 1, 0, 0, n=3)
    assert again.duplicate and (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert log.log_end_offset == 5
    assert offsets_in(slice_bytes(log.read(0, 1 << 20))) == [0, 1, 2, 3, 4]
    with pytest.raises(OutOfOrderSequenceError):
        produce(log, 1, 0, 7)
    assert log.log_end_offset == 5


def test_state_survives_clean_restart_through_the_snapshot(open_log):
    log = open_log()
    produce(log, 1, 0, 0, n=2)
    produce(log, 2, 4, 0)
    log.close()
    assert list_snapshots(log.dir) == [3]
    again = open_log(clean_shutdown=True)
    assert again.producer_state.producers[2].epoch == 4
    dup = produce(again, 1, 0, 0, n=2)  # the last batch of producer 1 is in the snapshot
    assert dup.duplicate and dup.first_offset == 0
    with pytest.raises(InvalidProducerEpochError):
        produce(again, 2, 3, 1)


def test_state_after_crash_comes_from_snapshot_plus_log_tail(open_log):
    log = open_log(segment_bytes=300)
    seqs = {1: 0, 2: 0}
    for i in range(12):
        pid = 1 + i % 2
        produce(log, pid, 0, seqs[pid])
        seqs[pid] += 1
    assert len(log.segments) > 1 and list_snapshots(log.dir)  # rolls took snapshots
    log.flush()  # no close: no snapshot at the end, the tail must be replayed
    again = open_log()
    for pid in (1, 2):
        dup = produce(again, pid, 0, seqs[pid] - 1)
        assert dup.duplicate
        assert produce(again, pid, 0, seqs[pid]).duplicate is False


def test_corrupt_snapshot_falls_back_to_an_older_one_or_the_log(open_log):
    log = open_log()
    produce(log, 1, 0, 0)
    log.close()
    with open(snapshot_path(log.dir, 1), "r+b") as f:
        f.seek(12)
        f.write(b"\xff")
    again = open_log(clean_shutdown=True)
    assert not os.path.exists(snapshot_path(log.dir, 1))
    assert produce(again, 1, 0, 0).duplicate  # rebuilt from the log itself


def test_truncation_rebuilds_state_and_drops_later_snapshots(open_log):
    log = open_log(segment_bytes=300)
    for seq in range(10):
        produce(log, 1, 0, seq)
    later = [o for o in list_snapshots(log.dir) if o > 4]
    assert later
    log.truncate_to(4)
    assert all(o <= 4 for o in list_snapshots(log.dir))
    assert log.producer_state.producers[1].last_seq == 3
    assert produce(log, 1, 0, 3).duplicate
    assert produce(log, 1, 0, 4).first_offset == 4  # the truncated sequence is accepted again


def test_truncate_fully_forgets_producers(open_log):
    log = open_log(segment_bytes=300)
    for seq in range(8):
        produce(log, 1, 0, seq)
    log.truncate_fully_and_start_at(100)
    assert log.producer_state.producers == {} and list_snapshots(log.dir) == []
    assert produce(log, 1, 0, 50).first_offset == 100  # unknown producer: any sequence


def test_follower_appends_build_the_same_state(open_log):
    leader = open_log(name="l-0")
    follower = open_log(name="l-1")
    for seq in range(0, 6, 2):
        produce(leader, 5, 1, seq, n=2)
    data = bytearray(slice_bytes(leader.read(0, 1 << 20)))
    follower.append_as_follower(data, validate_batches(data))
    assert follower.producer_state.producers[5] == leader.producer_state.producers[5]
    h = parse_header(data)
    assert (h.producer_id, h.base_sequence) == (5, 0)


def test_truncating_a_log_without_producers_skips_the_replay(open_log, monkeypatch):
    from logtest import append
    log = open_log(segment_bytes=300)
    for _ in range(12):
        append(log, 1, value=b"v" * 60)
    snaps = list_snapshots(log.dir)
    assert snaps and log.producer_state.producers == {}
    monkeypatch.setattr(log, "read", lambda *a, **k: pytest.fail("replayed a log without producers"))
    log.truncate_to(3)
    assert all(o <= 3 for o in list_snapshots(log.dir))
    assert log.producer_state.map_end_offset == 3 and log.producer_state.producers == {}


def test_a_coordinator_batch_needs_no_sequence_but_a_current_epoch(open_log):
    """A transactional offset commit (Kafka's COORDINATOR origin): sequence -1 is fine, an older epoch is not."""
    log = open_log()

    def coordinator_append(epoch: int):
        buf = bytearray(build_batch([(b"k", b"v", [], BASE_TS)], producer_id=7, producer_epoch=epoch,
                                    is_transactional=True))
        return log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)

    with pytest.raises(InvalidProducerRecordError):  # the same batch from a client is refused
        buf = batch(7, 1, -1)
        log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    assert coordinator_append(1).first_offset == 0
    assert coordinator_append(1).first_offset == 1  # no duplicate detection without sequences
    assert coordinator_append(2).first_offset == 2
    with pytest.raises(InvalidProducerEpochError):
        coordinator_append(1)


def test_a_marker_with_a_bumped_epoch_fences_the_older_epoch(open_log):
    """Kafka's appendEndTxnMarker: the coordinator's ABORT after fencing a producer carries the new epoch, and
    the partition refuses the zombie's older epoch from then on (its transactional offset commits too)."""
    from pylog.log.control import ControlType, Marker, build_marker

    log = open_log()
    produce(log, 7, 0, 0)
    buf = bytearray(build_marker(Marker(7, 1, ControlType.ABORT, 0)))
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)
    with pytest.raises(InvalidProducerEpochError):
        produce(log, 7, 0, 1)
    assert produce(log, 7, 1, 0).first_offset == 2  # the new epoch starts its sequences at 0
    buf = bytearray(build_marker(Marker(99, 3, ControlType.COMMIT, 0)))  # a producer never seen here: no entry
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)
    assert 99 not in log.producer_state.producers


def test_a_marker_s_coordinator_epoch_is_kept_through_a_crash_and_a_clean_restart(open_log):
    """Kafka's appendEndTxnMarker records the coordinator epoch: WriteTxnMarkers from an older coordinator
    is then fenced. The epoch comes back from the log tail after a crash and from the snapshot after a stop."""
    from pylog.log.control import ControlType, Marker, build_marker

    log = open_log()
    produce(log, 7, 0, 0)
    buf = bytearray(build_marker(Marker(7, 0, ControlType.COMMIT, 5)))
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)
    assert log.producer_state.producers[7].coordinator_epoch == 5
    buf = bytearray(build_marker(Marker(7, 0, ControlType.ABORT, 3)))  # an older coordinator's marker lowers nothing
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS, from_coordinator=True)
    assert log.producer_state.producers[7].coordinator_epoch == 5
    log.flush()  # no close: the tail with the markers is replayed
    crashed = open_log()
    assert crashed.producer_state.producers[7].coordinator_epoch == 5
    crashed.close()
    assert open_log(clean_shutdown=True).producer_state.producers[7].coordinator_epoch == 5
