"""The last stable offset and the aborted entries open transactions produce."""

from pylog.log.control import ControlType, Marker, build_marker, read_marker
from pylog.log.stable import CompletedTxn, OpenTransactions
from pylog.protocol.records import build_batch, parse_header
from pylog.log.txn_index import AbortedTxn


def test_lso_is_the_high_watermark_with_nothing_open():
    assert OpenTransactions().last_stable_offset(42) == 42


def test_lso_stops_at_the_oldest_open_transaction_and_moves_when_it_ends():
    o = OpenTransactions()
    o.on_transactional_batch(1, 10)
    o.on_transactional_batch(2, 12)
    o.on_transactional_batch(1, 14)  # more data of the same transaction: its start stays 10
    assert o.last_stable_offset(20) == 10
    assert o.last_stable_offset(5) == 5  # never above the high watermark
    done = o.on_marker(1, 20, is_abort=True)
    assert done == CompletedTxn(1, 10, 20, True)
    assert o.aborted_entry(done) == AbortedTxn(1, 10, 20, 12)  # producer 2 still holds the LSO at 12
    assert o.last_stable_offset(21) == 12
    done2 = o.on_marker(2, 21, is_abort=True)
    assert o.aborted_entry(done2) == AbortedTxn(2, 12, 21, 22)
    assert o.last_stable_offset(22) == 22


def test_marker_without_data_completes_nothing():
    assert OpenTransactions().on_marker(9, 3, is_abort=False) is None


def test_truncation_forgets_transactions_that_began_above():
    o = OpenTransactions()
    o.on_transactional_batch(1, 5)
    o.on_transactional_batch(2, 9)
    o.truncate_to(8)
    assert o.first_offsets == {1: 5}


def _data(pid, offset, transactional=True):
    b = build_batch([(None, b"v", (), 0)], offset, producer_id=pid, producer_epoch=0, base_sequence=0,
                    is_transactional=transactional)
    return parse_header(b), None


def _marker(pid, offset, kind):
    b = build_marker(Marker(pid, 0, kind, 1), 0, offset)
    h = parse_header(b)
    return h, read_marker(h, b)


def test_batches_in_log_order_interleaving_commit_and_abort():
    """brod's bug class: one producer's commit then abort, another's data between, in one pass."""
    o = OpenTransactions()
    out, lso = [], []
    for b in (_data(1, 0), _data(2, 1), _data(9, 2, transactional=False), _marker(1, 3, ControlType.COMMIT),
              _data(1, 4), _marker(1, 5, ControlType.ABORT), _marker(2, 6, ControlType.ABORT)):
        out.append(o.on_batch(*b))
        lso.append(o.last_stable_offset(b[0].base_offset + 1))
    assert out[:3] == [None, None, None]
    assert out[3] == (CompletedTxn(1, 0, 3, False), None)
    assert lso == [0, 0, 0, 1, 1, 1, 7]
    assert out[5] == (CompletedTxn(1, 4, 5, True), AbortedTxn(1, 4, 5, 1))  # producer 2 still open from 1
    assert out[6] == (CompletedTxn(2, 1, 6, True), AbortedTxn(2, 1, 6, 7))
    assert o.last_stable_offset(7) == 7


def _append_raw(plog, raw):
    from pylog.protocol.records import validate_batches
    buf = bytearray(raw)
    return plog.append_as_leader(buf, validate_batches(buf), 0)


def _txn_batch(pid, n=1):
    return build_batch([(None, b"v", (), 0)] * n, producer_id=pid, producer_epoch=0, base_sequence=0,
                       is_transactional=True)


def test_log_tracks_lso_and_indexes_aborts_across_restart_and_truncation(open_log):
    from logtest import append

    plog = open_log()
    _append_raw(plog, _txn_batch(1, 2))                  # 0-1, producer 1 opens
    append(plog, 1)                                        # 2, plain
    _append_raw(plog, _txn_batch(2))                       # 3, producer 2 opens
    plog.high_watermark = plog.log_end_offset
    assert plog.last_stable_offset == 0
    _append_raw(plog, build_marker(Marker(1, 0, ControlType.ABORT, 1)))     # 4
    plog.high_watermark = plog.log_end_offset
    assert plog.last_stable_offset == 3
    assert plog.collect_aborted_txns(0, 5) == [AbortedTxn(1, 0, 4, 3)]
    plog.close()
    plog = open_log(recovery_point=5, clean_shutdown=True)  # rebuilt from the log at load
    plog.high_watermark = 5
    assert plog.open_txns.first_offsets == {2: 3} and plog.last_stable_offset == 3
    _append_raw(plog, build_marker(Marker(2, 0, ControlType.COMMIT, 1)))    # 5
    plog.high_watermark = 6
    assert plog.last_stable_offset == 6
    plog.truncate_to(5)                                    # the COMMIT marker is gone: producer 2 is open again
    assert plog.open_txns.first_offsets == {2: 3} and plog.last_stable_offset == 3
    plog.truncate_to(4)                                    # and the ABORT marker: both open, its index entry gone
    assert plog.open_txns.first_offsets == {1: 0, 2: 3} and plog.collect_aborted_txns(0, 10) == []


def test_a_follower_builds_the_same_transaction_state_from_replicated_batches(open_log):
    from pylog.protocol.records import validate_batches

    leader = open_log(name="l-0")
    _append_raw(leader, _txn_batch(1, 2))
    _append_raw(leader, build_marker(Marker(1, 0, ControlType.ABORT, 1)))
    _append_raw(leader, _txn_batch(2))
    follower = open_log(name="f-0")
    data = bytearray(b"".join(s.read() for s in leader.read(0, 1 << 20)))
    follower.append_as_follower(data, validate_batches(data, check_offsets=False))
    for plog in (leader, follower):
        plog.high_watermark = plog.log_end_offset
    assert follower.open_txns.first_offsets == leader.open_txns.first_offsets == {2: 3}
    assert follower.last_stable_offset == leader.last_stable_offset == 3
    assert follower.collect_aborted_txns(0, 4) == leader.collect_aborted_txns(0, 4) == [AbortedTxn(1, 0, 2, 3)]
