"""The partition-load sample that brokers publish to `__pylog_metrics` (like Cruise Control's metrics reporter).

Record key: UTF-8 "<topic>-<partition>" (so all samples of a partition land in one metrics partition).
Record value: compact UTF-8 JSON object, keys
  version (1), broker_id, topic, partition, timestamp_ms (sample time), is_leader (bool),
  size_bytes (log size on that broker), bytes_in_per_sec, bytes_out_per_sec, messages_in_per_sec
  (rates over the last metrics.sample.interval.ms; followers report their replication fetch bytes in as 0).
Readers ignore unknown keys, so later versions may add fields.

`__pylog_partition_load` (compacted, written by `scripts/spark-load`) holds the aggregate per partition:
key as above, value a JSON object with version (1), topic, partition, size_bytes (latest, largest replica),
bytes_in_per_sec, bytes_out_per_sec, messages_in_per_sec (p95 of the leader's samples), samples (leader
samples counted), window_ms, and from_ms / to_ms (the oldest and newest sample time of the window).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

__all__ = ["METRICS_TOPIC", "MetricSample", "encode_sample", "decode_sample", "SAMPLE_SPARK_SCHEMA", "LOAD_TOPIC",
           "LOAD_SPARK_SCHEMA"]

METRICS_TOPIC = "__pylog_metrics"
LOAD_TOPIC = "__pylog_partition_load"

# The same fields as a Spark DDL schema, for from_json in the Spark job.
SAMPLE_SPARK_SCHEMA = ("version int, broker_id int, topic string, partition int, timestamp_ms long, "
                       "is_leader boolean, size_bytes long, bytes_in_per_sec double, bytes_out_per_sec double, "
                       "messages_in_per_sec double")
LOAD_SPARK_SCHEMA = ("version int, topic string, partition int, size_bytes long, bytes_in_per_sec double, "
                     "bytes_out_per_sec double, messages_in_per_sec double, samples long, window_ms long, "
                     "from_ms long, to_ms long")


@dataclass(frozen=True, slots=True)
class MetricSample:
    """One broker's load sample of one partition replica."""

    broker_id: int
    topic: str
    partition: int
    timestamp_ms: int
    size_bytes: int
    bytes_in_per_sec: float
    bytes_out_per_sec: float
    messages_in_per_sec: float
    is_leader: bool = True
    version: int = 1


def encode_sample(sample: MetricSample) -> tuple[bytes, bytes]:
    """(key, value) bytes of the record to produce to `__pylog_metrics`."""
    key = f"{sample.topic}-{sample.partition}".encode()
    return key, json.dumps(asdict(sample), separators=(",", ":")).encode()


def decode_sample(value: bytes) -> MetricSample:
    """Parse a record value (unknown keys ignored; raises ValueError on a malformed sample)."""
    data = json.loads(value)
    try:
        return MetricSample(int(data["broker_id"]), str(data["topic"]), int(data["partition"]),
                            int(data["timestamp_ms"]), int(data["size_bytes"]), float(data["bytes_in_per_sec"]),
                            float(data["bytes_out_per_sec"]), float(data["messages_in_per_sec"]),
                            bool(data.get("is_leader", True)), int(data.get("version", 1)))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed metric sample: {exc}") from None
