"""Jepsen's queue workload (pylog/chaos/jepsen) in CI: six client processes (plain, idempotent and transactional
confluent-kafka producers; consumers subscribed in a group or assigned) send, poll and commit transactions
through a kill -9 of a partition leader and of the controller, then drain every partition from the beginning.

The checker must find no bad anomaly (lost-write, duplicate from an idempotent or transactional producer, G1a,
inconsistent offsets, skips or reorderings under assign, unseen values after the drain, diverged replicas, a
read above the high watermark, a hanging transaction), and the run folder must hold the history, the fault
timeline, the result and the perf graph. scripts/chaos --workload queue runs longer schedules.
"""

from __future__ import annotations

import json
import os

import pytest

from pylog.chaos.jepsen.chaos_run import QueueChaosConfig, run_queue_chaos

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(240)]

SEED = int(os.environ.get("PYLOG_CHAOS_SEED", "20261129"))


def test_the_queue_workload_finds_no_bad_anomaly_through_a_leader_and_a_controller_kill(zk_connect, tmp_path):
    cfg = QueueChaosConfig(seed=SEED, kinds=["kill-leader", "kill-controller"], duration=6, partitions=3)
    report = run_queue_chaos(cfg, tmp_path / "run", zk_connect=zk_connect, folder=tmp_path / "folder")
    print(report.text())
    assert report.ok, report.text()
    assert [f.kind for f in report.faults] == ["kill-leader", "kill-controller"]
    stats = report.result.stats
    assert stats["values_acked"] >= 50 and stats["values_read"] >= stats["values_acked"], stats
    assert report.workload.drained and report.workload.by_type.get("ok", 0) >= 100
    result = json.loads((tmp_path / "folder" / "result.json").read_text())
    assert result["valid"] is True and result["bad"] == {}
    faults = [json.loads(line) for line in (tmp_path / "folder" / "faults.jsonl").read_text().splitlines()]
    assert [f["kind"] for f in faults] == ["kill-leader", "kill-controller"] and faults[0]["end"] > faults[0]["start"]
    assert (tmp_path / "folder" / "perf.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    history = (tmp_path / "folder" / "history.jsonl").read_text().splitlines()
    assert any('"f":"txn"' in line and '"type":"ok"' in line for line in history)
