"""Topic-level log configuration (segment.bytes, retention.ms, ...) with Kafka's defaults.

Parsing, validation and defaults come from the topic key registry in pylog.common.topic_keys, so
the log reads exactly what CreateTopics/kafka-configs accept; this is just the typed view.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from pylog.common.topic_keys import TOPIC_CONFIGS

LONG_MAX = 9223372036854775807


def _default(key: str) -> Any:
    value = TOPIC_CONFIGS[key].default
    return tuple(value) if isinstance(value, list) else value


def _attr(key: str) -> str:
    return key.replace(".", "_")


@dataclass(frozen=True)
class LogConfig:
    """The topic configs the log (and the broker's partition logic) reads; Kafka's defaults."""

    segment_bytes: int = _default("segment.bytes")
    segment_ms: int = _default("segment.ms")
    segment_jitter_ms: int = _default("segment.jitter.ms")
    segment_index_bytes: int = _default("segment.index.bytes")
    index_interval_bytes: int = _default("index.interval.bytes")
    retention_ms: int = _default("retention.ms")
    retention_bytes: int = _default("retention.bytes")
    flush_messages: int = _default("flush.messages")
    flush_ms: int = _default("flush.ms")
    file_delete_delay_ms: int = _default("file.delete.delay.ms")
    max_message_bytes: int = _default("max.message.bytes")
    message_timestamp_type: str = _default("message.timestamp.type")
    message_timestamp_difference_max_ms: int = _default("message.timestamp.difference.max.ms")
    min_insync_replicas: int = _default("min.insync.replicas")
    unclean_leader_election_enable: bool = _default("unclean.leader.election.enable")
    cleanup_policy: tuple[str, ...] = _default("cleanup.policy")
    delete_retention_ms: int = _default("delete.retention.ms")
    min_compaction_lag_ms: int = _default("min.compaction.lag.ms")
    max_compaction_lag_ms: int = _default("max.compaction.lag.ms")
    min_cleanable_dirty_ratio: float = _default("min.cleanable.dirty.ratio")
    compression_type: str = _default("compression.type")
    preallocate: bool = _default("preallocate")
    originals: Mapping[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def from_props(cls, props: Mapping[str, str], base: "LogConfig | None" = None) -> "LogConfig":
        """Build from topic-level keys (strings) on top of `base` (default: Kafka's defaults).

        Keys this class has no field for are kept in `originals` only; a malformed value raises
        pylog.common.configdef.ConfigError ("Invalid value X for configuration KEY: reason").
        """
        names = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        if base is not None:
            values = {n: getattr(base, n) for n in names if n != "originals"}
        for key, raw in props.items():
            attr = _attr(key)
            if attr in names and key in TOPIC_CONFIGS:
                value = TOPIC_CONFIGS[key].parse(raw)
                values[attr] = tuple(value) if isinstance(value, list) else value
        merged = dict(base.originals) if base is not None else {}
        merged.update(props)
        return cls(**values, originals=merged)

    @property
    def log_append_time(self) -> bool:
        """Whether the broker stamps batches with its own clock (message.timestamp.type)."""
        return self.message_timestamp_type == "LogAppendTime"

    @property
    def compact(self) -> bool:
        """Whether the log cleaner compacts this log (cleanup.policy holds `compact`)."""
        return "compact" in self.cleanup_policy

    @property
    def max_index_entries(self) -> int:
        """Offset index capacity implied by segment.index.bytes (8-byte entries)."""
        return self.segment_index_bytes // 8

    @property
    def max_time_index_entries(self) -> int:
        """Time index capacity implied by segment.index.bytes (12-byte entries)."""
        return self.segment_index_bytes // 12
