"""`.txnindex` in Kafka's 34-byte format: append order, overlap search, truncation, torn tails."""

import struct

import pytest

from pylog.log.txn_index import (
    ENTRY_SIZE, AbortedTxn, TransactionIndex, TxnIndexError, collect_across, decode_entries, encode_entry,
    overlapping,
)


def test_entry_bytes():
    t = AbortedTxn(producer_id=7, first_offset=10, last_offset=15, last_stable_offset=16)
    assert encode_entry(t) == struct.pack(">hqqqq", 0, 7, 10, 15, 16)
    assert ENTRY_SIZE == 34
    assert decode_entries(encode_entry(t) + b"\x00" * 5) == [t]  # a torn tail is dropped


def test_unknown_version_is_refused():
    with pytest.raises(TxnIndexError, match="version 1 at byte 0"):
        decode_entries(struct.pack(">hqqqq", 1, 0, 0, 0, 0))


ENTRIES = [AbortedTxn(1, 0, 5, 3), AbortedTxn(2, 3, 9, 10), AbortedTxn(1, 12, 20, 21)]


@pytest.mark.parametrize("fetch,upper,want,complete", [
    (0, 4, [0, 1], True),       # the second entry's LSO (10) reaches 4: no later segment can matter
    (6, 10, [1], True),
    (10, 12, [], False),        # nothing overlaps here; later segments must be searched
    (10, 30, [2], False),
    (21, 30, [], False),
])
def test_overlap_search(fetch, upper, want, complete):
    assert overlapping(ENTRIES, fetch, upper) == ([ENTRIES[i] for i in want], complete)


def test_file_round_trip_order_and_truncation(tmp_path):
    path = str(tmp_path / "00000000000000000000.txnindex")
    idx = TransactionIndex(path)
    for t in ENTRIES:
        idx.append(t)
    with pytest.raises(TxnIndexError, match="not above"):
        idx.append(AbortedTxn(3, 0, 20, 21))
    idx.flush()
    assert TransactionIndex(path).entries == ENTRIES
    idx.truncate_to(9)  # the marker at offset 9 is gone, so is its entry
    assert TransactionIndex(path).entries == ENTRIES[:1]
    assert (tmp_path / "00000000000000000000.txnindex").stat().st_size == ENTRY_SIZE
    idx.delete()
    assert not (tmp_path / "00000000000000000000.txnindex").exists()


def test_no_file_until_the_first_abort(tmp_path):
    idx = TransactionIndex(str(tmp_path / "x.txnindex"))
    idx.flush()
    idx.truncate_to(0)
    assert idx.collect(0, 100) == ([], False)
    assert not (tmp_path / "x.txnindex").exists()


def test_search_goes_on_into_later_segments_until_complete():
    seg1 = [AbortedTxn(1, 0, 5, 3)]
    seg2 = [AbortedTxn(2, 3, 9, 10)]      # started in seg1's range, aborted in seg2
    seg3 = [AbortedTxn(3, 4, 30, 31)]     # never reached: seg2's entry already covers upper bound 8
    assert collect_across([seg1, seg2, seg3], 0, 8) == seg1 + seg2
    assert collect_across([seg1, seg2, seg3], 0, 40) == seg1 + seg2 + seg3


def test_a_log_keeps_aborted_transactions_per_segment(open_log, log_dir):
    import os

    from logtest import append

    plog = open_log()
    append(plog, 5)                        # offsets 0-4
    plog.add_aborted_txn(AbortedTxn(1, 0, 4, 2))  # producer 2's open transaction holds the LSO at 2
    plog.roll()
    append(plog, 5)                        # offsets 5-9
    plog.add_aborted_txn(AbortedTxn(2, 2, 9, 10))  # started in the first segment
    files = sorted(f for f in os.listdir(os.path.join(log_dir, "foo-0")) if f.endswith(".txnindex"))
    assert files == ["00000000000000000000.txnindex", "00000000000000000005.txnindex"]
    # A fetch from offset 6 starts in the second segment yet must hear of producer 2's abort.
    assert plog.collect_aborted_txns(6, 10) == [AbortedTxn(2, 2, 9, 10)]
    assert plog.collect_aborted_txns(0, 3) == [AbortedTxn(1, 0, 4, 2), AbortedTxn(2, 2, 9, 10)]
    plog.close()
    plog = open_log(recovery_point=10, clean_shutdown=True)
    assert plog.collect_aborted_txns(0, 10) == [AbortedTxn(1, 0, 4, 2), AbortedTxn(2, 2, 9, 10)]
    plog.truncate_to(7)                    # the ABORT marker at 9 is gone: so is its entry
    assert plog.collect_aborted_txns(0, 10) == [AbortedTxn(1, 0, 4, 2)]
