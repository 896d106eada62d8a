"""Counters and latency reservoirs bumped on the hot paths; read by the collector at scrape time.

Everything here is stdlib and cheap: an increment is a dict update or an integer add, a latency a
store into a fixed ring. The broker process has one set (module singletons), like Kafka's JVM-wide
Yammer registry. Writers run on the event loop (and the ZooKeeper threads); the collector reads
from the HTTP thread through `snapshot()` methods whose copies are single C-level operations.
"""

from __future__ import annotations

import time
from collections import defaultdict

QUANTILES = (0.5, 0.75, 0.95, 0.98, 0.99, 0.999)  # the percentiles Kafka's Yammer histograms expose
FETCH_FOLLOWER = -1  # the request key a replica's Fetch is recorded under (Kafka's FetchFollower)
_RING = 1024  # like Kafka's reservoir (1028 samples): quantiles over the recent requests


class Reservoir:
    """The last _RING observations (ms), their count and sum: a Kafka Timer/Histogram's Prometheus view."""

    __slots__ = ("ring", "n", "total")

    def __init__(self) -> None:
        self.ring = [0.0] * _RING
        self.n = 0
        self.total = 0.0

    def observe(self, ms: float) -> None:
        """Record one observation in milliseconds."""
        self.ring[self.n % _RING] = ms
        self.n += 1
        self.total += ms

    def summary(self) -> tuple[int, float, list[tuple[float, float]]]:
        """(count, sum, [(quantile, value)]) over the recent observations."""
        n, total, ring = self.n, self.total, list(self.ring)
        recent = sorted(ring[:min(n, _RING)])
        if not recent:
            return n, total, [(q, 0.0) for q in QUANTILES]
        return n, total, [(q, recent[min(int(q * len(recent)), len(recent) - 1)]) for q in QUANTILES]


class RequestMetrics:
    """kafka.network:type=RequestMetrics: requests per type and version, errors, total time."""

    def __init__(self) -> None:
        self.requests: defaultdict[tuple[int, int], int] = defaultdict(int)  # (api key, version) -> count
        self.errors: defaultdict[tuple[int, int], int] = defaultdict(int)  # (api key, error code) -> count
        self.total_time: dict[int, Reservoir] = {}

    def record(self, api_key: int, version: int, started: float, error_code: int = 0) -> None:
        """One request answered; `started` is its time.perf_counter() on arrival."""
        self.requests[(api_key, version)] += 1
        if error_code:
            self.errors[(api_key, error_code)] += 1
        r = self.total_time.get(api_key)
        if r is None:
            r = self.total_time[api_key] = Reservoir()
        r.observe((time.perf_counter() - started) * 1000)


class BrokerCounters:
    """Counts the broker bumps where it decides: ISR changes, failed produce/fetch per topic."""

    def __init__(self) -> None:
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.failed_produce: defaultdict[str, int] = defaultdict(int)
        self.failed_fetch: defaultdict[str, int] = defaultdict(int)

    def isr_changed(self, old: list[int], new: list[int]) -> None:
        """An ISR write succeeded: count a shrink (a member left) and/or an expand (one joined)."""
        if set(old) - set(new):
            self.isr_shrinks += 1
        if set(new) - set(old):
            self.isr_expands += 1


class ControllerCounters:
    """kafka.controller:type=ControllerStats: elections and their time, unclean elections."""

    def __init__(self) -> None:
        self.unclean_elections = 0
        self.election_time = Reservoir()


class GroupCounters:
    """Group coordinator events (completed rebalances: a new generation)."""

    def __init__(self) -> None:
        self.rebalances = 0


class TxnCounters:
    """Transaction coordinator outcomes."""

    def __init__(self) -> None:
        self.committed = 0
        self.aborted = 0

    def count(self, committed: bool) -> None:
        """A transaction completed (its Complete* state is durable)."""
        if committed:
            self.committed += 1
        else:
            self.aborted += 1


class ZkCounters:
    """The ZooKeeper client: request latency and session events (Kafka's ZooKeeperClientMetrics and
    SessionExpireListener)."""

    def __init__(self) -> None:
        self.latency = Reservoir()
        self.events: defaultdict[str, int] = defaultdict(int)


REQUESTS = RequestMetrics()
BROKER = BrokerCounters()
CONTROLLER = ControllerCounters()
GROUPS = GroupCounters()
TXNS = TxnCounters()
ZK = ZkCounters()
