"""The acks run's check: a record acknowledged out of offset order is reported, not a failure; a moved one is lost."""

from __future__ import annotations

from pylog.chaos.run import ChaosConfig, Report
from pylog.chaos.verify import check_records
from pylog.chaos.workload import Acked


def test_an_acknowledgement_out_of_offset_order_is_reported_and_allowed_but_a_record_elsewhere_is_lost():
    # seq 1 acknowledged at offset 6 before seq 0's late acknowledgement at offset 5 (an old leader's answer)
    acked = Acked(by_partition={0: [(1, 6), (0, 5), (2, 7)]})
    checks = check_records(acked, {0: (8, {5: 0, 6: 1, 7: 2})})
    assert (checks[0].inversions, checks[0].inversion_cases, checks[0].lost) == (1, [(0, 5, 6)], [])
    report = Report(ChaosConfig(seed=1), acked=acked, checks=checks)
    assert report.ok and "acknowledged out of offset order" in report.text() and "(0, 5, 6)" in report.text()
    checks = check_records(acked, {0: (8, {5: 0, 6: 2, 7: 1})})
    assert checks[0].lost == [(1, 6), (2, 7)]
    assert not Report(ChaosConfig(seed=1), acked=acked, checks=checks).ok
