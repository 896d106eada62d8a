"""Which `__consumer_offsets` partition a group lives on, computed exactly as Kafka does."""

from __future__ import annotations

import functools

OFFSETS_TOPIC = "__consumer_offsets"
_INT_MIN = -(1 << 31)


def java_string_hash(s: str) -> int:
    """Java's String.hashCode: h = 31*h + c over UTF-16 code units, wrapped to a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's Utils.abs: Math.abs, except Integer.MIN_VALUE (whose Math.abs is negative) gives 0."""
    return 0 if n == _INT_MIN else abs(n)


# Every group request asks this, most often for the same few groups: a synchronous committer
# hashed its group id twice per commit.
@functools.lru_cache(maxsize=8192)
def partition_for(group_id: str, num_partitions: int) -> int:
    """GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions."""
    return kafka_abs(java_string_hash(group_id)) % num_partitions
