"""Controller events. Watch callbacks (kazoo threads) and RPC handlers only post these."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable


@dataclass(frozen=True)
class Elect:
    """Try to become controller (startup, /controller changed or vanished, a new ZooKeeper session)."""


@dataclass(frozen=True)
class BrokerChange:
    """/brokers/ids children changed."""


@dataclass(frozen=True)
class TopicChange:
    """/brokers/topics children changed."""


@dataclass(frozen=True)
class PartitionModifications:
    """A topic's assignment znode changed (e.g. partitions were added)."""

    topic: str


@dataclass(frozen=True)
class TopicDeletion:
    """/admin/delete_topics children changed."""


@dataclass(frozen=True)
class IsrChange:
    """A leader changed an ISR (/isr_change_notification children)."""


@dataclass(frozen=True)
class ConfigChange:
    """/config/changes children changed (a topic or broker config was altered)."""


@dataclass(frozen=True)
class LogDirEvent:
    """/log_dir_event_notification children changed (a broker's log dir failed)."""


@dataclass(frozen=True)
class OfflineReplicas:
    """A broker answered LeaderAndIsr with KAFKA_STORAGE_ERROR for these partitions."""

    broker_id: int
    tps: tuple = ()


@dataclass(frozen=True)
class DeletionConfirmed:
    """A broker answered a topic deletion's StopReplica."""

    topic: str
    broker_id: int
    resp: Any = field(compare=False)


@dataclass(frozen=True)
class SessionLost:
    """The ZooKeeper session expired: our /controller znode is gone, stop acting at once."""


@dataclass(frozen=True)
class Call:
    """Run `func()` as the controller's owner task and hand its result to `future`."""

    func: Callable[[], Awaitable[Any]]
    future: asyncio.Future = field(compare=False)


@dataclass(frozen=True)
class Shutdown:
    """Stop processing."""
