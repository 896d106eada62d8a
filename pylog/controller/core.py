"""The seams between the controller and its parts: what a part may use, and the events it can hear.

Each part (partitions, membership, deletion, notifications, topics, the admin extensions) gets a
ControllerCore and the sibling parts it calls as constructor arguments, so it can be read and
unit-tested alone (tests/support/fake_controller.py implements ControllerCore in memory).
Cluster events reach the parts that care through Listeners, a typed fan-out, not names.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable, Protocol

from pylog.common.types import TP
from pylog.controller.context import ControllerContext
from pylog.controller.zk_ops import ControllerZk
from pylog.zk.core import ZkConnection


class ControllerCore(Protocol):
    """The controller's services: its state, ZooKeeper, its event task and its requests to brokers."""

    broker_id: int
    config: Any
    zk: ZkConnection
    ops: ControllerZk
    ctx: ControllerContext  # replaced at every failover: read it per call, never keep it
    is_active: bool
    generation: int  # bumped at every failover and resignation
    dynamic_default: dict[str, str]  # /config/brokers/<default>

    async def zk_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking ZooKeeper call off the event loop."""

    def post(self, event: Any, generation: int | None = None) -> None:
        """Queue an event from any thread (dropped if it belongs to an earlier term)."""

    async def call(self, func: Callable[[], Awaitable[Any]]) -> Any:
        """Run `func` on the controller's task."""

    def watch_topic(self, topic: str) -> None:
        """Watch a topic's assignment znode for this term (blocking: call through zk_call)."""

    def open_channel(self, bid: int) -> None:
        """Start talking to a newly registered broker."""

    def close_channel(self, bid: int) -> None:
        """Stop talking to a broker that is gone."""

    def propagate(self, tps: Iterable[TP], is_new: bool = False) -> None:
        """LeaderAndIsr to the partitions' replicas and UpdateMetadata to every live broker."""

    def send_update_metadata(self, brokers: Iterable[int], tps: Iterable[TP] | None,
                             deleting: Iterable[TP] = (), resend: bool = False) -> None:
        """UpdateMetadata to `brokers`."""

    def send_leader_and_isr(self, bid: int, tps: Iterable[TP], is_new: bool = False, resend: bool = False) -> None:
        """LeaderAndIsr to one broker."""

    def send_stop_replica(self, bid: int, tps: Iterable[TP], delete: bool, deleting_topic: bool = False,
                          callback: Callable[[int, Any], None] | None = None) -> None:
        """StopReplica to one broker."""


class ControllerListener:
    """Cluster events a part may react to; each is a no-op unless overridden."""

    async def on_failover(self) -> None:
        """This broker became the controller and loaded the cluster."""

    async def on_resign(self) -> None:
        """This broker stopped being the controller."""

    async def on_isr_change(self, tps: list[TP]) -> None:
        """Leaders changed these partitions' ISRs."""

    async def on_broker_startup(self, ids: set[int]) -> None:
        """These brokers (re)registered."""

    async def on_broker_failure(self, ids: set[int]) -> None:
        """These brokers died."""


class Listeners(ControllerListener):
    """The event interface: each event goes to every registered listener, in registration order."""

    def __init__(self) -> None:
        self._listeners: list[ControllerListener] = []

    def add(self, listener: ControllerListener) -> None:
        """Register a listener."""
        self._listeners.append(listener)

    async def on_failover(self) -> None:
        for listener in self._listeners:
            await listener.on_failover()

    async def on_resign(self) -> None:
        for listener in self._listeners:
            await listener.on_resign()

    async def on_isr_change(self, tps: list[TP]) -> None:
        for listener in self._listeners:
            await listener.on_isr_change(tps)

    async def on_broker_startup(self, ids: set[int]) -> None:
        for listener in self._listeners:
            await listener.on_broker_startup(ids)

    async def on_broker_failure(self, ids: set[int]) -> None:
        for listener in self._listeners:
            await listener.on_broker_failure(ids)
