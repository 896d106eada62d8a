"""The load monitor's aggregation and the load / partition_load bodies made from it."""

from __future__ import annotations

import json
import re

import pytest

from pylog.balancer import params as P
from pylog.balancer.cluster import ClusterFacts, load_body
from pylog.balancer.load import Capacity, CapacityError, broker_loads, partition_load_body, read_capacities, \
    with_capacity
from pylog.balancer.monitor import LoadMonitor, aggregate
from pylog.cli.admin_client import ClusterMetadata, PartitionMetadata, TopicMetadata
from pylog.common.metrics_format import MetricSample, encode_sample

MB = 1024 * 1024


def sample(broker, p, ts, size, rate_in, leader=True):
    return (ts, encode_sample(MetricSample(broker, "t", p, ts, size, rate_in, rate_in / 2, rate_in / 100, leader))[1])


def facts():
    parts = {0: PartitionMetadata(0, 0, (0, 1), (0, 1)), 1: PartitionMetadata(1, 1, (1, 2), (1, 2))}
    md = ClusterMetadata({0: None, 1: None, 2: None}, 0, {"t": TopicMetadata("t", None, False, parts)})
    return ClusterFacts(md, None, {0: "h0", 1: "h1", 2: "h1"})


def test_aggregate_means_the_leaders_rates_and_keeps_the_largest_newest_size():
    records = [sample(0, 0, 1000, 10 * MB, 2048.0), sample(0, 0, 2000, 11 * MB, 4096.0),
               sample(1, 0, 2000, 9 * MB, 0.0, leader=False), sample(0, 0, 100, 1, 99999.0)]  # too old: dropped
    loads = aggregate(records, retained_ms=1500, now_ms=2100)
    assert loads[("t", 0)].size_bytes == 11 * MB
    assert loads[("t", 0)].bytes_in == 3072.0  # the follower's zero is not a leader rate


def test_broker_loads_follow_cruise_controls_replica_model():
    loads = aggregate([sample(0, 0, 1000, 4 * MB, 2048.0)], 10_000, 1000)
    rows = broker_loads(facts(), loads, [0, 1, 2])
    assert rows[0]["LeaderNwInRate"] == 2.0 and rows[0]["NwOutRate"] == 1.0 and rows[0]["DiskMB"] == 4
    assert rows[1]["FollowerNwInRate"] == 2.0 and rows[1]["NwOutRate"] == 0 and rows[1]["PnwOutRate"] == 1.0
    assert (rows[1]["Leaders"], rows[2]["Replicas"]) == (1, 1)  # t-1 has no samples: still counted
    with_capacity(rows, {-1: Capacity(8.0, 100.0, None)})
    assert rows[0]["DiskPct"] == 50.0 and "NetworkOutCapacity" not in rows[0]
    body = load_body(rows, {0: None, 1: None, 2: None}, [0, 1, 2], {0: "h0", 1: "h1", 2: "h1"})
    assert [(h["Host"], h["Replicas"]) for h in body["hosts"]] == [("h0", 1), ("h1", 3)]


def test_partition_load_sorts_filters_and_refuses_cpu():
    loads = aggregate([sample(0, 0, 1000, MB, 1024.0), sample(1, 1, 1000, 3 * MB, 0.0)], 10_000, 1000)
    body = partition_load_body(facts(), loads, "disk", 10)
    assert [(r["partition"], r["disk"]) for r in body["records"]] == [(1, 3.0), (0, 1.0)]
    assert partition_load_body(facts(), loads, "nw_in", 1)["records"][0]["partition"] == 0
    assert partition_load_body(facts(), loads, "disk", 10, broker={0})["records"][0]["followers"] == [1]
    assert partition_load_body(facts(), loads, "disk", 10, topic=re.compile("x"))["records"] == []
    with pytest.raises(ValueError, match="CPU"):
        partition_load_body(facts(), loads, "cpu", 10)
    assert P.partition_range({"partition": "2-5"}) == (2, 5) and P.partition_range({"partition": "3"}) == (3, 3)
    with pytest.raises(P.ParamError):
        P.partition_range({"partition": "a"})


def test_capacity_file(tmp_path):
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps({"brokerCapacities": [
        {"brokerId": "-1", "capacity": {"DISK": "500", "NW_IN": "10", "NW_OUT": "20", "CPU": "100"}},
        {"brokerId": "2", "capacity": {"DISK": {"/d1": "100", "/d2": "300"}, "NW_IN": "5", "NW_OUT": "5"}}]}))
    caps = read_capacities(path)
    assert caps[-1] == Capacity(500.0, 10.0, 20.0) and caps[2].disk_mb == 400.0
    path.write_text("{}")
    with pytest.raises(CapacityError, match="no brokerCapacities"):
        read_capacities(path)


def test_pause_and_resume_are_reported():
    m = LoadMonitor("unused:1", 1000, 1000, 3)
    assert m.pause("disk swap") and not m.pause("again")
    assert m.state({})["state"] == "PAUSED" and m.state({})["reasonOfLatestPauseOrResume"] == "again"
    assert m.resume("") and m.state({})["state"] == "RUNNING"


def test_the_spark_pipelines_load_record_replaces_the_samples_figures():
    from pylog.common.metrics_format import LOAD_TOPIC, METRICS_TOPIC
    m = LoadMonitor("unused:1", 1000, 10**12, 1)
    now = int(__import__("time").time() * 1000)
    assert m.take(METRICS_TOPIC, sample(0, 0, now, 5 * MB, 100.0)[1]) == 1
    assert m.loads()[("t", 0)].source == METRICS_TOPIC
    record = {"version": 1, "topic": "t", "partition": 0, "size_bytes": 7 * MB, "bytes_in_per_sec": 300.0,
              "bytes_out_per_sec": 10.0, "messages_in_per_sec": 3.0, "samples": 20, "window_ms": 60000,
              "from_ms": now - 60000, "to_ms": now}
    assert m.take(LOAD_TOPIC, json.dumps(record).encode()) == 1
    assert m.take(LOAD_TOPIC, b"not json") == 0
    load = m.loads()[("t", 0)]
    assert (load.source, load.bytes_in, load.size_bytes) == (LOAD_TOPIC, 300.0, 7 * MB)


def test_rates_are_kept_per_window_and_old_windows_dropped_whole():
    records = [sample(0, 0, 500, MB, 100.0), sample(0, 0, 1500, MB, 200.0), sample(0, 0, 2500, MB, 400.0)]
    load = aggregate(records, retained_ms=1500, now_ms=3000, window_ms=1000)[("t", 0)]
    assert load.bytes_in == 300.0  # the window [0, 1000) ended before the span; [1000, 2000) overlaps it
