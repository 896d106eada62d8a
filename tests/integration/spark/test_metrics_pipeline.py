"""The metrics pipeline end to end: brokers publish load samples, Spark reads them with the pylog source."""

from __future__ import annotations

import pytest

from pylog.common.metrics_format import METRICS_TOPIC, decode_sample
from support.clients import create_topic, kcat, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def _samples(bootstrap: str) -> list:
    out = kcat(bootstrap, "-C", "-t", METRICS_TOPIC, "-o", "beginning", "-e", "-q", "-f", "%s\n").stdout
    return [decode_sample(line.encode()) for line in out.splitlines() if line.strip()]


def test_produced_load_shows_up_in_samples_and_in_the_spark_aggregate(cluster_factory):
    c = cluster_factory(1, overrides={"metrics.sample.interval.ms": "500"})
    create_topic(c.bootstrap, "load")
    payload = "".join("x" * 1000 + "\n" for _ in range(300))  # ~300 KB
    kcat(c.bootstrap, "-P", "-t", "load", "-p", "0", input=payload)
    samples = wait_for(lambda: [s for s in _samples(c.bootstrap)
                                if s.topic == "load" and s.size_bytes >= 300_000], 60, "samples of the load")
    assert all(s.broker_id == 0 and s.is_leader for s in samples)
    busy = wait_for(lambda: [s for s in _samples(c.bootstrap) if s.topic == "load" and s.bytes_in_per_sec > 0],
                    30, "a sample with a produce rate")
    assert busy[0].messages_in_per_sec > 0

    from pylog.spark.job import spark_session
    from pylog.spark.metrics import aggregate_load, read_samples

    spark = spark_session("local[2]")
    try:
        load = {(r["topic"], r["partition"]): r for r in aggregate_load(read_samples(spark, c.bootstrap)).collect()}
    finally:
        spark.stop()
    row = load[("load", 0)]
    assert row["size_bytes"] >= 300_000
    assert row["samples"] >= 1
