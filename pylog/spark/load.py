"""The load pipeline: `__pylog_metrics` samples become per-partition load in the compacted `__pylog_partition_load`.

A streaming query (`scripts/spark-load`) keeps, per partition, the samples of the last `window_ms` (event time,
ending at the partition's newest sample) in Spark's state store and, each micro-batch, writes the partition's
load over that window with the pylog sink (exactly-once): the same figures as the planner's batch aggregation
(`metrics.aggregate_load`: latest size of the largest replica, p95 of the leader's rates). Records are keyed
`<topic>-<partition>`, so compaction keeps the latest load of each partition. The planner then reads the load
topic (one record per partition) instead of re-aggregating every sample.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from typing import Any

from pylog.common.metrics_format import LOAD_SPARK_SCHEMA, LOAD_TOPIC, METRICS_TOPIC

__all__ = ["SAMPLE_COLUMNS", "p95", "window_load", "start_load_query", "ensure_load_topic", "topic_exists",
           "read_load", "planner_load"]

SAMPLE_COLUMNS = ("broker_id", "timestamp_ms", "is_leader", "size_bytes", "bytes_in_per_sec", "bytes_out_per_sec",
                  "messages_in_per_sec")
_RATES = ("bytes_in_per_sec", "bytes_out_per_sec", "messages_in_per_sec")
_STATE_SCHEMA = "samples string"
_OUT_SCHEMA = "key string, value string"
_TIMEOUT_MS = 30_000


def p95(values: Sequence[float]) -> float | None:
    """The 95th percentile as Spark's percentile_approx gives it: the smallest value with 95% at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered) - 1e-9) - 1)]


def window_load(topic: str, partition: int, samples: Sequence[Sequence[Any]], window_ms: int) -> dict:
    """The load record of one partition from its samples (rows of SAMPLE_COLUMNS) of the window."""
    newest = max(s[1] for s in samples)
    latest: dict[int, tuple[int, int]] = {}  # broker -> (time, size) of its newest sample
    for broker, ts, _, size, *_ in samples:
        if size is not None and (broker not in latest or (ts, size) > latest[broker]):
            latest[broker] = (ts, size)
    leaders = [s for s in samples if s[2] is None or s[2]]
    rates = {name: p95([s[4 + i] for s in leaders if s[4 + i] is not None]) for i, name in enumerate(_RATES)}
    return {"version": 1, "topic": topic, "partition": partition,
            "size_bytes": max((size for _, size in latest.values()), default=None), **rates,
            "samples": len(leaders), "window_ms": window_ms, "from_ms": min(s[1] for s in samples), "to_ms": newest}


def _plain(value: Any) -> Any:
    """numpy scalars (and NaN for a missing value) -> JSON-ready Python values."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and math.isnan(value) else value


def _updater(window_ms: int):
    """The applyInPandasWithState function: merge a batch's samples into the window, emit the partition's load."""
    def update(key: tuple, pdfs: Iterator, state) -> Iterator:
        import pandas as pd
        if state.hasTimedOut:  # no sample for a whole window: the partition is gone or silent; forget it
            state.remove()
            return
        kept = [tuple(s) for s in json.loads(state.get[0])] if state.exists else []
        for pdf in pdfs:
            kept.extend(tuple(_plain(v) for v in row) for row in pdf[list(SAMPLE_COLUMNS)].itertuples(index=False))
        newest = max(s[1] for s in kept)
        # Sorted: the state, and so a replayed batch's output, do not depend on the order rows arrived in.
        kept = sorted(set(s for s in kept if s[1] > newest - window_ms), key=lambda s: (s[1], s[0], repr(s)))
        state.update((json.dumps(kept),))
        state.setTimeoutTimestamp(newest + window_ms)
        topic, partition = key
        load = window_load(topic, int(partition), kept, window_ms)
        yield pd.DataFrame({"key": [f"{topic}-{partition}"], "value": [json.dumps(load, sort_keys=True)]})
    return update


def ensure_load_topic(bootstrap: str, topic: str = LOAD_TOPIC, partitions: int = 1) -> bool:
    """Create the compacted load topic if it is missing; True when this call created it."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError
    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id="pylog-spark-load",
                             request_timeout_ms=_TIMEOUT_MS)
    try:
        if topic in admin.list_topics():
            return False
        brokers = len(admin.describe_cluster()["brokers"])
        try:
            admin.create_topics([NewTopic(topic, partitions, min(3, brokers),
                                          topic_configs={"cleanup.policy": "compact"})], timeout_ms=_TIMEOUT_MS)
        except TopicAlreadyExistsError:
            return False
        return True
    finally:
        admin.close()


