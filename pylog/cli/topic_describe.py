"""--describe's selection rules (TopicCommand's DescribeOptions), shared by the ZooKeeper and broker paths.

Each path reads the cluster into TopicState values; this module decides which topic and partition
lines are shown. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Iterable

from pylog.cli.results import PartitionLine, TopicLine, TopicsDescribed
from pylog.cli.topic_args import ReportFlags


@dataclass
class TopicState:
    """What a path read about one topic: every partition, its non-default configs (sorted), min ISR."""

    name: str
    topic_id: str | None
    partitions: list[PartitionLine]
    configs: dict[str, str]
    min_isr: int | None
    marked_for_deletion: bool = False


def replication_factor(p: PartitionLine) -> int:
    """TopicCommand.getReplicationFactor: during a reassignment, the replicas minus those being added."""
    changing = set(p.adding_replicas) | set(p.removing_replicas)
    if changing & set(p.replicas):
        return len([r for r in p.replicas if r not in set(p.adding_replicas)])
    return len(p.replicas)


def is_under_replicated(p: PartitionLine) -> bool:
    """Fewer in-sync replicas than the replication factor."""
    return replication_factor(p) - len(p.isr) > 0


def is_unavailable(p: PartitionLine, live_brokers: AbstractSet[int]) -> bool:
    """No leader, or a leader that is not a live broker."""
    return p.leader is None or p.leader not in live_brokers


def is_under_min_isr(p: PartitionLine, min_isr: int | None) -> bool:
    """No leader, or fewer in-sync replicas than min.insync.replicas."""
    return p.leader is None or (min_isr is not None and len(p.isr) < min_isr)


def is_at_min_isr(p: PartitionLine, min_isr: int | None) -> bool:
    """Exactly min.insync.replicas in-sync replicas."""
    return min_isr is not None and len(p.isr) == min_isr


def _shown(p: PartitionLine, t: TopicState, flags: ReportFlags, live: AbstractSet[int]) -> bool:
    return (flags.describe_configs
            or (flags.under_replicated and is_under_replicated(p))
            or (flags.unavailable and is_unavailable(p, live))
            or (flags.under_min_isr and is_under_min_isr(p, t.min_isr))
            or (flags.at_min_isr and is_at_min_isr(p, t.min_isr)))


def describe(states: Iterable[TopicState], flags: ReportFlags, live_brokers: AbstractSet[int],
             via: str) -> TopicsDescribed:
    """The lines --describe prints for these topics, in order."""
    topics: list[TopicLine] = []
    partitions: list[PartitionLine] = []
    for t in states:
        parts = sorted(t.partitions, key=lambda p: p.partition)
        if flags.describe_configs and parts and (not flags.topics_with_overrides or t.configs):
            topics.append(TopicLine(t.name, t.topic_id, len(parts), replication_factor(parts[0]), dict(t.configs),
                                    t.marked_for_deletion))
        if flags.describe_partitions:
            partitions += [p for p in parts if _shown(p, t, flags, live_brokers)]
    return TopicsDescribed(topics, partitions, via)
