"""The load pipeline: samples in `__pylog_metrics`, `scripts/spark-load` keeps `__pylog_partition_load`, and the
planner (`scripts/spark-plan`, `--generate --spark`) plans with it instead of re-aggregating the samples."""
from __future__ import annotations

import json
import time
from collections import defaultdict

import pytest

from pylog.common.metrics_format import LOAD_TOPIC, METRICS_TOPIC, MetricSample, encode_sample
from pylog.planner.formats import dump_snapshot
from pylog.planner.model import Broker, Partition, Snapshot
from support.clients import create_topic
from support.spark import consume_all

pytestmark = [pytest.mark.slow, pytest.mark.integration]

REPLICAS = {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 1]}  # the planned topic "orders" on brokers 0..2


def _samples(start_ms: int, n: int, scale: int) -> list[MetricSample]:
    """n samples a second apart per partition: the leader's (rates rising) and a lagging follower's."""
    out = []
    for p, (leader, follower) in REPLICAS.items():
        for i in range(n):
            ts = start_ms + i * 1000
            size = scale * 1000 * (p + 1) + i
            out.append(MetricSample(leader, "orders", p, ts, size, float(scale * (10 * i + p)), float(scale * 5 * i),
                                    float(i), True))
            out.append(MetricSample(follower, "orders", p, ts, size - 7, 0.0, 0.0, 0.0, False))
    return out


def _produce_samples(bootstrap: str, samples: list[MetricSample]) -> None:
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap})
    for s in samples:
        key, value = encode_sample(s)
        producer.produce(METRICS_TOPIC, key=key, value=value, partition=0, timestamp=s.timestamp_ms)
    assert producer.flush(30) == 0


def _expected_first(p: int) -> dict:
    """Hand-checked: 20 leader samples, bytes in 10*i + p; p95 is the 19th smallest, 180 + p."""
    return {"size_bytes": 1000 * (p + 1) + 19, "bytes_in_per_sec": float(180 + p), "samples": 20}


def _load_records(bootstrap: str, n: int) -> dict[str, list[dict]]:
    by_key = defaultdict(list)
    for m in consume_all(bootstrap, LOAD_TOPIC, n):
        by_key[m.key().decode()].append(json.loads(m.value()))
    return by_key


def _spark_plan(tmp_path, bootstrap: str, name: str) -> dict:
    from pylog.spark.cli import main as spark_plan
    snap = Snapshot([Broker(b, None) for b in range(3)], [Partition("orders", p, r) for p, r in REPLICAS.items()])
    dump_snapshot(snap, str(tmp_path / "snap.json"))
    report = tmp_path / f"{name}.json"
    assert spark_plan(["--cluster-snapshot", str(tmp_path / "snap.json"), "--broker-list", "0,1,2,3",
                       "--metrics-bootstrap", bootstrap, "--spark-master", "local[2]",
                       "--output-plan", str(tmp_path / f"{name}-plan.json"), "--output-report", str(report)]) == 0
    return json.loads(report.read_text())


@pytest.fixture
def no_session_left():
    """Stop the SparkSession the tools in this process left active (spark-plan keeps its own open)."""
    yield
    from pyspark.sql import SparkSession
    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()


def test_samples_to_load_topic_to_plan(cluster_factory, tmp_path, no_session_left):
    from pylog.spark.load_cli import main as spark_load
    c = cluster_factory(1, overrides={"metrics.sample.interval.ms": "0"})  # only this test's samples
    create_topic(c.bootstrap, METRICS_TOPIC)
    start = int(time.time() * 1000) - 60_000
    _produce_samples(c.bootstrap, _samples(start, 20, 1))

    # No load topic yet: the planner aggregates the samples itself, and says so.
    fallback = _spark_plan(tmp_path, c.bootstrap, "from-samples")
    assert fallback["load"]["source"] == f"{METRICS_TOPIC} samples" and fallback["load"]["partitions"] == 4

    ckpt = str(tmp_path / "ckpt")
    args = ["--bootstrap-server", c.bootstrap, "--checkpoint-location", ckpt, "--once", "--window-ms", "600000",
            "--spark-master", "local[2]", "--timeout-s", "300"]
    assert spark_load(args) == 0
    first = _load_records(c.bootstrap, 4)
    assert sorted(first) == [f"orders-{p}" for p in REPLICAS]
    for p in REPLICAS:
        (record,) = first[f"orders-{p}"]  # one batch, written once
        assert {k: record[k] for k in ("size_bytes", "bytes_in_per_sec", "samples")} == _expected_first(p)
        assert (record["from_ms"], record["to_ms"], record["window_ms"]) == (start, start + 19_000, 600_000)

    # Newer, larger samples: the next run adds one record per partition over the window that now holds 30.
    _produce_samples(c.bootstrap, _samples(start + 20_000, 10, 3))
    assert spark_load(args) == 0
    second = _load_records(c.bootstrap, 8)
    for p in REPLICAS:
        assert len(second[f"orders-{p}"]) == 2  # the first batch was not written again
        newest = second[f"orders-{p}"][-1]
        assert newest["size_bytes"] == 3000 * (p + 1) + 9 and newest["samples"] == 30
        rates = sorted([float(10 * i + p) for i in range(20)] + [float(3 * (10 * i + p)) for i in range(10)])
        assert newest["bytes_in_per_sec"] == rates[28]  # p95 of 30: the 29th smallest

    report = _spark_plan(tmp_path, c.bootstrap, "from-load")
    assert report["load"]["source"] == LOAD_TOPIC and report["load"]["partitions"] == 4
    plan = json.loads((tmp_path / "from-load-plan.json").read_text())
    sizes = {p: 3000 * (p + 1) + 9 for p in REPLICAS}
    moved = sum(sizes[e["partition"]] * len(set(e["replicas"]) - set(REPLICAS[e["partition"]]))
                for e in plan["partitions"])
    assert report["replicas_moved"] > 0 and report["bytes_moved"] == moved
    rates_in = {p: sorted([float(10 * i + p) for i in range(20)] + [float(3 * (10 * i + p)) for i in range(10)])[28]
                for p in REPLICAS}
    by_broker = {b["id"]: b for b in report["load"]["brokers"]}
    for broker in range(3):
        before = sum(rates_in[p] for p, reps in REPLICAS.items() if broker in reps)
        assert by_broker[broker]["bytes_in_per_sec"][0] == pytest.approx(before)
    after = {e["partition"]: e["replicas"] for e in plan["partitions"]}
    assert by_broker[3]["bytes_in_per_sec"][1] == pytest.approx(sum(rates_in[p] for p, r in after.items() if 3 in r))

    # The reassign tool's --generate --spark on the live cluster reads the same load.
    from click.testing import CliRunner

    from pylog.cli.reassign import reassign_command
    create_topic(c.bootstrap, "orders", partitions=4)
    (tmp_path / "topics.json").write_text(json.dumps({"topics": [{"topic": "orders"}], "version": 1}))
    r = CliRunner().invoke(reassign_command, ["--bootstrap-server", c.bootstrap, "--generate", "--spark",
                                              "--spark-master", "local[2]", "--topics-to-move-json-file",
                                              str(tmp_path / "topics.json"), "--broker-list", "0", "--output", "json"])
    assert r.exit_code == 0, r.output
    tool = json.loads(r.stdout)["report"]
    assert tool["load"]["source"] == LOAD_TOPIC and tool["load"]["partitions"] == 4
    assert tool["brokers"][0]["bytes_before"] == sum(sizes.values())
    assert tool["load"]["brokers"][0]["bytes_in_per_sec"][0] == pytest.approx(sum(rates_in.values()))
