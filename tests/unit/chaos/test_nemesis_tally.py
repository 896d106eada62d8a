"""The long run's table counts faults by nemesis and variant, operations by workload and anomalies by name."""

from __future__ import annotations

from pylog.chaos.nemesis.tally import table


def test_the_table_totals_faults_operations_and_marks_bad_anomalies():
    runs = [{"args": "--nemesis pause,link --workload queue --faults 3", "ok": True, "seconds": 60, "ops": 900,
             "anomalies": {"int-send-skip": 2}, "bad": {},
             "timeline": [{"kind": "pause:leader-long"}, {"kind": "link:delay"}, {"kind": "link:loss"}]},
            {"args": "--nemesis kill --workload acks --faults 1", "ok": False, "seconds": 30, "acked": 5000,
             "lost": 3, "findings": ["hang: the ISR did not refill"], "timeline": [{"kind": "kill:kill-leader"}]}]
    text = table(runs)
    assert "| 3 | 900 operations | int-send-skip 2 | PASS (60 s) |" in text
    assert "| 1 | 5,000 records acked | **hang 1**, **lost 3** | FAIL (30 s) |" in text
    assert "Runs: 2, passed 1. Faults: 4." in text
    assert "Faults by nemesis: link 2, pause 1, kill 1." in text
    assert "Operations: 900 operations, 5,000 records acked." in text
    assert "Anomalies by name: hang 1 (bad), int-send-skip 2 (allowed), lost 3 (bad)." in text
