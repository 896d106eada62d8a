"""Bounded chaos in CI: acks=all with min.insync.replicas=2 through kill -9 and a ZooKeeper session expiry.

Three real brokers, RF 3; a confluent-kafka producer writes numbered records while the driver
kills (-9) and restarts brokers (a partition leader and the controller among them) and pauses
one until ZooKeeper expires its session. Afterwards every acknowledged record must be at its
acknowledged offset and the in-sync replicas' segments identical up to the high watermark.
The seed is fixed so CI is repeatable; PYLOG_CHAOS_SEED replays another one (scripts/chaos
runs longer schedules).
"""

from __future__ import annotations

import os

import pytest

from pylog.chaos.run import ChaosConfig, run

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(480)]

SEED = int(os.environ.get("PYLOG_CHAOS_SEED", "20240607"))


def test_no_acknowledged_write_is_lost_through_kills_and_a_session_expiry(zk_connect, tmp_path):
    cfg = ChaosConfig(seed=SEED, faults=8, expiries=1, partitions=4, rate=300)
    report = run(cfg, tmp_path, zk_connect=zk_connect)
    print(report.text())
    assert report.ok, report.text()
    kinds = [f.kind for f in report.faults]
    assert len(kinds) == 8 and {"kill-controller", "kill-leader", "expire-session"} <= set(kinds), kinds
    expiry = next(f for f in report.faults if f.kind == "expire-session")
    assert "re-registered with session" in expiry.note
    assert report.acked.count >= 1000 and report.lost == 0
    assert all(c.replicas == [0, 1, 2] and c.batches > 0 for c in report.checks.values())
