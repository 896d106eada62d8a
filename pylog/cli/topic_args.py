"""pylog-topics' parsed request (Kafka's CommandTopicPartition) and the parsers behind it.

Pure functions with TopicCommand's rules and messages: --replica-assignment, --config k=v,
--topic as an include-list regex, internal topics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pylog.common.internal_topics import INTERNAL_TOPICS, is_internal
from pylog.cli.common import OperationError
from pylog.common.config import TOPIC_CONFIGS, ConfigError, validate_topic_config

MAX_REPLICATION_FACTOR = 32767  # Short.MaxValue


def _java_int(text: str) -> int:
    """Integer.parseInt, with its NumberFormatException message (what TopicCommand prints)."""
    if not re.fullmatch(r"[+-]?\d+", text):
        raise OperationError(f'For input string: "{text}"')
    value = int(text)
    if not -2**31 <= value < 2**31:
        raise OperationError(f'For input string: "{text}"')
    return value


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """'b1:b2,b3:b4' -> {0: [b1, b2], 1: [b3, b4]} (TopicCommand.parseReplicaAssignment)."""
    out: dict[int, list[int]] = {}
    for i, part in enumerate(text.split(",")):
        brokers = [_java_int(s.strip()) for s in part.split(":")]
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise OperationError("Partition replica lists may not contain duplicate entries: "
                                 f"{','.join(map(str, duplicates))}")
        out[i] = brokers
        if len(brokers) != len(out[0]):
            raise OperationError(f"Partition {i} has different replication factor: {','.join(map(str, brokers))}")
    return out


def parse_topic_configs(entries: Iterable[str]) -> dict[str, str]:
    """--config k=v (repeatable), validated like LogConfig.validate (TopicCommand.parseTopicConfigsToBeAdded)."""
    pairs = [re.split(r"\s*=\s*", e) for e in entries]
    # Java's String.split drops trailing empty strings: "k=" is one field, so it is refused too.
    for p in pairs:
        while p and p[-1] == "":
            p.pop()
    if not all(len(p) == 2 for p in pairs):
        raise OperationError('requirement failed: Invalid topic config: all configs to be added must be in the '
                             'format "key=val".')
    configs = {k.strip(): v.strip() for k, v in pairs}
    validate_topic_config(configs)
    return configs


def parse_configs_to_delete(entries: Iterable[str]) -> list[str]:
    """--delete-config names, checked against the topic config names (LogConfig.validateNames)."""
    names = [e.strip() for e in entries]
    for name in names:
        if name not in TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {name}", key=name)
    return names


def include_list(raw: str) -> re.Pattern[str]:
    """Kafka's IncludeList: ',' means '|', spaces and surrounding quotes are dropped; matched in full."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"""^["']+""", "", regex)
    regex = re.sub(r"""["']+$""", "", regex)
    try:
        return re.compile(regex)
    except re.error:
        raise OperationError(f"{regex} is an invalid regex.") from None


def select_topics(all_topics: Sequence[str], topic: str | None, exclude_internal: bool,
                  internal: Iterable[str] = ()) -> list[str]:
    """TopicCommand.doGetTopics over sorted names; `internal` adds names the cluster reports as internal."""
    hidden = set(internal) | {t for t in all_topics if is_internal(t)} if exclude_internal else set()
    names = sorted(t for t in all_topics if t not in hidden)
    if topic is None:
        return names
    pattern = include_list(topic)
    return [t for t in names if pattern.fullmatch(t)]


def ensure_topic_exists(found: Sequence[str], requested: str | None, require: bool) -> None:
    """TopicCommand.ensureTopicExists."""
    if requested is not None and require and not found:
        raise OperationError(f"Topic '{requested}' does not exist as expected")


@dataclass(frozen=True)
class ReportFlags:
    """The describe filters; at most one is set (checked with the options)."""

    under_replicated: bool = False
    unavailable: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    topics_with_overrides: bool = False

    @property
    def describe_configs(self) -> bool:
        """Topic lines are printed unless a partition report flag is given."""
        return not (self.under_replicated or self.unavailable or self.under_min_isr or self.at_min_isr)

    @property
    def describe_partitions(self) -> bool:
        """Partition lines are printed unless --topics-with-overrides."""
        return not self.topics_with_overrides


@dataclass
class TopicRequest:
    """Everything the topic actions read from the command line, parsed."""

    topic: str | None = None
    topic_id: str | None = None
    partitions: int | None = None
    replication_factor: int | None = None
    replica_assignment: dict[int, list[int]] | None = None
    configs_to_add: dict[str, str] = field(default_factory=dict)
    configs_to_delete: list[str] = field(default_factory=list)
    rack_aware: bool = True
    if_exists: bool = False
    if_not_exists: bool = False
    exclude_internal: bool = False
    report: ReportFlags = field(default_factory=ReportFlags)

    def check_create(self) -> None:
        """TopicCommand.createTopic's range checks (before anything is sent)."""
        rf = self.replication_factor
        if rf is not None and not 1 <= rf <= MAX_REPLICATION_FACTOR:
            raise OperationError(f"The replication factor must be between 1 and {MAX_REPLICATION_FACTOR} inclusive")
        if self.partitions is not None and self.partitions < 1:
            raise OperationError("The partitions must be greater than 0")
