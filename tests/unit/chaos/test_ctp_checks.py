"""The exactly-once checks of `scripts/chaos --ctp` (pylog/chaos/ctp.py) on hand-made histories."""

from __future__ import annotations

from pylog.chaos.ctp import check_ctp, parse_workers

INPUTS = {0: {0: 10, 1: 11, 2: 12}, 1: {0: 20, 1: 21}}


def out(p: int, off: int, txn: str = "w.1.1") -> str:
    return f"{p}:{off}:{INPUTS[p][off]}:{txn}"


def test_every_input_once_in_order_passes():
    output = {0: [out(0, 0), out(0, 1), out(0, 2)], 1: [out(1, 0), out(1, 1)]}
    assert check_ctp(INPUTS, output, {0: 3, 1: 2}, set()) == []


def test_a_missing_record_below_the_committed_offset_is_lost_and_committed_without_writes():
    output = {0: [out(0, 0), out(0, 2)], 1: [out(1, 0), out(1, 1)]}
    found = check_ctp(INPUTS, output, {0: 3, 1: 2}, set())
    assert [f.split(":")[0] for f in found] == ["lost", "offsets-committed-without-writes"]
    assert "(0, 1)" in found[1]


def test_a_missing_record_above_the_committed_offset_is_only_lost():
    output = {0: [out(0, 0), out(0, 1)], 1: [out(1, 0), out(1, 1)]}
    assert [f.split(":")[0] for f in check_ctp(INPUTS, output, {0: 2, 1: 2}, set())] == ["lost"]


def test_duplicates_aborted_reads_reordering_and_corruption_are_named():
    output = {0: [out(0, 1), out(0, 0), out(0, 2), out(0, 2, "w.1.9")],
              1: [out(1, 0), out(1, 1), "1:1:99:w.1.1", out(0, 0)]}
    found = " | ".join(check_ctp(INPUTS, output, {0: 3, 1: 2}, {"w.1.9"}))
    for name in ("reordered-within-partition: output partition 0", "duplicated: 1", "aborted-read: 1",
                 "corrupted: 2"):
        assert name in found, found
    assert "lost" not in found


def test_worker_logs_give_committed_and_aborted_transactions_and_errors():
    committed, aborted, errors = parse_workers(["S\nC a.1.1\nE a.1.2 NOT_COORDINATOR\nA a.1.2\n", "S\nC b.2.1\n"])
    assert committed == {"a.1.1", "b.2.1"} and aborted == {"a.1.2"} and errors["NOT_COORDINATOR"] == 1
