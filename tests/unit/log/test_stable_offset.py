"""The last stable offset and the aborted entries open transactions produce."""

from pylog.log.stable import CompletedTxn, OpenTransactions
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
