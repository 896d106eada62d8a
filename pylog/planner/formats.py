"""Planner file formats: cluster snapshot JSON, Kafka's reassignment JSON and topics-to-move JSON.

Kafka's texts and layouts follow kafka-formats.md section 2.3 (ReassignPartitionsCommand 3.3).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pylog.planner.model import Broker, Partition, PlanError, Snapshot, TopicPartition

__all__ = [
    "SnapshotError", "ReassignmentFormatError",
    "snapshot_from_dict", "snapshot_to_dict", "load_snapshot", "dump_snapshot",
    "format_reassignment_json", "parse_topics_to_move_json", "parse_reassignment_json", "parse_broker_list",
]


class SnapshotError(PlanError):
    """The cluster snapshot JSON is malformed; the message names the offending entry."""


class ReassignmentFormatError(PlanError):
    """A Kafka admin JSON input is invalid; the message is Kafka's text."""


_PARTITION_KEYS = ("topic", "partition", "replicas", "size_bytes", "bytes_in_per_sec", "bytes_out_per_sec",
                   "messages_in_per_sec")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and value >= 0


def _broker(i: int, raw: Any) -> Broker:
    where = f"brokers[{i}]"
    if not isinstance(raw, dict):
        raise SnapshotError(f"{where}: expected an object, got {type(raw).__name__}")
    bid = raw.get("id")
    if not _is_int(bid) or bid < 0:
        raise SnapshotError(f"{where}: \"id\" must be a non-negative integer, got {bid!r}")
    rack = raw.get("rack")
    if rack is not None and (not isinstance(rack, str) or not rack):
        raise SnapshotError(f"{where} (broker {bid}): \"rack\" must be a non-empty string, got {rack!r}")
    capacity = raw.get("capacity")
    if capacity is not None and (not _is_number(capacity) or capacity <= 0):
        raise SnapshotError(f"{where} (broker {bid}): \"capacity\" must be a positive number, got {capacity!r}")
    return Broker(bid, rack, capacity)


def _partition(i: int, raw: Any) -> Partition:
    where = f"partitions[{i}]"
    if not isinstance(raw, dict):
        raise SnapshotError(f"{where}: expected an object, got {type(raw).__name__}")
    topic, part = raw.get("topic"), raw.get("partition")
    if not isinstance(topic, str) or not topic:
        raise SnapshotError(f"{where}: \"topic\" must be a non-empty string, got {topic!r}")
    if not _is_int(part) or part < 0:
        raise SnapshotError(f"{where} (topic {topic!r}): \"partition\" must be a non-negative integer, got {part!r}")
    where = f"{where} ({topic}-{part})"
    replicas = raw.get("replicas")
    if (not isinstance(replicas, list) or not replicas
            or not all(_is_int(r) and r >= 0 for r in replicas)):
        raise SnapshotError(f"{where}: \"replicas\" must be a non-empty list of broker ids, got {replicas!r}")
    if len(set(replicas)) != len(replicas):
        raise SnapshotError(f"{where}: \"replicas\" lists a broker twice: {replicas}")
    size = raw.get("size_bytes")
    if size is not None and (not _is_int(size) or size < 0):
        raise SnapshotError(f"{where}: \"size_bytes\" must be a non-negative integer, got {size!r}")
    rates = []
    for key in _PARTITION_KEYS[4:]:
        value = raw.get(key)
        if value is not None and not _is_number(value):
            raise SnapshotError(f"{where}: \"{key}\" must be a non-negative number, got {value!r}")
        rates.append(value)
    return Partition(topic, part, list(replicas), size, *rates)


def snapshot_from_dict(data: Any) -> Snapshot:
    """Validate and build a Snapshot from parsed JSON; keys beyond the documented ones are allowed."""
    if not isinstance(data, dict):
        raise SnapshotError(f"cluster snapshot: expected a JSON object, got {type(data).__name__}")
    version = data.get("version", 1)
    if version != 1:
        raise SnapshotError(f"cluster snapshot: unsupported \"version\" {version!r} (this planner reads version 1)")
    for key in ("brokers", "partitions"):
        if not isinstance(data.get(key), list):
            raise SnapshotError(f"cluster snapshot: \"{key}\" must be a list")
    brokers = [_broker(i, raw) for i, raw in enumerate(data["brokers"])]
    seen: dict[int, int] = {}
    for i, broker in enumerate(brokers):
        if broker.id in seen:
            raise SnapshotError(f"brokers[{i}]: broker id {broker.id} already listed at brokers[{seen[broker.id]}]")
        seen[broker.id] = i
    partitions = [_partition(i, raw) for i, raw in enumerate(data["partitions"])]
    where: dict[TopicPartition, int] = {}
    for i, p in enumerate(partitions):
        if p.tp in where:
            raise SnapshotError(f"partitions[{i}]: {p.topic}-{p.partition} already listed at partitions[{where[p.tp]}]")
        where[p.tp] = i
    extra = {k: v for k, v in data.items() if k not in ("version", "brokers", "partitions")}
    return Snapshot(brokers, partitions, 1, extra)


