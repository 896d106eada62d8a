"""The bounded chaos run once with SASL_SSL (SCRAM-SHA-512 over TLS) as the inter-broker listener.

Same shape as test_chaos_no_loss (acks=all, min.insync.replicas=2, kill -9 of a leader and of the
controller), shorter: the followers' fetch sessions and the controller's channels must re-authenticate
over TLS after every restart and lose no acknowledged record.
"""

from __future__ import annotations

import os

import pytest

from pylog.chaos.run import ChaosConfig, run

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(240)]

SEED = int(os.environ.get("PYLOG_CHAOS_SEED", "20251125"))


def test_no_acknowledged_write_is_lost_with_sasl_ssl_between_brokers(zk_connect, tmp_path):
    cfg = ChaosConfig(seed=SEED, faults=2, expiries=0, partitions=1, rate=200, inter_broker="SASL_SSL")
    report = run(cfg, tmp_path, zk_connect=zk_connect)
    print(report.text())
    assert report.ok, report.text()
    assert sorted(f.kind for f in report.faults) == ["kill-controller", "kill-leader"]
    assert report.acked.count >= 300 and report.lost == 0
    assert all(c.replicas == [0, 1, 2] and c.batches > 0 for c in report.checks.values())
    logs = "".join((tmp_path / "cluster" / f"broker-{b}" / "console.log").read_text() for b in range(3))
    assert "Failed authentication" not in logs and "chaos-broker-secret" not in logs
