"""The one place results become output: Kafka's text (default), one JSON document, or rich tables.

Text is byte-for-byte what Kafka's tools print (kafka-formats.md section 2): 3.x's texts for
results that came through a broker, 2.8's for results that came through ZooKeeper. JSON is the
result dataclass itself (same facts, machine-readable). Tables are for people at a terminal.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from collections import defaultdict
from functools import singledispatch
from typing import Any

import click

from pylog.cli.java_order import hashmap_order, map_hash, objects_hash, string_hash
from pylog.cli.results import (ConfigsAltered, ConfigsDescribed, ElectionResult, EntityConfigs, GroupListing,
                               PairAltered, PairConfigs, QuotaEntity, QuotasDescribed,
                               GroupMemberRow, GroupsDeleted, GroupsDescribed, GroupStateRow, OffsetsDeleted,
                               OffsetsReset, PartitionLine, RecordsDeleted, TopicCreated, TopicLine, TopicList,
                               TopicsAltered, TopicsDeleted, TopicsDescribed, ZkAclsMigrated)
from pylog.common.configdef import java_double_str

ZK = "zookeeper"

# Kafka's fixed texts (TopicCommand / ConfigCommand / LeaderElectionCommand).
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")
ALTER_CONFIG_WARNING = ["WARNING: Altering topic configuration from this script has been deprecated and may be "
                        "removed in future releases.",
                        "         Going forward, please use kafka-configs.sh for this functionality"]
ADD_PARTITIONS_WARNING = ("WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                          "ordering of the messages will be affected")


EMITTED = [0]  # results written so far in this process (a failure after one adds no second JSON document)


def emit(result: Any, fmt: str) -> None:
    """Write a result to stdout in the format asked for (warnings: first in text, inside JSON, stderr for tables)."""
    EMITTED[0] += 1
    warnings = list(getattr(result, "warnings", ()) or ())
    if fmt == "json":
        click.echo(json.dumps(to_json(result), sort_keys=False))
    elif fmt == "table":
        for warning in warnings:
            click.secho(warning, err=True, fg="yellow")
        table(result)
    else:
        lines = warnings + text(result)
        if lines:
            click.echo("\n".join(lines))


def to_json(value: Any) -> Any:
    """A result as JSON-ready data: dataclasses as objects, enums by name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    return value


# ---------------------------------------------------------------- Kafka text

@singledispatch
def text(result: Any) -> list[str]:
    """Kafka's lines for a result (each list item is one println), after its warnings."""
    raise TypeError(f"no text rendering for {type(result).__name__}")


@text.register
def _(r: TopicCreated) -> list[str]:
    return [f"Created topic {r.topic}."] if r.created else []


@text.register
def _(r: TopicList) -> list[str]:
    if r.via == ZK:
        return [f"{t.name} - marked for deletion" if t.marked_for_deletion else t.name for t in r.topics]
    # 3.x: println(topics.mkString("\n")) - so an empty cluster prints one empty line.
    return ["\n".join(t.name for t in r.topics)]


@text.register
def _(r: TopicsAltered) -> list[str]:
    if r.via != ZK:
        return []
    lines: list[str] = []
    for topic in r.topics:
        if r.configs_updated:
            lines += ALTER_CONFIG_WARNING + [f"Updated config for topic {topic}."]
        if r.partitions is not None:
            lines += [ADD_PARTITIONS_WARNING, "Adding partitions succeeded!"]
    return lines


@text.register
def _(r: TopicsDeleted) -> list[str]:
    if r.via != ZK:
        return []
    lines: list[str] = []
    for t in r.topics:
        if t.already_marked:
            lines.append(f"Topic {t.name} is already marked for deletion.")
        else:
            lines += [f"Topic {t.name} is marked for deletion.",
                      "Note: This will have no impact if delete.topic.enable is not set to true."]
    return lines


