"""Replication throttling (KIP-73): caps the bytes moved for replicas listed as throttled.

Kafka's rules (ReplicationQuotaManager, ReplicaManager.shouldLeaderThrottle,
ReplicaFetcherThread.shouldFollowerThrottle, TopicConfigHandler.parseThrottledPartitions):
* rates are per broker and direction: leader.replication.throttled.rate and
  follower.replication.throttled.rate (bytes/s; dynamic, per broker or cluster default; unset
  means unlimited);
* a topic's leader.replication.throttled.replicas / follower.replication.throttled.replicas list
  `partition:broker` pairs (or `*`); on broker B the throttled partitions are those listed with B;
* leader side: a follower fetch gets no data for a throttled partition while the leader quota is
  exhausted, unless that follower is in the ISR;
* follower side: a throttled partition is left out of the fetch while the follower quota is
  exhausted, unless the replica is caught up with the leader's high watermark;
* every byte of a throttled partition counts against the quota, in sync or not.

The quota is a token bucket per direction: it starts empty when a rate is set, refills at the
rate up to one second's worth, and goes into debt by the size of the last read (one fetch may
overshoot, as in Kafka), so over a transfer the bytes moved stay within rate x time.
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Callable, Iterable

from pylog.broker.topic_configs import ConfigListener, TopicConfigs
from pylog.common.throttle_keys import FOLLOWER_RATE, FOLLOWER_REPLICAS, LEADER_RATE, LEADER_REPLICAS

UNLIMITED = (1 << 63) - 1  # Long.MaxValue: the default rate, meaning no throttle
ALL_PARTITIONS = None  # parse_throttled_replicas' answer for "*"
BURST_SECONDS = 1.0  # Kafka's quota sample window (replication.quota.window.size.seconds)


def parse_throttled_replicas(value: str, broker_id: int) -> frozenset[int] | None:
    """The partitions a throttled-replicas value names for `broker_id`; None means all ("*")."""
    value = value.strip()
    if value == "*":
        return ALL_PARTITIONS
    out = set()
    for item in value.split(","):
        part, _, broker = item.strip().partition(":")
        if part.strip().isdigit() and broker.strip().isdigit() and int(broker) == broker_id:
            out.add(int(part))
    return frozenset(out)


class TokenBucket:
    """Bytes allowed at `rate` per second, at most `burst_s` seconds' worth saved up, debt allowed."""

    def __init__(self, rate: float, now: float, burst_s: float = BURST_SECONDS) -> None:
        self.rate = float(rate)
        self.capacity = self.rate * burst_s
        self.tokens = 0.0  # start empty: a new throttle must not begin with a burst
        self.updated = now

    def _refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
            self.updated = now

    def exceeded(self, now: float) -> bool:
        """Whether the quota is used up (callers then hold back throttled traffic)."""
        self._refill(now)
        return self.rate <= 0 or self.tokens < 0

    def record(self, nbytes: int, now: float) -> None:
        """Account bytes just moved (may put the bucket into debt)."""
        self._refill(now)
        self.tokens -= nbytes

    def seconds_until_available(self, now: float) -> float:
        """How long until the quota is no longer exceeded (inf with a zero rate)."""
        self._refill(now)
        if self.rate <= 0:  # a zero rate is always exceeded (exceeded() says so too)
            return float("inf")
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


class Quota:
    """One direction's rate and the topics' throttled-replica lists, as seen by one broker."""

    def __init__(self, rate_key: str, replicas_key: str, clock: Callable[[], float]) -> None:
        self.rate_key = rate_key
        self.replicas_key = replicas_key
        self.clock = clock
        self.rate = UNLIMITED
        self.bucket: TokenBucket | None = None
        self._lists: dict[str, tuple[str, frozenset[int] | None]] = {}  # topic -> (raw value, parsed)

    def set_rate(self, rate: int) -> None:
        """Apply a (possibly changed) rate; a new rate starts a new, empty bucket."""
        if rate != self.rate:
            self.rate = rate
            self.bucket = None if rate >= UNLIMITED else TokenBucket(rate, self.clock())

    def _parsed(self, topic: str, raw: str, broker_id: int) -> frozenset[int] | None:
        cached = self._lists.get(topic)
        if cached is None or cached[0] != raw:
            cached = (raw, parse_throttled_replicas(raw, broker_id))
            self._lists[topic] = cached
        return cached[1]

    def throttled(self, topic: str, partition: int, raw: str, broker_id: int) -> bool:
        """Whether (topic, partition) is a throttled replica on this broker (quota set or not)."""
        if not raw:
            return False
        parsed = self._parsed(topic, raw, broker_id)
        return parsed is ALL_PARTITIONS or partition in parsed

    def exceeded(self) -> bool:
        """Whether this direction's quota is used up (never without a rate)."""
        return self.bucket is not None and self.bucket.exceeded(self.clock())

    def record(self, nbytes: int) -> None:
        """Count throttled bytes against the quota."""
        if self.bucket is not None and nbytes > 0:
            self.bucket.record(nbytes, self.clock())


