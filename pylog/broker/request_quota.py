"""The request_percentage quota (KIP-124): the time a client's requests keep the request handler busy.

Kafka charges each request its request-handler thread time, as a percentage of one thread over a second
(ClientRequestQuotaManager.nanosToPercentage), against the client's `request_percentage` with the same
windowed rate as the byte quotas; a request that takes the rate over the bound gets a throttle time (at
most one quota window, Kafka's maxThrottleTimeMs), which the response carries and for which the
connection is muted. pylog's request handler is the event loop: a request is charged the time its
handler's coroutine runs on it, step by step (`BusyTime`), not the time it waits (a long-poll Fetch, a
JoinGroup parked for a rebalance, a ZooKeeper call in the executor), as Kafka's purgatories do not hold a
thread either. Inter-broker requests, followers' fetches and SASL authentication are exempt, as in Kafka.
Nothing is timed while no entity has a request_percentage.
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Generator

from pylog.broker.handlers import Later
from pylog.broker.quotas import REQUEST, principal_user
from pylog.common.clock import now_ms
from pylog.protocol.api import ApiKey

__all__ = ["BusyTime", "EXEMPT_APIS", "charged", "request_throttle", "with_throttle"]

# sendResponseExemptThrottle in KafkaApis (cluster actions), and SASL, which Kafka's network layer handles.
EXEMPT_APIS = frozenset((ApiKey.LeaderAndIsr, ApiKey.StopReplica, ApiKey.UpdateMetadata, ApiKey.ControlledShutdown,
                         ApiKey.WriteTxnMarkers, ApiKey.SaslHandshake, ApiKey.SaslAuthenticate))


class BusyTime:
    """Await a coroutine and add up the time its steps run (its waits are not counted)."""

    __slots__ = ("coro", "busy")

    def __init__(self, coro: Awaitable[Any]) -> None:
        self.coro, self.busy = coro, 0.0

    def __await__(self) -> Generator[Any, Any, Any]:
        coro = self.coro.__await__()
        send, error = None, None
        while True:
            started = time.perf_counter()
            try:
                yielded = coro.send(send) if error is None else coro.throw(error)
            except StopIteration as done:
                self.busy += time.perf_counter() - started
                return done.value
            except BaseException:
                self.busy += time.perf_counter() - started
                raise
            self.busy += time.perf_counter() - started
            try:
                send, error = (yield yielded), None
            except BaseException as exc:  # cancelled while waiting: hand it to the handler
                send, error = None, exc


def charged(ctx: Any, follower_fetch: bool) -> bool:
    """Whether this request counts against request_percentage (some entity has one, and it is not exempt)."""
    return (ctx.broker.quotas.has_request_quotas and not follower_fetch
            and ctx.header.api_key not in EXEMPT_APIS)


def request_throttle(ctx: Any, busy_s: float) -> int:
    """Record `busy_s` of handler time as a percentage of a thread-second; the throttle time in ms."""
    quotas = ctx.broker.quotas
    principal = ctx.security.principal if ctx.security is not None else None
    throttle = quotas.record(REQUEST, principal_user(principal), ctx.header.client_id or "", busy_s * 100.0,
                             now_ms())
    return min(throttle, quotas.window_ms)  # QuotaUtils.boundedThrottleTime: at most one window


def with_throttle(resp: Any, throttle_ms: int, header: Any = None) -> Any:
    """The response with throttle_time_ms raised to `throttle_ms` (Kafka's max of the request and bandwidth
    throttles): a message's field, or the field of a Fetch already encoded as parts (`header` says which).

    A Produce answered at once is already encoded with its bandwidth throttle only; its connection is
    muted for the larger one all the same."""
    if isinstance(resp, Later):
        finish = resp.finish

        async def later() -> Any:
            return with_throttle(await finish(), throttle_ms, header)
        return Later(later)
    if isinstance(resp, list) and header is not None and header.api_key == ApiKey.Fetch and resp:
        return _fetch_with_throttle(resp, throttle_ms, header.api_version)
    if resp is not None and getattr(resp, "throttle_time_ms", None) is not None and resp.throttle_time_ms < throttle_ms:
        resp.throttle_time_ms = throttle_ms
    return resp


def _fetch_with_throttle(parts: list, throttle_ms: int, version: int) -> list:
    """Fetch's first part is size, correlation id, (v12+: header tags,) then throttle_time_ms."""
    at = 8 + (1 if version >= 12 else 0)
    first = parts[0]
    if not isinstance(first, (bytes, bytearray)) or len(first) < at + 4:
        return parts
    if int.from_bytes(first[at:at + 4], "big", signed=True) < throttle_ms:
        parts[0] = bytes(first[:at]) + throttle_ms.to_bytes(4, "big", signed=True) + bytes(first[at + 4:])
    return parts
