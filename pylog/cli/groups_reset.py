"""pylog-consumer-groups --reset-offsets and --delete-offsets: Kafka 3.x's ConsumerGroupCommand semantics.

Offsets can only be reset while a group is inactive (Empty or Dead). New offsets from --to-offset,
--shift-by and --from-file are clamped to [log start, high watermark] with a warning; a timestamp
without a later record falls back to the latest offset, as Kafka does.
"""

from __future__ import annotations

import csv
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable

import click

from pylog.cli.admin_client import ApiError
from pylog.cli.common import OperationError
from pylog.cli.groups_admin import EARLIEST, LATEST, GroupAdmin
from pylog.cli.results import OffsetsDeleted
from pylog.protocol.errors import ErrorCode

TopicPartition = tuple[str, int]
SCENARIOS = ("to-offset", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current", "shift-by",
             "from-file")
_DURATION = re.compile(r"^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$",
                       re.IGNORECASE)


@dataclass
class ResetSpec:
    """What to reset to (one scenario) and where (--topic args, --all-topics or the file's partitions)."""

    scenario: str
    value: object = None
    topics: tuple[str, ...] = ()
    all_topics: bool = False
    plan: dict[str, dict[TopicPartition, int]] | None = None


@dataclass
class Reset:
    """The new offsets per group, and what to tell the user on the way."""

    offsets: dict[str, dict[TopicPartition, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # stdout lines Kafka prints before the result
    warnings: list[str] = field(default_factory=list)  # stderr lines (Kafka's WARN log lines)


def parse_topic_arg(arg: str) -> tuple[str, list[int] | None]:
    """`topic` or `topic:0,1,2`, with Kafka's messages for a bad one."""
    if ":" not in arg:
        return arg, None
    parts = arg.split(":")
    if len(parts) != 2:
        raise click.UsageError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    out = []
    for p in parts[1].split(","):
        if not p.strip().lstrip("-").isdigit():
            raise click.UsageError(f"Invalid partition '{p}' specified in topic arg '{arg}''")
        out.append(int(p))
    return parts[0], out


def parse_datetime(value: str) -> int:
    """--to-datetime 'YYYY-MM-DDTHH:mm:SS.sss' (local time unless a zone is given) as epoch milliseconds."""
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        raise OperationError(f"Error parsing datetime '{value}': expected the format 'YYYY-MM-DDTHH:mm:SS.sss'") from None


def parse_duration(value: str) -> int:
    """--by-duration in ISO-8601 'PnDTnHnMnS' (java.time.Duration.parse) as milliseconds."""
    m = _DURATION.match(value)
    if not m or value.upper().endswith("T") or value.upper() in ("P", "-P", "+P"):
        raise OperationError(f"Text cannot be parsed to a Duration: {value}")
    sign, d, h, mi, s, frac = m.groups()
    ms = ((int(d or 0) * 24 + int(h or 0)) * 60 + int(mi or 0)) * 60000 + int(s or 0) * 1000
    ms += int((frac or "0").ljust(3, "0")[:3]) * (-1 if (s or "").startswith("-") else 1)
    return -ms if sign == "-" else ms


def read_plan(path: str, groups: list[str]) -> dict[str, dict[TopicPartition, int]]:
    """--from-file: `topic,partition,offset` lines for a single --group, else `group,topic,partition,offset`."""
    try:
        with open(path, newline="") as f:
            rows = [r for r in csv.reader(f) if r]
    except OSError as exc:
        raise OperationError(f"Cannot read the reset plan {path}: {exc.strerror}") from None
    plan: dict[str, dict[TopicPartition, int]] = {}
    for n, row in enumerate(rows, 1):
        try:
            if len(row) == 3 and len(groups) == 1:
                group, (topic, part, off) = groups[0], row
            elif len(row) == 4:
                group, topic, part, off = row
            else:
                raise ValueError("expected topic,partition,offset or group,topic,partition,offset")
            plan.setdefault(group, {})[(topic, int(part))] = int(off)
        except ValueError as exc:
            raise OperationError(f"Invalid reset plan {path}, line {n} ({','.join(row)}): {exc}") from None
    return plan


class OffsetResetter:
    """Prepares (and with --execute commits) the new offsets of inactive groups."""

    def __init__(self, ga: GroupAdmin, spec: ResetSpec, out: Reset) -> None:
        self.ga, self.spec, self.out = ga, spec, out

    def partitions(self, group: str) -> list[TopicPartition]:
        """The scope: --all-topics (the committed partitions), --topic args, or the plan's partitions."""
        if self.spec.scenario == "from-file":
            return sorted((self.spec.plan or {}).get(group, {}))
        if self.spec.all_topics:
            return sorted(self.ga.committed(group))
        explicit = [parse_topic_arg(a) for a in self.spec.topics]
        whole = [t for t, ps in explicit if ps is None]
        out = [(t, p) for t, ps in explicit if ps is not None for p in ps]
        return sorted(set(out + (self.ga.partitions_of(whole) if whole else [])))

    def _offsets(self, tps: list[TopicPartition], timestamp: int, what: str) -> dict[TopicPartition, int]:
        got = self.ga.list_offsets(tps, timestamp)
        for tp in tps:
            if tp not in got:
                raise OperationError(f"Error getting {what} offset of topic partition: {tp[0]}-{tp[1]}")
        return got

    def _clamped(self, requested: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        tps = sorted(requested)
        start, end = self._offsets(tps, EARLIEST, "starting"), self._offsets(tps, LATEST, "ending")
        out = {}
        for tp, off in requested.items():
            name = f"{tp[0]}-{tp[1]}"
            if off > end[tp]:
                self.out.warnings.append(f"WARN New offset ({off}) is higher than latest offset for topic partition "
                                         f"{name}. Value will be set to {end[tp]}")
                off = end[tp]
            elif off < start[tp]:
                self.out.warnings.append(f"WARN New offset ({off}) is lower than earliest offset for topic partition "
                                         f"{name}. Value will be set to {start[tp]}")
                off = start[tp]
            out[tp] = off
        return out

    def _by_time(self, tps: list[TopicPartition], timestamp: int) -> dict[TopicPartition, int]:
        found = self._offsets(tps, timestamp, "timestamp")
        empty = [tp for tp in tps if found[tp] < 0]
        for t, p in empty:
            self.out.notes += ["", f"Warn: Partition {p} from topic {t} is empty. Falling back to latest known offset."]
        return {**found, **(self._offsets(empty, LATEST, "ending") if empty else {})}

    def prepare(self, group: str) -> dict[TopicPartition, int]:
        """The new offsets of one group's partitions under the spec's scenario."""
        tps, spec = self.partitions(group), self.spec
        scenarios: dict[str, Callable[[], dict[TopicPartition, int]]] = {
            "to-offset": lambda: self._clamped({tp: int(spec.value) for tp in tps}),  # type: ignore[arg-type]
            "to-earliest": lambda: self._offsets(tps, EARLIEST, "starting"),
            "to-latest": lambda: self._offsets(tps, LATEST, "ending"),
            "shift-by": lambda: self._clamped(self._shifted(group, tps, int(spec.value))),  # type: ignore[arg-type]
            "to-datetime": lambda: self._by_time(tps, parse_datetime(str(spec.value))),
            "by-duration": lambda: self._by_time(tps, int(time.time() * 1000) - parse_duration(str(spec.value))),
            "from-file": lambda: self._clamped((spec.plan or {}).get(group, {})),
            "to-current": lambda: self._current(group, tps),
        }
        if spec.scenario == "from-file" and group not in (spec.plan or {}):
            self.out.notes += ["", f"Error: No reset plan for group {group} found"]
            return {}
        return scenarios[spec.scenario]() if tps else {}

    def _shifted(self, group: str, tps: list[TopicPartition], by: int) -> dict[TopicPartition, int]:
        committed = self.ga.committed(group)
        for t, p in tps:
            if (t, p) not in committed:
                raise OperationError(f"Cannot shift offset for partition {t}-{p} since there is no current "
                                     "committed offset")
        return {tp: committed[tp] + by for tp in tps}

    def _current(self, group: str, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        committed = self.ga.committed(group)
        missing = [tp for tp in tps if tp not in committed]
        return {**{tp: committed[tp] for tp in tps if tp in committed},
                **(self._offsets(missing, LATEST, "ending") if missing else {})}


def reset_offsets(ga: GroupAdmin, groups: list[str], spec: ResetSpec, execute: bool) -> tuple[Reset, str | None]:
    """Reset each inactive group (refusing active ones with Kafka's message): the result and a failure line."""
    out = Reset()
    refused = []
    resetter = OffsetResetter(ga, spec, out)
    for group in groups:
        state = ga.describe(group).state
        if state not in ("Empty", "Dead"):
            refused.append(f"Assignments can only be reset if the group '{group}' is inactive, but the current "
                           f"state is {state}.")
            continue
        offsets = resetter.prepare(group)
        if execute and offsets:
            ga.commit(group, offsets)
        out.offsets[group] = offsets
    return out, " ".join(refused) or None


_DELETE_FAILURES = {
    ErrorCode.INVALID_GROUP_ID: "'{g}' is not valid.",
    ErrorCode.GROUP_ID_NOT_FOUND: "'{g}' does not exist.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Access to '{g}' is not authorized.",
    ErrorCode.NON_EMPTY_GROUP: "Deleting offsets of a consumer group '{g}' is forbidden if the group is not empty.",
    ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC: "Encounter some partition level error, see the follow-up details:",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Encounter some partition level error, see the follow-up details:",
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "Encounter some partition level error, see the follow-up details:",
}


def delete_offsets(ga: GroupAdmin, group: str, topic_args: list[str]) -> OffsetsDeleted:
    """OffsetDelete for the partitions named (a bare topic means all its partitions)."""
    statuses: dict[TopicPartition, ErrorCode] = {}
    explicit = [parse_topic_arg(a) for a in topic_args]
    partitions = [(t, p) for t, ps in explicit if ps is not None for p in ps]
    for t, ps in explicit:
        if ps is None:
            try:
                partitions += ga.partitions_of([t])
            except ApiError as exc:
                statuses[(t, -1)] = exc.code
    top, per = ga.delete_offsets(group, partitions) if partitions else (ErrorCode.NONE, {})
    for tp in partitions:
        statuses[tp] = top if top != ErrorCode.NONE else per.get(tp, ErrorCode.NONE)
    first_error = next((e for e in statuses.values() if e != ErrorCode.NONE), ErrorCode.NONE)
    top = top if top != ErrorCode.NONE else first_error  # Admin's all() fails with the first partition error
    rows = sorted(((t, p, "Successful" if e == ErrorCode.NONE else f"Error: {e.message}")
                   for (t, p), e in statuses.items()), key=lambda r: r[0] + str(r[1]))
    failure = None
    if top != ErrorCode.NONE:
        failure = _DELETE_FAILURES.get(top, f"Encounter some unknown error: {top.name}").format(g=group)
    return OffsetsDeleted(group, topic_args, rows, failure)