class ReplicationThrottle(ConfigListener):
    """The broker's leader- and follower-side replication quotas."""

    def __init__(self, broker_id: int, topic_configs: TopicConfigs, clock: Callable[[], float] = time.monotonic) -> None:
        self.broker_id = broker_id
        self.topic_configs = topic_configs  # the rates (dynamic broker configs) and the throttled-replica lists
        self.leader = Quota(LEADER_RATE, LEADER_REPLICAS, clock)
        self.follower = Quota(FOLLOWER_RATE, FOLLOWER_REPLICAS, clock)
        self._configured = False
        # Follower side: lag <= 0 on the last fetch. Keyed by the Partition object and reset when fetching
        # (re)starts, as Kafka's fetch state is: a replica deleted and created again, or a leader turned
        # follower, must not inherit "in sync" from before.
        self._caught_up: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()

    def reconfigure(self) -> None:
        """Re-read the rates (dynamic broker config changed)."""
        tc = self.topic_configs
        self.leader.set_rate(int(tc.broker_value(LEADER_RATE)))
        self.follower.set_rate(int(tc.broker_value(FOLLOWER_RATE)))
        self._configured = True

    def on_broker_config(self) -> None:
        """A dynamic broker config changed: the rates may have."""
        self.reconfigure()

    def _ensure(self) -> None:
        if not self._configured:
            self.reconfigure()

    def _raw(self, topic: str, key: str) -> str:
        return self.topic_configs.overrides.get(topic, {}).get(key, "")

    def _is(self, quota: Quota, topic: str, partition: int) -> bool:
        return quota.throttled(topic, partition, self._raw(topic, quota.replicas_key), self.broker_id)

    # -- leader side ----------------------------------------------------------------------

    def leader_read_limit(self, p: Any, replica_id: int, limit: int) -> int:
        """Bytes a follower fetch may read from partition `p` now: 0 while throttled, else `limit`."""
        self._ensure()
        if self.leader.bucket is None or replica_id in p.isr:
            return limit
        if self._is(self.leader, p.topic, p.index) and self.leader.exceeded():
            return 0
        return limit

    def after_leader_fetch(self, topics: Iterable[tuple[str, list]]) -> None:
        """Count the throttled partitions' bytes just served to a follower."""
        self._ensure()
        if self.leader.bucket is None:
            return
        self.leader.record(sum(d.records_size for topic, parts in topics for d in parts
                               if d.records and self._is(self.leader, topic, d.partition)))

    # -- follower side ------------------------------------------------------------------------

    def follower_started(self, p: Any) -> None:
        """A fetcher starts following `p`: it is not known to be in sync until a fetch shows it."""
        self._caught_up.pop(p, None)

    def follower_should_skip(self, p: Any) -> bool:
        """Leave partition `p` out of the next fetch (throttled, out of sync, quota used up)."""
        self._ensure()
        if self.follower.bucket is None or self._caught_up.get(p, False):
            return False
        return self._is(self.follower, p.topic, p.index) and self.follower.exceeded()

    def after_follower_append(self, p: Any, nbytes: int, leader_high_watermark: int) -> None:
        """Record what a fetch brought for `p` and whether it is now caught up with the leader."""
        self._ensure()
        self._caught_up[p] = leader_high_watermark - p.log.log_end_offset <= 0
        if self._is(self.follower, p.topic, p.index):
            self.follower.record(nbytes)
