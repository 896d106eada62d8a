"""The figures of `scripts/bench groups --protocol` from synthetic consumption records (pure)."""

import pytest

from pylog.bench.groups_kip848 import _figures


def test_recovery_throughput_and_longest_stop():
    t0 = 10_000
    # (consumed, partition, produced): two partitions flow at 10 records/s each until t0; then partition 0 goes on
    # for 1 s, nothing at all is consumed until t0 + 2.5 s, and partition 1's backlog starts moving at t0 + 3 s.
    records = [(t, p, t) for t in range(t0 - 5000, t0, 100) for p in (0, 1)]
    records += [(t, 0, t) for t in range(t0, t0 + 1000, 100)] + [(t, 0, t) for t in range(t0 + 2500, t0 + 6000, 100)]
    records += [(t0 + 3000 + i, 1, t0 + i * 10) for i in range(30)]
    f = _figures(sorted(records), t0, 2)
    assert f["recovered_s"] == 3.0  # partition 1's first record produced after t0 was consumed at t0 + 3 s
    assert f["before"] == 20  # records/s over the 5 s before t0
    assert f["pause_s"] == 1.6  # t0 + 900 to t0 + 2500
    assert f["during"] == pytest.approx(sum(1 for c, _, _ in records if t0 <= c < t0 + 3000) / 3)


def test_a_partition_never_consumed_again_is_an_error():
    with pytest.raises(RuntimeError, match="only 1 of 2 partitions"):
        _figures([(5, 0, 5)], 0, 2)