def topic_line(t: TopicLine) -> str:
    """TopicCommand's TopicDescription.printDescription (TAB-separated)."""
    configs = ",".join(f"{k}={v}" for k, v in t.configs.items())
    topic_id = f"\tTopicId: {t.topic_id}" if t.topic_id else ""
    marked = "\tMarkedForDeletion: true" if t.marked_for_deletion else ""
    return (f"Topic: {t.topic}{topic_id}\tPartitionCount: {t.partition_count}\t"
            f"ReplicationFactor: {t.replication_factor}\tConfigs: {configs}{marked}")


def _ids(ids: list[int]) -> str:
    return ",".join(map(str, ids))


def partition_line(p: PartitionLine) -> str:
    """TopicCommand's PartitionDescription.printDescription (TAB-separated, leading TAB)."""
    leader = "none" if p.leader is None else str(p.leader)
    adding = f"\tAdding Replicas: {_ids(p.adding_replicas)}" if p.adding_replicas else ""
    removing = f"\tRemoving Replicas: {_ids(p.removing_replicas)}" if p.removing_replicas else ""
    marked = "\tMarkedForDeletion: true" if p.marked_for_deletion else ""
    return (f"\tTopic: {p.topic}\tPartition: {p.partition}\tLeader: {leader}\tReplicas: {_ids(p.replicas)}\t"
            f"Isr: {_ids(p.isr)}{adding}{removing}{marked}")


@text.register
def _(r: TopicsDescribed) -> list[str]:
    by_topic: dict[str, list[PartitionLine]] = defaultdict(list)
    for p in r.partitions:
        by_topic[p.topic].append(p)
    lines: list[str] = []
    for t in r.topics:
        lines.append(topic_line(t))
        lines += [partition_line(p) for p in by_topic.pop(t.topic, [])]
    # With a report flag there are no topic lines; the partitions keep their order.
    lines += [partition_line(p) for p in r.partitions if p.topic in by_topic]
    return lines


def zk_entity(entity_type: str, name: str) -> str:
    """ConfigCommand's Entity.toString (2.8): topic 'foo', brokers '1', default brokers."""
    type_name = {"topics": "topic", "users": "user-principal", "clients": "client-id"}.get(entity_type, entity_type)
    return f"default {type_name}" if name in ("", "<default>") else f"{type_name} '{name}'"


def zk_config_entity(e: EntityConfigs | ConfigsAltered) -> str:
    """ConfigCommand's ConfigEntity.toString: the entity, then a <user, client-id> pair's client."""
    pair = isinstance(e, (PairConfigs, PairAltered))
    return zk_entity(e.entity_type, e.name) + (f", {zk_entity('clients', e.client_id)}" if pair else "")


@text.register
def _(r: ConfigsDescribed) -> list[str]:
    lines: list[str] = []
    for e in r.entities:
        if r.via == ZK:
            values = ",".join(f"{c.name}={c.value}" for c in e.configs)
            lines.append(f"Configs for {zk_config_entity(e)} are {values}")
            continue
        if e.entity_type == "users":  # ConfigCommand's SCRAM description (3.x)
            values = ", ".join(f"{c.name}={c.value}" for c in e.configs)
            lines.append(f"SCRAM credential configs for user-principal '{e.name}' are {values}")
            continue
        if e.name == "":
            lines.append(f"Default configs for {e.entity_type} in the cluster are:")
        else:
            lines.append(f"{'All' if r.all else 'Dynamic'} configs for {e.entity_type[:-1]} {e.name} are:")
        for c in e.configs:
            synonyms = ", ".join(f"{s.source}:{s.name}={_null(s.value)}" for s in c.synonyms)
            lines.append(f"  {c.name}={_null(c.value)} sensitive={str(c.sensitive).lower()} synonyms={{{synonyms}}}")
    return lines


