"""A replica manager stand-in for coordinator host unit tests: partitions of one topic whose leadership a test sets."""

from __future__ import annotations

from types import SimpleNamespace


class Replicas:
    """`partitions`, `get` and the leadership-change callbacks of the replica manager, for one topic."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.partitions: dict = {}
        self.on_leadership_change: list = []

    def get(self, topic, index):
        return self.partitions.get((topic, index))

    def set(self, index: int, leader: bool, epoch: int, notify: bool = True) -> None:
        """Lead (or follow) a partition from `epoch`; `notify=False` is an epoch bump without a leader change."""
        p = SimpleNamespace(topic=self.topic, index=index, is_leader=leader, leader_epoch=epoch, fenced=False)
        self.partitions[(self.topic, index)] = p
        if notify:
            for cb in self.on_leadership_change:
                cb(p)
