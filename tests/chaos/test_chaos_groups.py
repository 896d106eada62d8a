"""Bounded consumer-group chaos in CI: member processes consume and commit through a kill -9 of the group's
coordinator and of a member (scripts/chaos --groups runs longer schedules with controller kills and pauses).

Verified (pylog/chaos/group_verify.py): every acknowledged record processed at least once, no committed offset
ever went backwards, nothing skipped past a committed offset, and the group ends Stable with every partition
assigned exactly once. Kept short (well under 45 s on a quiet machine): the full suite is near its time limit.
"""

from __future__ import annotations

import os

import pytest

from pylog.chaos.groups import GroupChaosConfig
from support.groups import run_group_chaos

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(240)]

SEED = int(os.environ.get("PYLOG_CHAOS_SEED", "20251125"))


def test_a_group_loses_nothing_through_kills_of_its_coordinator_and_of_a_member(zk_connect, tmp_path):
    cfg = GroupChaosConfig(seed=SEED, faults=1, member_kills=1, members=2, partitions=4, rate=150)
    report = run_group_chaos(cfg, tmp_path, zk_connect, ["kill-coordinator", "kill-member"])
    v = report.verdict
    assert report.acked.count >= 500 and v.processed >= report.acked.count and v.commits > 0 and v.samples > 0