@text.register
def _(r: QuotasDescribed) -> list[str]:
    """ConfigCommand's describeQuotaConfigs (3.x), then the users' SCRAM credentials."""
    lines = []
    # The admin client hands ConfigCommand HashMaps (DescribeClientQuotasResponse.complete, sized to the
    # response): entities and each entity's keys print in their HashMap order, values as Double.toString.
    for e in hashmap_order(r.entities, _quota_entity_hash, len(r.entities)):
        parts = []
        if e.has_user:
            parts.append("the default user-principal" if e.user is None else f"user-principal '{e.user}'")
        if e.has_client:
            parts.append("the default client-id" if e.client_id is None else f"client-id '{e.client_id}'")
        keys = hashmap_order(e.values, string_hash, len(e.values))
        values = ", ".join(f"{k}={java_double_str(e.values[k])}" for k in keys)
        lines.append(f"Quota configs for {', '.join(parts)} are {values}")
    return lines + (text(r.scram) if r.scram is not None else [])


def _quota_entity_hash(e: QuotaEntity) -> int:
    """ClientQuotaEntity.hashCode: Objects.hash(its Map of entity type to name)."""
    entries = {**({"user": e.user} if e.has_user else {}), **({"client-id": e.client_id} if e.has_client else {})}
    return objects_hash(map_hash(entries))


def _null(value: str | None) -> str:
    return "null" if value is None else value


@text.register
def _(r: ConfigsAltered) -> list[str]:
    if r.via == ZK:
        done = f"Completed updating config for entity: {zk_config_entity(r)}."
    elif r.name:
        done = f"Completed updating config for {r.entity_type[:-1]} {r.name}."
    else:
        done = f"Completed updating default config for {r.entity_type} in the cluster."
    return [done]


@text.register
def _(r: ElectionResult) -> list[str]:
    lines = []
    if r.succeeded:
        lines.append(f"Successfully completed leader election ({r.election_type}) for partitions "
                     f"{', '.join(r.succeeded)}")
    if r.not_needed:
        lines.append(f"Valid replica already elected for partitions {', '.join(r.not_needed)}")
    for f in r.failed:
        lines.append(f"Error completing leader election ({r.election_type}) for partition: {f.partition}: "
                     f"{f.exception}: {f.message}")
    return lines


@text.register
def _(r: ZkAclsMigrated) -> list[str]:
    return []  # Kafka's migrator prints only its warnings (emit puts them first); --output json has the counts


@text.register
def _(r: RecordsDeleted) -> list[str]:
    lines = ["Executing records delete operation", "Records delete operation completed:"]
    for p in r.partitions:
        outcome = f"error: {p.error}" if p.error is not None else f"low_watermark: {p.low_watermark}"
        lines.append(f"partition: {p.partition}\t{outcome}")
    return lines


# ---------------------------------------------------------------- rich tables

def _padded(widths: list[int], values: list[str]) -> str:
    """Kafka's `%-Ns %-Ns ... %s`: every column left-aligned to its width but the last."""
    return " ".join(v.ljust(w) for w, v in zip(widths, values[:-1])) + " " + values[-1]


@text.register
def _(r: GroupListing) -> list[str]:
    if r.states is None:
        return list(r.groups)
    width = max([15] + [len(g) for g in r.groups])
    return [_padded([width], ["GROUP", "STATE"])] + [_padded([width], [g, r.states[g]]) for g in r.groups]


GROUP_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                 "CLIENT-ID"]


def _dash(v: object) -> str:
    return "-" if v is None else str(v)


def _group_note(group: str, state: str) -> None:
    """Kafka's ConsumerGroupCommand.shouldPrintMemberState notes, on stderr."""
    if state == "Empty":
        click.echo(f"\nConsumer group '{group}' has no active members.", err=True)
    elif state in ("PreparingRebalance", "CompletingRebalance"):
        click.echo(f"\nWarning: Consumer group '{group}' is rebalancing.", err=True)


def _widths(rows: list[list[str]], columns: tuple[int, ...], least: int = 15) -> list[int]:
    return [max([least] + [len(row[i]) for row in rows]) for i in columns]


def _offset_lines(rows_in: list) -> list[str]:
    rows = [[x.group, _dash(x.topic), _dash(x.partition), _dash(x.current_offset), _dash(x.log_end_offset),
             _dash(x.lag), _dash(x.consumer_id), _dash(x.host), _dash(x.client_id)] for x in rows_in]
    widths = _widths(rows, (0, 1)) + [10, 15, 15, 15] + _widths(rows, (6, 7))
    return ["", _padded(widths, GROUP_COLUMNS)] + [_padded(widths, row) for row in rows]