def start_load_query(spark, bootstrap: str, checkpoint: str, window_ms: int, trigger: dict,
                     load_topic: str = LOAD_TOPIC, metrics_topic: str = METRICS_TOPIC):
    """Start the streaming query samples -> load topic (exactly-once); returns the StreamingQuery."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    from pylog.spark.datasource import register
    from pylog.spark.metrics import with_parsed_samples
    register(spark)
    records = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", bootstrap)
               .option("subscribe", metrics_topic).option("startingOffsets", "earliest").load())
    samples = (with_parsed_samples(records).where(F.col("timestamp_ms").isNotNull())
               .withColumn("event_time", F.timestamp_millis("timestamp_ms")).withWatermark("event_time", f"{window_ms} milliseconds"))
    loads = samples.groupBy("topic", "partition").applyInPandasWithState(
        _updater(window_ms), _OUT_SCHEMA, _STATE_SCHEMA, "append", GroupStateTimeout.EventTimeTimeout)
    return (loads.writeStream.format("pylog").queryName("pylog-partition-load")
            .option("kafka.bootstrap.servers", bootstrap).option("topic", load_topic)
            .option("checkpointLocation", checkpoint).outputMode("append").trigger(**trigger).start())


def topic_exists(bootstrap: str, topic: str) -> bool:
    """Whether the cluster has `topic` (asked without creating it); PlanError when it cannot be reached."""
    from pylog.client.sync import ClientError, KafkaClient
    from pylog.planner.model import PlanError
    try:
        with KafkaClient(bootstrap, client_id="pylog-spark-load") as client:
            resp = client.refresh_metadata([topic])
    except (ClientError, OSError) as exc:
        raise PlanError(f"cannot read load from the cluster at {bootstrap}: {exc}") from None
    return any(t.name == topic and t.error_code == 0 for t in resp.topics)


def read_load(spark, bootstrap: str, topic: str = LOAD_TOPIC):
    """The newest load record of each partition in the load topic (read_committed), one row per partition."""
    from pyspark.sql import functions as F

    from pylog.spark.datasource import register
    register(spark)
    records = (spark.read.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
               .load())
    parsed = records.select(F.from_json(F.col("value").cast("string"), LOAD_SPARK_SCHEMA).alias("l"), "offset")
    newest = (parsed.where(F.col("l.topic").isNotNull() & F.col("l.partition").isNotNull())
              .groupBy("l.topic", "l.partition").agg(F.max_by("l", F.struct("l.to_ms", "offset")).alias("l")))
    return newest.select("l.*")


def planner_load(spark, bootstrap: str, window_ms: int | None = None) -> tuple[list, str]:
    """Rows of per-partition load for the planner and where they came from.

    The load topic when it exists and has records (and no explicit window was asked for, which only the samples
    can answer), else the samples of the metrics topic aggregated here, else nothing."""
    from pylog.spark.metrics import aggregate_load, read_samples
    if window_ms is None and topic_exists(bootstrap, LOAD_TOPIC):
        rows = read_load(spark, bootstrap).collect()
        if rows:
            return rows, LOAD_TOPIC
    if topic_exists(bootstrap, METRICS_TOPIC):
        return aggregate_load(read_samples(spark, bootstrap), window_ms).collect(), f"{METRICS_TOPIC} samples"
    return [], f"none ({LOAD_TOPIC} and {METRICS_TOPIC} are missing or empty)"
