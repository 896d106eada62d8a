"""Bounded runs of the groups and ctp workloads under nemeses in a private network (issue 30).

A consumer group of member processes (pylog/chaos/groups.py) consumes and commits while the group's coordinator
is paused past the ZooKeeper session timeout and a broker is partitioned off; consume-transform-produce workers
(pylog/chaos/ctp.py) do the same through a pause of the group's coordinator and the partition leader cut from
ZooKeeper only (Jepsen 2013's case). The groups run is judged by group_verify.py (every acknowledged record
processed, no committed offset backwards or past what was processed, the group Stable at the end), the ctp run by
ctp.py's exactly-once checks and identical replicas of both topics. Needs root (CI runs as root).
scripts/chaos --nemesis ... --workload groups|ctp runs longer schedules (with kill -9s of members).
"""

from __future__ import annotations

import os

import pytest

from pylog.chaos.nemesis.config import NemesisConfig
from pylog.chaos.nemesis.harness import run_isolated
from pylog.chaos.nemesis.net import capability

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(300),
              pytest.mark.skipif(bool(capability()), reason=f"nemesis runs need network namespaces: {capability()}")]

SEED = int(os.environ.get("PYLOG_NEMESIS_SEED", "30"))


def _run(tmp_path, workload: str, nemeses: list[str]) -> dict:
    cfg = NemesisConfig(seed=SEED, nemeses=nemeses, workload=workload, faults=len(nemeses), partitions=3, rate=150,
                        session_timeout_ms=3000, members=2)
    result = run_isolated(cfg, tmp_path / "run")
    print(result["text"])
    assert result["ok"], result["text"]
    assert sorted(e["kind"] for e in result["timeline"]) == sorted(nemeses), result["timeline"]
    return result


def test_a_group_loses_nothing_while_its_coordinator_is_paused_and_a_broker_cut_off(tmp_path):
    result = _run(tmp_path, "groups", ["pause:coordinator-long", "partition:one"])
    assert result["acked"] >= 500 and result["processed"] >= result["acked"] and result["commits"] > 0


def test_consume_transform_produce_stays_exactly_once_under_a_coordinator_pause_and_a_leader_cut_from_zk(tmp_path):
    result = _run(tmp_path, "ctp", ["pause:coordinator-long", "partition:leader-zk"])
    assert result["acked"] >= 500 and result["inputs"] >= result["acked"]
    assert result["outputs"] == result["inputs"] and result["committed_txns"] > 0
