"""TOPIC_CONFIGS (Kafka's LogConfig keys) and their broker-level synonyms (LogConfig.AllTopicConfigSynonyms).

A topic key without an override takes its value from the first of its broker synonyms that is set
(converted, e.g. hours to ms), else from the defaults - exactly how Kafka's extractLogConfigMap and
DescribeConfigs resolve them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pylog.common.broker_keys import BROKER_CONFIGS, COMPRESSION_TYPES
from pylog.common.configdef import (
    ConfigError, ConfigKey, Importance, LambdaValidator, Type, ValidList, ValidString, at_least, between, define,
)
from pylog.common.versions import METADATA_VERSION_VALIDATOR

__all__ = ["TOPIC_CONFIGS", "TOPIC_SYNONYMS", "Synonym"]

HOUR_MS = 3600 * 1000
MINUTE_MS = 60 * 1000


class Synonym(NamedTuple):
    """A broker key standing in for a topic key; its value is multiplied by `factor` (unit conversion)."""

    name: str
    factor: int = 1


def _throttled_replicas(name: str, value: Any) -> None:
    """ThrottledReplicaListValidator: "*" or partition:broker pairs."""
    items = [str(v).strip() for v in value]
    if "".join(items).strip() == "*":
        return
    for item in items:
        left, sep, right = item.partition(":")
        if item and not (sep and left.isdigit() and right.isdigit() and left.isascii() and right.isascii()):
            raise ConfigError.invalid(name, value, f"{name} must be the literal '*' or a list of replicas in the "
                                      "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


_THROTTLED = LambdaValidator(_throttled_replicas, "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _b(name: str) -> Any:
    return BROKER_CONFIGS[name].default


M = Importance.MEDIUM
_T: list[tuple[ConfigKey, tuple[Synonym, ...]]] = [
    (ConfigKey("segment.bytes", Type.INT, _b("log.segment.bytes"), at_least(14), "Segment file size limit; a write "
               "that would exceed it rolls a new segment.", M), (Synonym("log.segment.bytes"),)),
    (ConfigKey("segment.ms", Type.LONG, _b("log.roll.hours") * HOUR_MS, at_least(1), "Roll a new segment when the "
               "active one is this old (ms), so retention can delete old data even at low traffic.", M),
     (Synonym("log.roll.ms"), Synonym("log.roll.hours", HOUR_MS))),
    (ConfigKey("segment.jitter.ms", Type.LONG, _b("log.roll.jitter.hours") * HOUR_MS, at_least(0), "Largest random "
               "amount subtracted from segment.ms so segments do not all roll at once.", M),
     (Synonym("log.roll.jitter.ms"), Synonym("log.roll.jitter.hours", HOUR_MS))),
    (ConfigKey("segment.index.bytes", Type.INT, _b("log.index.size.max.bytes"), at_least(4), "Size of each offset "
               "and time index file; a full index rolls the segment.", M), (Synonym("log.index.size.max.bytes"),)),
    (ConfigKey("flush.messages", Type.LONG, _b("log.flush.interval.messages"), at_least(1), "Fsync after this many "
               "unflushed messages.", M), (Synonym("log.flush.interval.messages"),)),
    (ConfigKey("flush.ms", Type.LONG, _b("log.flush.scheduler.interval.ms"), at_least(0), "Fsync when the oldest "
               "unflushed message is this old (ms).", M),
     (Synonym("log.flush.interval.ms"), Synonym("log.flush.scheduler.interval.ms"))),
    (ConfigKey("retention.bytes", Type.LONG, _b("log.retention.bytes"), None, "Largest size of one partition's log "
               "before old segments are deleted; -1 means no limit.", M), (Synonym("log.retention.bytes"),)),
    (ConfigKey("retention.ms", Type.LONG, _b("log.retention.hours") * HOUR_MS, at_least(-1), "How long to keep a "
               "segment after its newest record (ms); -1 keeps data forever.", M),
     (Synonym("log.retention.ms"), Synonym("log.retention.minutes", MINUTE_MS),
      Synonym("log.retention.hours", HOUR_MS))),
    (ConfigKey("max.message.bytes", Type.INT, _b("message.max.bytes"), at_least(0), "Largest record batch (after "
               "compression) the topic accepts.", M), (Synonym("message.max.bytes"),)),
    (ConfigKey("index.interval.bytes", Type.INT, _b("log.index.interval.bytes"), at_least(0), "Bytes of batches "
               "between two offset index entries.", M), (Synonym("log.index.interval.bytes"),)),
    (ConfigKey("delete.retention.ms", Type.LONG, _b("log.cleaner.delete.retention.ms"), at_least(0), "Tombstone "
               "retention for compacted topics, counted from the first clean that sees the tombstone.", M),
     (Synonym("log.cleaner.delete.retention.ms"),)),
    (ConfigKey("min.compaction.lag.ms", Type.LONG, _b("log.cleaner.min.compaction.lag.ms"), at_least(0), "Minimum "
               "age of a record before it may be compacted.", M),
     (Synonym("log.cleaner.min.compaction.lag.ms"),)),
    (ConfigKey("max.compaction.lag.ms", Type.LONG, _b("log.cleaner.max.compaction.lag.ms"), at_least(1), "Maximum "
               "time a record stays uncompacted, whatever the dirty ratio.", M),
     (Synonym("log.cleaner.max.compaction.lag.ms"),)),
    (ConfigKey("file.delete.delay.ms", Type.LONG, _b("log.segment.delete.delay.ms"), at_least(0), "How long a "
               "segment removed by retention stays on disk before the file is deleted.", M),
     (Synonym("log.segment.delete.delay.ms"),)),
    (ConfigKey("min.cleanable.dirty.ratio", Type.DOUBLE, _b("log.cleaner.min.cleanable.ratio"), between(0, 1),
               "Dirty ratio that triggers compaction.", M),
     (Synonym("log.cleaner.min.cleanable.ratio"),)),
    (ConfigKey("cleanup.policy", Type.LIST, _b("log.cleanup.policy"), ValidList(("compact", "delete")), "`delete` "
               "removes old segments by time and size; `compact` keeps the latest record per key.", M),
     (Synonym("log.cleanup.policy"),)),
    (ConfigKey("unclean.leader.election.enable", Type.BOOLEAN, _b("unclean.leader.election.enable"), None,
               "Whether an out-of-sync replica may become leader when no ISR member is alive (loses data).", M),
     (Synonym("unclean.leader.election.enable"),)),
    (ConfigKey("min.insync.replicas", Type.INT, _b("min.insync.replicas"), at_least(1), "With acks=all, the fewest "
               "in-sync replicas for a produce to succeed.", M), (Synonym("min.insync.replicas"),)),
    (ConfigKey("compression.type", Type.STRING, _b("compression.type"), ValidString(COMPRESSION_TYPES), "Compression "
               "the topic stores batches with; `producer` keeps the producer's.", M), (Synonym("compression.type"),)),
    (ConfigKey("preallocate", Type.BOOLEAN, _b("log.preallocate"), None, "Preallocate new segment files.", M),
     (Synonym("log.preallocate"),)),
    (ConfigKey("message.format.version", Type.STRING, _b("log.message.format.version"), METADATA_VERSION_VALIDATOR,
               "Deprecated; ignored (format v2 is always written).", M, used=False),
     (Synonym("log.message.format.version"),)),
    (ConfigKey("message.timestamp.type", Type.STRING, _b("log.message.timestamp.type"),
               ValidString(("CreateTime", "LogAppendTime")), "CreateTime keeps producer timestamps; LogAppendTime "
               "stamps batches with the broker's clock.", M), (Synonym("log.message.timestamp.type"),)),
    (ConfigKey("message.timestamp.difference.max.ms", Type.LONG, _b("log.message.timestamp.difference.max.ms"),
               at_least(0), "With CreateTime, largest allowed difference between batch timestamp and broker "
               "clock.", M), (Synonym("log.message.timestamp.difference.max.ms"),)),
    (ConfigKey("leader.replication.throttled.replicas", Type.LIST, [], _THROTTLED, "Replicas (partition:broker, or "
               "*) whose replication is throttled on the leader side by leader.replication.throttled.rate.", M), ()),
    (ConfigKey("follower.replication.throttled.replicas", Type.LIST, [], _THROTTLED, "Replicas (partition:broker, "
               "or *) whose replication is throttled on the follower side by follower.replication.throttled.rate.",
               M), ()),
    (ConfigKey("message.downconversion.enable", Type.BOOLEAN, _b("log.message.downconversion.enable"), None,
               "Down-conversion for old consumers (no effect in pylog).", Importance.LOW, used=False),
     (Synonym("log.message.downconversion.enable"),)),
]

TOPIC_CONFIGS: dict[str, ConfigKey] = define([k for k, _ in _T])
# topic key -> broker synonyms in priority order (empty for the throttled-replica lists).
TOPIC_SYNONYMS: dict[str, tuple[Synonym, ...]] = {k.name: syn for k, syn in _T}
del _T
