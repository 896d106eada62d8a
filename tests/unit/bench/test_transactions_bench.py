"""The transactions benchmark rejects bad flags in one line (exit 1) and reports its tables from real medians."""

import pytest

from pylog.bench import _harness as h
from pylog.bench import transactions as tx


@pytest.mark.parametrize("argv, start", [
    (["--records", "0"], "--records must be >= 1, got 0"),
    (["--reps", "-2"], "--reps must be >= 1, got -2"),
    (["--seconds", "-1"], "--seconds must be >= 0, got -1.0"),
    (["--every-ms", "0"], "--every-ms must be >= 1, got 0"),
    (["--every-records", "0"], "--every-records must be >= 1, got 0"),
    (["--records", "many"], "argument --records: invalid int value: 'many'"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
])
def test_bad_flags_are_one_line_and_exit_1(capsys, argv, start):
    assert tx.main(argv) == 1
    out, err = capsys.readouterr()
    assert err == f"scripts/bench transactions: {start}\n"
    assert out == ""  # nothing was measured


def test_modes_name_their_commit_policy():
    m = tx.modes(250, 500)
    assert list(m) == ["plain", "idempotent", "txn-250ms", "txn-500rec"]
    assert m["plain"]["enable.idempotence"] is False and m["idempotent"]["enable.idempotence"] is True
    assert m["txn-250ms"]["_commit"] == ("ms", 250) and m["txn-500rec"]["_commit"] == ("records", 500)


def _runs(rate: float) -> list[h.RunResult]:
    # 3 runs whose median is `rate` records/s (1,000 records each).
    return [h.RunResult(1000, 1000 / r, 0.1, 0.0, 100) for r in (rate / 2, rate, rate * 2)]


def test_rows_compare_with_plain_on_the_same_server_and_with_the_mock_for_the_same_producer():
    res = {"pylog plain": _runs(1000), "pylog txn-1rec": _runs(900),
           "mock plain": _runs(2000), "mock txn-1rec": _runs(600)}
    rows = tx.rows_for(res, {"pylog txn-1rec": [3, 5, 4], "mock txn-1rec": [1, 1, 1]}, ["pylog", "mock"],
                       ["plain", "txn-1rec"], "pylog")
    assert [r[:2] for r in rows] == [["pylog", "plain"], ["pylog", "txn-1rec"], ["mock", "plain"], ["mock", "txn-1rec"]]
    assert rows[1][2] == pytest.approx(900) and rows[1][5:] == ["4", "0.90", "1.50"]
    assert rows[0][5:] == ["-", "1.00", "0.50"]
    assert rows[3][5:] == ["1", "0.30", "-"]  # the mock has no peer to compare with


def test_latency_percentiles_are_nearest_rank():
    ms = [float(i) for i in range(1, 101)]
    assert tx.latency_row(ms) == [100, "50.0", "99.0", "100.0"]
    assert tx.percentile([7.0], 99) == 7.0
    with pytest.raises(tx.BenchError, match="raise --seconds"):
        tx.percentile([], 50)
