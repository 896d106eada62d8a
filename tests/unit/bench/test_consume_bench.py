"""The consume benchmark sizes its window to the mock's 5 MB per partition and rejects what cannot fit."""

import pytest

from pylog.bench import consume


def test_window_is_40000_at_100_bytes_and_fits_the_mock_for_bigger_values():
    assert consume.window_for(100) == 40_000
    for size in (1000, 10_000):
        n = consume.window_for(size)
        assert 100 <= n < 40_000
        assert n * (size + consume.RECORD_OVERHEAD) <= consume.MOCK_WINDOW_BYTES < 5 * 1024 * 1024


def test_value_too_big_for_the_mock_is_one_clear_line(capsys):
    with pytest.raises(consume.BenchError, match="--value-size 50000.*--no-mock"):
        consume.window_for(50_000)
    assert consume.main(["--value-size", "50000"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("scripts/bench consume: --value-size 50000")
    assert "Traceback" not in err


def test_negative_value_size_is_rejected(capsys):
    assert consume.main(["--value-size", "-1"]) == 1
    assert "--value-size must be >= 0" in capsys.readouterr().err