def _assignment(partitions: list[tuple[str, int]]) -> str:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for t, p in partitions:
        by_topic[t].append(p)
    return ", ".join(sorted(f"{t}({','.join(map(str, sorted(ps)))})" for t, ps in by_topic.items())) or "-"


def _member_lines(members: list[GroupMemberRow]) -> list[str]:
    wide = any(m.instance_id for m in members)
    verbose = any(m.partitions is not None for m in members)
    rows = [[m.group, m.consumer_id] + ([m.instance_id or ""] if wide else []) + [m.host, m.client_id,
                                                                                 str(m.partition_count)]
            for m in members]
    names = ["GROUP", "CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if wide else []) + ["HOST", "CLIENT-ID", "#PARTITIONS"]
    widths = [max([least] + [len(row[i]) for row in rows]) for i, least in
              enumerate([15, 15] + ([17] if wide else []) + [15, 15, 15])]

    def line(values: list[str], last: str) -> str:  # Kafka's "%-Ns ... %-15s " then the assignment
        return "".join(v.ljust(w) + " " for w, v in zip(widths, values)) + last
    return ["", line(names, "ASSIGNMENT" if verbose else "")] + [
        line(row, _assignment(m.partitions or []) if verbose else "") for row, m in zip(rows, members)]


def _state_lines(st: GroupStateRow) -> list[str]:
    width = max(25, len(st.coordinator))  # Kafka sizes the GROUP column by the coordinator's text
    fmt = [width, 25, 20, 15]
    return ["", _padded(fmt, ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]),
            _padded(fmt, [st.group, st.coordinator, st.assignment_strategy, st.state, str(st.members)])]


@text.register
def _(r: GroupsDescribed) -> list[str]:
    lines: list[str] = []
    states = {st.group: st for st in r.states}
    for g in r.groups:
        if g.state == "Dead":
            continue
        _group_note(g.group, g.state)
        if r.view == "state":
            lines += _state_lines(states[g.group])
        elif r.view == "members":
            lines += _member_lines(r.members.get(g.group, [])) if r.members.get(g.group) else []
        elif g.rows:
            lines += _offset_lines(g.rows)
    return lines


@text.register
def _(r: GroupsDeleted) -> list[str]:
    ok = ", ".join(f"'{g}'" for g in r.deleted)
    if not r.failed:
        return [f"Deletion of requested consumer groups ({ok}) was successful."]
    # Kafka prints "Error: Deletion of some consumer groups failed:" on stderr (our failure line).
    lines = [f"* Group '{g}' could not be deleted due to: {why}" for g, why in r.failed.items()]
    return lines + (["", f"These consumer groups were deleted successfully: {ok}"] if r.deleted else [])


