"""Java's HashMap iteration order, so JSON that Kafka's tools build from HashMaps prints in the same order.

Kafka's LogDirsCommand serialises java.util.HashMap objects with Jackson: the keys come out in
bucket order (hash spread over the table), ties in insertion order. Reproducing that makes our
output byte-identical for the common cases (no treeified bins, which need 8+ collisions).
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

K = TypeVar("K", bound=Hashable)
_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def string_hash(text: str) -> int:
    """java.lang.String.hashCode (over UTF-16 code units)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode."""
    return _int32(31 * (31 + partition) + string_hash(topic))


def map_hash(entries: dict[str, str | None]) -> int:
    """AbstractMap.hashCode of a Map<String, String>: the sum of key.hashCode() ^ value.hashCode() (null: 0)."""
    total = sum(string_hash(k) ^ (string_hash(v) if v is not None else 0) for k, v in entries.items())
    return _int32(total)


def objects_hash(*hashes: int) -> int:
    """java.util.Objects.hash of values with these hash codes (Arrays.hashCode: 31 * h + each)."""
    h = 1
    for value in hashes:
        h = _int32(31 * h + value)
    return h


def _capacity(n: int, initial: int) -> int:
    cap = 1
    while cap < initial:
        cap <<= 1
    while n > cap * _LOAD_FACTOR:
        cap <<= 1
    return cap


def hashmap_order(keys: Iterable[K], hash_of: Callable[[K], int], initial_capacity: int = _DEFAULT_CAPACITY
                  ) -> list[K]:
    """The keys in the order a HashMap filled in this (insertion) order iterates them."""
    keys = list(keys)
    cap = _capacity(len(keys), initial_capacity)

    def bucket(key: K) -> int:
        h = hash_of(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)
    # A resize splits each bin keeping relative order, so the final order is (bucket, insertion).
    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


def ordered_object(items: dict[str, object]) -> dict[str, object]:
    """A dict whose key order is the HashMap<String, Object> order of these entries."""
    return {k: items[k] for k in hashmap_order(items, string_hash)}
