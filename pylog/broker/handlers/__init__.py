"""One module per Kafka API key, each registered with the version range it implements.

ApiVersions is generated from this registry, so what we advertise can't drift from what we
implement. A handler returns a response message, an encoded response (bytes), a list of raw parts (Fetch:
bytes and file chunks), None when the request gets no response (Produce with acks=0), or a Later when
the response has to wait for something other requests need not wait for (Produce with acks=-1: the
connection goes on reading while it waits, and sends the responses in request order).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

from pylog.protocol.api import api_name, schema_max_version

if TYPE_CHECKING:
    from pylog.broker.controller_admin import ControllerAdmin
    from pylog.broker.services import HandlerContext
    from pylog.coordinator.group.coordinator import GroupCoordinator
    from pylog.coordinator.transaction.coordinator import TransactionCoordinator


@dataclass(frozen=True, slots=True)
class Handler:
    """An API key's handler and the versions it accepts (and the ones it advertises)."""

    api_key: int
    min_version: int
    max_version: int
    func: Callable[..., Awaitable[Any]]
    advertised_min: int
    decode: Callable[[Any, Any], Any] | None = None  # a fast path instead of the generic codec
    # (feature, level, max): versions above max_version exist only while the feature is finalized at that level
    gate: tuple[str, int, int] | None = None

    def top(self, levels: Mapping[str, int]) -> int:
        """The highest version served (and advertised) at these finalized feature levels."""
        if self.gate is not None and levels.get(self.gate[0], 0) >= self.gate[1]:
            return self.gate[2]
        return self.max_version


HANDLERS: dict[int, Handler] = {}


def active_controller(ctx: HandlerContext) -> ControllerAdmin | None:
    """This broker's controller if it is the active one, else None: the request gets NOT_CONTROLLER."""
    return ctx.broker.active_controller()


def coordinator_of(ctx: HandlerContext) -> GroupCoordinator:
    """The group coordinator of the broker serving a request (the handlers' only way to it)."""
    assert ctx.broker.groups is not None, "the broker serves requests only once its group coordinator exists"
    return ctx.broker.groups.coordinator


def client_host(ctx: HandlerContext) -> str:
    """A member's host as Kafka reports it (`/<address>`)."""
    return "/" + ctx.peer.rsplit(":", 1)[0] if ctx.peer and ctx.peer != "?" else ""


def txn_coordinator_of(ctx: HandlerContext) -> TransactionCoordinator:
    """The transaction coordinator of the broker serving a request (the handlers' only way to it)."""
    assert ctx.broker.transactions is not None, "the broker serves requests only once its coordinator exists"
    return ctx.broker.transactions.coordinator


def topic_results(order: list[tuple[str, int]], results: dict, topic_cls: Any, partition_cls: Any) -> list[Any]:
    """Per-partition error codes grouped by topic, in request order (OffsetCommit, TxnOffsetCommit)."""
    topics: dict[str, list] = {}
    for tp in dict.fromkeys(order):
        topics.setdefault(tp[0], []).append(partition_cls(partition_index=tp[1], error_code=int(results[tp])))
    return [topic_cls(name=n, partitions=ps) for n, ps in topics.items()]


class Later:
    """A response that is not ready yet: `finish()` waits and returns what a handler would have.

    Everything the request changes must already be done when the handler returns it (the next
    request on the connection is handled before `finish` runs); `finish` only waits and answers.
    """

    __slots__ = ("finish",)

    def __init__(self, finish: Callable[[], Awaitable[Any]]) -> None:
        self.finish = finish


def handler(api_key: int, min_version: int, max_version: int, advertised_min: int | None = None,
            decode: Callable[[Any, Any], Any] | None = None, gate: tuple[str, int, int] | None = None):
    """Register `func` for `api_key` at versions min..max; a duplicate key fails at import.

    `decode(header, frame)` replaces the generic request decoder for this key (it must raise
    MalformedRequest for a frame it cannot parse). `gate` = (feature, level, higher max) serves the
    versions above `max_version` only while /feature finalizes that level (transaction.version 2's
    Produce 12 and EndTxn 5, which Kafka 3.9 does not have).
    """
    def register(func: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        if api_key in HANDLERS:
            raise RuntimeError(f"{api_name(api_key)} is registered twice")
        top = max_version if gate is None else gate[2]
        if not 0 <= min_version <= max_version <= top <= schema_max_version(api_key):
            raise RuntimeError(f"bad version range {min_version}-{top} for {api_name(api_key)}")
        HANDLERS[api_key] = Handler(api_key, min_version, max_version, func,
                                    min_version if advertised_min is None else advertised_min, decode, gate)
        return func
    return register


def load_all() -> dict[int, Handler]:
    """Import every handler module so the registry is complete."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    return HANDLERS


def advertised_ranges(levels: Mapping[str, int] | None = None) -> list[tuple[int, int, int]]:
    """(api key, min, max) for ApiVersions at these finalized feature levels (none: Kafka 3.9's), in key order."""
    return [(h.api_key, h.advertised_min, h.top(levels or {}))
            for h in sorted(HANDLERS.values(), key=lambda h: h.api_key)]