@text.register
def _(r: OffsetsReset) -> list[str]:
    for line in r.log:
        click.echo(line, err=True)
    if r.export:
        return [",".join(map(str, row if r.csv_with_group else row[1:])) for row in r.rows] + [""]
    fmt = [30, 30, 10]
    return (["", _padded(fmt, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET".ljust(15)])] if r.rows else []) + [
        _padded(fmt, [g, t, str(p), str(o).ljust(15)]) for g, t, p, o in r.rows]


@text.register
def _(r: OffsetsDeleted) -> list[str]:
    lines = [] if r.failure else [f"Request succeed for deleting offsets with topic {', '.join(r.topics)} "
                                  f"group {r.group}"]
    fmt = [30, 15]
    return lines + ["", _padded(fmt, ["TOPIC", "PARTITION", "STATUS".ljust(15)])] + [
        _padded(fmt, [t, str(p) if p >= 0 else "Not Provided", status.ljust(15)]) for t, p, status in r.statuses]


@singledispatch
def table(result: Any) -> None:
    """Tables for people; results without a table print their text."""
    lines = text(result)
    if lines:
        click.echo("\n".join(lines))


def make_console() -> Any:
    """A rich Console on stdout (rich is imported on first use)."""
    from rich.console import Console
    return Console(file=sys.stdout, highlight=False)


def make_table(title: str, columns: list[str], rows: list[list[str]]) -> Any:
    """A rich Table with a title, one header per column and the rows as given."""
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    for c in columns:
        t.add_column(c)
    for row in rows:
        t.add_row(*row)
    return t


@table.register
def _(r: TopicList) -> None:
    rows = [[t.name, "yes" if t.marked_for_deletion else ""] for t in r.topics]
    make_console().print(make_table("Topics", ["Topic", "Marked for deletion"], rows))


@table.register
def _(r: GroupsDescribed) -> None:
    title = "Consumer groups (" + ", ".join(f"{g.group}: {g.state}" for g in r.groups) + ")"
    if r.view == "state":
        columns = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        rows = [[s.group, s.coordinator, s.assignment_strategy, s.state, str(s.members)] for s in r.states]
    elif r.view == "members":
        columns = ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]
        rows = [[m.group, m.consumer_id, m.instance_id or "", m.host, m.client_id, str(m.partition_count),
                 _assignment(m.partitions or [])] for ms in r.members.values() for m in ms]
    else:
        columns = GROUP_COLUMNS
        rows = [[_dash(getattr(x, f)) for f in ("group", "topic", "partition", "current_offset", "log_end_offset",
                                                "lag", "consumer_id", "host", "client_id")]
                for g in r.groups for x in g.rows]
    make_console().print(make_table(title, columns, rows))


@table.register
def _(r: GroupListing) -> None:
    rows = [[g, (r.states or {}).get(g, "")] for g in r.groups]
    make_console().print(make_table("Consumer groups", ["GROUP", "STATE"], rows))


@table.register
def _(r: TopicsDescribed) -> None:
    console = make_console()
    if r.topics:
        console.print(make_table("Topics", ["Topic", "TopicId", "Partitions", "RF", "Configs"], [
            [t.topic, t.topic_id or "", str(t.partition_count), str(t.replication_factor),
             "\n".join(f"{k}={v}" for k, v in t.configs.items())] for t in r.topics]))
    if r.partitions:
        console.print(make_table("Partitions", ["Topic", "Partition", "Leader", "Replicas", "Isr", "Adding", "Removing"], [
            [p.topic, str(p.partition), "none" if p.leader is None else str(p.leader), _ids(p.replicas),
             _ids(p.isr), _ids(p.adding_replicas), _ids(p.removing_replicas)] for p in r.partitions]))


def _entity_title(e: EntityConfigs) -> str:
    if e.name in ("", "<default>"):
        return f"Default configs for {e.entity_type}"
    return f"Configs for {e.entity_type[:-1]} {e.name}"


@table.register
def _(r: ConfigsDescribed) -> None:
    console = make_console()
    for e in r.entities:
        console.print(make_table(_entity_title(e), ["Name", "Value", "Source", "Sensitive", "Synonyms"], [
            [c.name, _null(c.value), c.source or "", "yes" if c.sensitive else "",
             "\n".join(f"{s.source}:{s.name}={_null(s.value)}" for s in c.synonyms)] for c in e.configs]))


@table.register
def _(r: ElectionResult) -> None:
    rows = [[p, "elected", ""] for p in r.succeeded] + [[p, "already elected", ""] for p in r.not_needed]
    rows += [[f.partition, "failed", f"{f.exception.rsplit('.', 1)[-1]}: {f.message}"] for f in r.failed]
    make_console().print(make_table(f"Leader election ({r.election_type})", ["Partition", "Result", "Detail"], rows))


@table.register
def _(r: RecordsDeleted) -> None:
    rows = [[p.partition, "" if p.low_watermark is None else str(p.low_watermark), p.error or ""] for p in r.partitions]
    make_console().print(make_table("Records deleted", ["Partition", "Low watermark", "Error"], rows))
