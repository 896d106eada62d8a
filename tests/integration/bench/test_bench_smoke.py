"""The produce/consume benchmarks run end to end with tiny sizes (figures are not checked: no timing here)."""

import pytest

from pylog.bench import consume, produce

pytestmark = pytest.mark.integration


def _cells(row):
    return [c for c in row if isinstance(c, (int, float))]


def test_produce_bench_measures_pylog_and_the_mock(zk_connect):
    rows = produce.run(records=3000, reps=1, scenarios=["1m"], loops=["asyncio"], value_size=100, with_mock=True,
                       prime_mb=0, zk_connect=zk_connect)
    assert [r[1] for r in rows] == ["pylog/asyncio", "mock (C)"]
    pylog, mock = rows
    assert all(v > 0 for v in _cells(pylog)[:2]) and all(v > 0 for v in _cells(mock)[:2])  # records/s, MB/s
    assert float(pylog[-1]) > 0 and mock[-1] == "1.00"  # the ratio column
    assert float(pylog[4].split()[0]) >= 0  # CPU-s/GB "(sys)" cell parses


def test_consume_bench_reads_back_what_it_wrote(zk_connect):
    rows = consume.run(records=4000, reps=1, loops=["asyncio"], value_size=100, with_mock=True,
                       zk_connect=zk_connect, window=2000)
    assert [(r[0], r[1]) for r in rows] == [("window (2,000 records, re-read)", "pylog/asyncio"),
                                            ("window (2,000 records, re-read)", "mock (C)"),
                                            ("full log (4,000 records)", "pylog/asyncio")]
    assert all(_cells(r)[0] > 0 for r in rows)


def test_idempotence_bench_compares_both_producers_on_one_broker(zk_connect):
    from pylog.bench import idempotence
    rows = idempotence.run(records=3000, reps=1, scenarios=["16k"], value_size=100, prime_mb=0, zk_connect=zk_connect)
    assert [r[1:3] for r in rows] == [[server, mode] for server in ("pylog", "mock")
                                      for mode in ("plain", "plain-1", "idempotent")]
    assert all(v > 0 for r in rows for v in _cells(r)[:2])
    assert rows[0][-2] == "1.00" and rows[1][-1] == "1.00" and float(rows[2][-1]) > 0
