"""Bounded consume-transform-produce chaos in CI: two ctp_worker processes (confluent-kafka at defaults, group
members reading read_committed, transactions with send_offsets_to_transaction) through a kill -9 of a worker's
transaction coordinator and of a worker (scripts/chaos --ctp runs longer schedules: group coordinator, leader,
controller kills and pauses).

Verified (pylog/chaos/ctp.py): a read_committed consumer finds every input record in the output exactly once, in
input order per partition, nothing from an aborted transaction, no committed input offset without its output, and
find-hanging reports nothing, and the in-sync replicas of both topics are identical up to the high watermark.
"""

from __future__ import annotations

import os

import pytest

from pylog.chaos.groups import GroupChaosConfig
from support.groups import run_group_chaos

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(240)]

SEED = int(os.environ.get("PYLOG_CHAOS_SEED", "20251126"))


def test_consume_transform_produce_is_exactly_once_through_kills_of_a_txn_coordinator_and_a_worker(zk_connect,
                                                                                                     tmp_path):
    cfg = GroupChaosConfig(seed=SEED, faults=1, member_kills=1, members=2, partitions=4, rate=150, ctp=True)
    report = run_group_chaos(cfg, tmp_path, zk_connect, ["kill-member", "kill-txn-coordinator"])
    c = report.ctp
    assert report.acked.count >= 500 and c.inputs >= report.acked.count and c.outputs == c.inputs
    assert c.committed_txns > 0
    assert c.replica_batches["chaos"] > 0 and c.replica_batches["chaos-out"] > 0  # compared, none diverged (ok)
