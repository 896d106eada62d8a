"""bin/pylog-top.sh --once --output json against a real 2-broker cluster serving /metrics: brokers, controller,
request p99, the busiest partitions and a group's lag as an operator's script reads them."""

from __future__ import annotations

import json

import pytest

from cli_helpers import script
from support.clients import create_topic, wait_for
from support.groups import GROUPS, committed_group, produce

pytestmark = pytest.mark.integration


def test_top_once_json(cluster_factory):
    pytest.importorskip("confluent_kafka")
    c = cluster_factory(2, overrides=GROUPS, prometheus=True)
    create_topic(c.bootstrap, "clicks", partitions=2, rf=2)
    produce(c.bootstrap, "clicks", [f"c{i}" for i in range(20)], partitions=2)
    committed_group(c.bootstrap, "clicks", "web", 20).close()
    produce(c.bootstrap, "clicks", [f"d{i}" for i in range(8)], partitions=2)

    def view() -> dict | None:
        r = script("pylog-top.sh", "--bootstrap-server", c.bootstrap.split(",")[0], "--once", "--output", "json",
                   "--interval", "0.5", timeout=60)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        return doc if [g["lag"] for g in doc["groups"] if g["group"] == "web"] == [8] else None

    doc = wait_for(view, timeout=60, what="pylog-top to show group web lagging 8 records", interval=0.5)
    assert doc["cluster"]["brokers"] == 2 and doc["cluster"]["under_replicated_partitions"] == 0
    assert doc["cluster"]["offline_partitions"] == 0
    brokers = {b["id"]: b for b in doc["brokers"]}
    assert set(brokers) == set(c.brokers)
    assert [b["id"] for b in doc["brokers"] if b["controller"]] == [doc["controller"]]
    for bid, b in brokers.items():
        assert b["metrics"] == f"http://127.0.0.1:{c.brokers[bid].metrics_port}/metrics"
        assert b["state"] == "running" and b["partitions"] >= 2
        assert b["bytes_in_per_sec"] is not None and b["event_loop_busy"] is not None
    assert any(b["produce_p99_ms"] is not None and b["produce_p99_ms"] > 0 for b in brokers.values())
    busiest = {(p["topic"], p["partition"]): p for p in doc["partitions"]}
    assert busiest[("clicks", 0)]["log_end_offset"] == 14 and busiest[("clicks", 1)]["log_end_offset"] == 14
    web = next(g for g in doc["groups"] if g["group"] == "web")
    assert web["partitions"] == 2 and web["members"] == 0
    assert doc["reassignments"] == []


def test_top_json_needs_once():
    r = script("pylog-top.sh", "--bootstrap-server", "127.0.0.1:1", "--output", "json")
    assert r.returncode == 2 and "--output json needs --once" in r.stderr
