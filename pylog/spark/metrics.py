"""Aggregating `__pylog_metrics` samples into per-partition load, and applying it to a snapshot."""
from __future__ import annotations

from dataclasses import replace

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pylog.common.metrics_format import METRICS_TOPIC, SAMPLE_SPARK_SCHEMA
from pylog.planner.model import Snapshot

__all__ = ["read_samples", "with_parsed_samples", "aggregate_load", "apply_load"]


def with_parsed_samples(records_df: DataFrame) -> DataFrame:
    """Kafka-schema records of `__pylog_metrics` -> one row per sample (malformed values dropped)."""
    parsed = records_df.select(F.from_json(F.col("value").cast("string"), SAMPLE_SPARK_SCHEMA).alias("s"))
    return parsed.select("s.*").where(F.col("topic").isNotNull() & F.col("partition").isNotNull())


def read_samples(spark: SparkSession, bootstrap: str, topic: str = METRICS_TOPIC) -> DataFrame:
    """Read the metrics topic through the `pylog` data source and parse the samples."""
    from pylog.spark.datasource import register
    register(spark)
    records_df = (spark.read.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
                  .load())
    return with_parsed_samples(records_df)


def aggregate_load(samples_df: DataFrame, window_ms: int | None = None, now_ms: int | None = None) -> DataFrame:
    """Per (topic, partition) over the window: latest size (max over replicas), p95 of the leader's rates.

    The window ends at `now_ms` (default: the newest sample) and spans `window_ms` (default: everything).
    """
    df = samples_df
    if window_ms is not None:
        end = F.lit(now_ms) if now_ms is not None else F.max("timestamp_ms").over(_all())
        df = df.withColumn("_end", end).where(F.col("timestamp_ms") > F.col("_end") - F.lit(window_ms))
    # Latest size per replica, then the largest replica (a lagging follower is smaller than its leader).
    latest = (df.groupBy("topic", "partition", "broker_id")
              .agg(F.max_by("size_bytes", "timestamp_ms").alias("size_bytes"))
              .groupBy("topic", "partition").agg(F.max("size_bytes").alias("size_bytes")))
    leaders = df.where(F.coalesce(F.col("is_leader"), F.lit(True)))
    rates = leaders.groupBy("topic", "partition").agg(
        F.percentile_approx("bytes_in_per_sec", 0.95, 10000).alias("bytes_in_per_sec"),
        F.percentile_approx("bytes_out_per_sec", 0.95, 10000).alias("bytes_out_per_sec"),
        F.percentile_approx("messages_in_per_sec", 0.95, 10000).alias("messages_in_per_sec"),
        F.count(F.lit(1)).alias("samples"))
    return latest.join(rates, ["topic", "partition"], "left")


def _all():
    from pyspark.sql import Window
    return Window.partitionBy()


def apply_load(snapshot: Snapshot, load: DataFrame | list) -> Snapshot:
    """A copy of `snapshot` whose partitions carry the aggregated size and rates (others unchanged).

    `load`: a DataFrame or collected rows with topic, partition, size_bytes and the three rates."""
    rows = load.collect() if isinstance(load, DataFrame) else load
    load = {(r["topic"], r["partition"]): r for r in rows}
    parts = []
    for p in snapshot.partitions:
        r = load.get(p.tp)
        if r is None:
            parts.append(p)
            continue
        parts.append(replace(p, size_bytes=r["size_bytes"] if r["size_bytes"] is not None else p.size_bytes,
                             bytes_in_per_sec=r["bytes_in_per_sec"], bytes_out_per_sec=r["bytes_out_per_sec"],
                             messages_in_per_sec=r["messages_in_per_sec"]))
    return Snapshot(list(snapshot.brokers), parts, snapshot.version, dict(snapshot.extra))