def snapshot_to_dict(snapshot: Snapshot) -> dict[str, Any]:
    """The JSON-ready form of a snapshot (optional fields only when set)."""
    brokers = []
    for b in snapshot.brokers:
        entry: dict[str, Any] = {"id": b.id}
        if b.rack is not None:
            entry["rack"] = b.rack
        if b.capacity is not None:
            entry["capacity"] = b.capacity
        brokers.append(entry)
    partitions = []
    for p in snapshot.partitions:
        entry = {"topic": p.topic, "partition": p.partition, "replicas": list(p.replicas)}
        for key in _PARTITION_KEYS[3:]:
            value = getattr(p, key)
            if value is not None:
                entry[key] = value
        partitions.append(entry)
    return {"version": 1, **snapshot.extra, "brokers": brokers, "partitions": partitions}


def load_snapshot(path: str) -> Snapshot:
    """Read and validate a cluster snapshot file."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"cluster snapshot {path}: not valid JSON: {exc}") from None
    return snapshot_from_dict(data)


def dump_snapshot(snapshot: Snapshot, path: str) -> None:
    """Write a snapshot compactly (one line; these files get large)."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(snapshot_to_dict(snapshot), fh, separators=(",", ":"))
        fh.write("\n")


def format_reassignment_json(assignment: Mapping[TopicPartition, Sequence[int]]) -> str:
    """Kafka's formatAsReassignmentJson: compact, sorted by (topic, partition), log_dirs all "any"."""
    parts = []
    for topic, partition in sorted(assignment):
        replicas = list(assignment[(topic, partition)])
        parts.append({"topic": topic, "partition": partition, "replicas": replicas,
                      "log_dirs": ["any"] * len(replicas)})
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"))


def _duplicates(items: Iterable[Any]) -> list[Any]:
    seen: set[Any] = set()
    dups: list[Any] = []
    for item in items:
        if item in seen and item not in dups:
            dups.append(item)
        seen.add(item)
    return dups


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ReassignmentFormatError("The input string is not a valid JSON") from None


def _version(data: Any) -> int:
    if not isinstance(data, dict):
        raise ReassignmentFormatError("The input string is not a valid JSON")
    version = data.get("version", 1)
    if version != 1:
        raise ReassignmentFormatError(f"Not supported version field value {version}")
    return version


def parse_topics_to_move_json(text: str) -> list[str]:
    """Kafka's parseTopicsData plus the duplicate check of parseGenerateAssignmentArgs."""
    data = _parse_json(text)
    _version(data)
    topics = []
    for entry in data.get("topics", []) or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str):
            raise ReassignmentFormatError(f"Invalid topics-to-move entry: {json.dumps(entry)}")
        topics.append(entry["topic"])
    dups = _duplicates(topics)
    if dups:
        raise ReassignmentFormatError(f"List of topics to reassign contains duplicate entries: {','.join(dups)}")
    return topics


def parse_broker_list(text: str) -> list[int]:
    """--broker-list "0,1,2" as Kafka parses it, with its duplicate-entry message."""
    try:
        brokers = [int(x) for x in text.split(",")]
    except ValueError:
        raise ReassignmentFormatError(f"Invalid broker list: {text}") from None
    dups = _duplicates(brokers)
    if dups:
        raise ReassignmentFormatError(f"Broker list contains duplicate entries: {','.join(map(str, dups))}")
    return brokers


def parse_reassignment_json(text: str) -> list[tuple[TopicPartition, list[int], list[str]]]:
    """Kafka's parsePartitionReassignmentData: entries in file order (no de-duplication), log_dirs defaulted."""
    data = _parse_json(text)
    _version(data)
    result = []
    for entry in data.get("partitions", []) or []:
        try:
            topic, partition, replicas = entry["topic"], entry["partition"], entry["replicas"]
        except (KeyError, TypeError):
            raise ReassignmentFormatError(f"Invalid reassignment entry: {json.dumps(entry)}") from None
        if not (isinstance(topic, str) and _is_int(partition) and isinstance(replicas, list)
                and all(_is_int(r) for r in replicas)):
            raise ReassignmentFormatError(f"Invalid reassignment entry: {json.dumps(entry)}")
        log_dirs = entry.get("log_dirs", ["any"] * len(replicas))
        if len(log_dirs) != len(replicas):
            raise ReassignmentFormatError(
                f"Size of replicas list {_scala_seq(replicas)} is different from size of log dirs list "
                f"{_scala_seq(log_dirs)} for partition {topic}-{partition}")
        result.append(((topic, partition), list(replicas), list(log_dirs)))
    return result


def _scala_seq(items: Sequence[Any]) -> str:
    # Scala prints a Seq as Vector(1, 2) / List(a, b); Kafka's message shows it that way.
    return "Vector(" + ", ".join(str(x) for x in items) + ")"
