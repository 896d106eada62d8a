"""An in-memory stand-in for the controller's ZooKeeper and brokers, for unit tests of its parts.

Pure unit tests only: the integration tests run the real controller against real ZooKeeper.
FakeZk keeps znode state the way ControllerZk reads and writes it (conditional updates on the
partition epoch) and records every write in `writes`; FakeCore records what the controller would have
sent to brokers.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Mapping

from pylog.common.types import TP
from pylog.controller.context import ControllerContext, LiveBroker
from pylog.zk import paths
from pylog.zk.codecs import PartitionState, TopicAssignment
from pylog.zk.uuids import random_uuid


class FakeZk:
    """The subset of ControllerZk the controller's parts call, in memory."""

    epoch_zk_version = 1

    def __init__(self) -> None:
        self.topics_: dict[str, TopicAssignment] = {}
        self.states: dict[TP, PartitionState] = {}
        self.marked: set[str] = set()
        self.writes: list[tuple[str, Any]] = []  # (operation, what it wrote), in order

    def topics(self) -> list[str]:
        return sorted(self.topics_)

    def assignments(self, topics: Iterable[str]) -> dict[str, TopicAssignment]:
        return {t: self.topics_[t] for t in topics if t in self.topics_}

    def write_assignment(self, topic: str, ta: TopicAssignment) -> None:
        self.writes.append(("write_assignment", topic))
        self.topics_[topic] = ta

    def topic_configs(self, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        return {}

    def partition_states(self, tps: Iterable[TP]) -> dict[TP, PartitionState]:
        return {tp: self.states[tp] for tp in tps if tp in self.states}

    def create_partition_states(self, states: Mapping[TP, PartitionState]) -> dict[TP, PartitionState | None]:
        self.writes.append(("create_partition_states", sorted(states)))
        out: dict[TP, PartitionState | None] = {}
        for tp, st in states.items():
            out[tp] = None if tp in self.states else dataclasses.replace(st, partition_epoch=0)
            self.states.setdefault(tp, out[tp])
        return out

    def update_partition_states(self, states: Mapping[TP, PartitionState]) -> dict[TP, PartitionState | None]:
        self.writes.append(("update_partition_states", sorted(states)))
        out: dict[TP, PartitionState | None] = {}
        for tp, st in states.items():
            current = self.states.get(tp)
            if current is None or current.partition_epoch != st.partition_epoch:
                out[tp] = None
            else:
                out[tp] = self.states[tp] = dataclasses.replace(st, partition_epoch=st.partition_epoch + 1)
        return out

    def children(self, path: str) -> list[str]:
        return sorted(self.marked) if path == paths.delete_topics() else []

    def delete_path(self, path: str) -> None:
        self.writes.append(("delete_path", path))
        self.marked.discard(path.rsplit("/", 1)[-1])

    def delete_topic_znodes(self, topic: str) -> None:
        self.writes.append(("delete_topic_znodes", topic))
        self.topics_.pop(topic, None)
        self.marked.discard(topic)
        for tp in [tp for tp in self.states if tp[0] == topic]:
            del self.states[tp]


class FakeCore:
    """What a controller part may use of the controller, with broker requests recorded, not sent."""

    def __init__(self, live: Iterable[int], config: Mapping[str, Any] | None = None) -> None:
        self.broker_id = 0
        self.config = dict(config or {})
        self.dynamic_default: dict[str, str] = {}
        self.ops = FakeZk()
        self.zk = self.ops
        self.ctx = ControllerContext(epoch=1)
        for bid in live:
            self.ctx.live[bid] = LiveBroker(None, bid)  # type: ignore[arg-type]  # registrations unused here
        self.is_active = True
        self.generation = 1
        self.sent: list[tuple[str, Any]] = []
        self.posted: list[Any] = []

    async def zk_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)

    def post(self, event: Any, generation: int | None = None) -> None:
        self.posted.append(event)

    def propagate(self, tps: Iterable[TP], is_new: bool = False) -> None:
        self.sent.append(("propagate", sorted(tps)))

    def send_update_metadata(self, brokers: Iterable[int], tps: Iterable[TP] | None, deleting: Iterable[TP] = (),
                             resend: bool = False) -> None:
        self.sent.append(("update_metadata", sorted(brokers)))

    def send_leader_and_isr(self, bid: int, tps: Iterable[TP], is_new: bool = False, resend: bool = False) -> None:
        self.sent.append(("leader_and_isr", bid, sorted(tps)))

    def send_stop_replica(self, bid: int, tps: Iterable[TP], delete: bool, deleting_topic: bool = False,
                          callback: Callable[[int, Any], None] | None = None) -> None:
        self.sent.append(("stop_replica", bid, sorted(tps), delete))

    def watch_topic(self, topic: str) -> None:
        self.sent.append(("watch_topic", topic))

    def open_channel(self, bid: int) -> None:
        self.sent.append(("open_channel", bid))

    def close_channel(self, bid: int) -> None:
        self.sent.append(("close_channel", bid))

    def add_topic(self, topic: str, replicas: Mapping[int, tuple[int, ...]]) -> None:
        """A topic znode as the tools write it (no partition state yet)."""
        self.ops.topics_[topic] = TopicAssignment(dict(replicas), random_uuid())
