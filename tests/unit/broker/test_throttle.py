"""KIP-73 replication throttle (pylog/broker/throttle.py): Kafka's rules by table, and the rate over time.

The broker around the throttle is a stand-in holding only what it reads (broker id, dynamic rates and
topic overrides); partitions are real Partition objects over real logs.
"""


import pytest

from pylog.broker.partition import Partition
from pylog.broker.throttle import (ALL_PARTITIONS, UNLIMITED, Quota, ReplicationThrottle, TokenBucket,
                                   parse_throttled_replicas)
from pylog.protocol.fetch import FetchPartitionData


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TopicConfigs:
    """What ReplicationThrottle reads of the broker's TopicConfigs."""

    def __init__(self) -> None:
        self.rates = {"leader.replication.throttled.rate": UNLIMITED,
                      "follower.replication.throttled.rate": UNLIMITED}
        self.overrides: dict[str, dict[str, str]] = {}

    def broker_value(self, key: str) -> int:
        return self.rates[key]


@pytest.fixture
def setup(make_log):
    clock = Clock()
    configs = TopicConfigs()
    throttle = ReplicationThrottle(3, configs, clock)

    def partition(topic: str, index: int, isr=(3, 1)) -> Partition:
        p = Partition(topic, index, 3, make_log(f"{topic}{index}"))
        p.isr = list(isr)
        return p
    return throttle, configs, clock, partition


def rates(throttle, configs, leader=None, follower=None):
    configs.rates["leader.replication.throttled.rate"] = UNLIMITED if leader is None else leader
    configs.rates["follower.replication.throttled.rate"] = UNLIMITED if follower is None else follower
    throttle.reconfigure()


@pytest.mark.parametrize("value, broker, expected", [
    ("*", 3, ALL_PARTITIONS),
    ("0:3,1:4,2:3", 3, frozenset({0, 2})),
    (" 0 : 3 , 7:3", 3, frozenset({0, 7})),
    ("0:1,1:2", 3, frozenset()),
    ("x:3,1:y,,5", 3, frozenset()),  # malformed items name nothing
    ("", 3, frozenset()),
])
def test_throttled_replica_lists_name_this_brokers_partitions(value, broker, expected):
    assert parse_throttled_replicas(value, broker) == expected


def test_token_bucket_starts_empty_goes_into_debt_and_refills_at_the_rate():
    b = TokenBucket(1000, now=0.0)
    assert not b.exceeded(0.0)  # a first read may go ahead ...
    b.record(3000, 0.0)  # ... and overshoot, as one Kafka fetch can
    assert b.exceeded(0.0)
    assert b.seconds_until_available(1.0) == pytest.approx(2.0)
    assert b.exceeded(2.9)
    assert not b.exceeded(3.0)
    b.record(0, 100.0)  # idle time saves up at most one second's worth
    assert b.tokens == pytest.approx(1000)
    zero = TokenBucket(0, now=0.0)
    assert zero.exceeded(50.0) and zero.seconds_until_available(50.0) == float("inf")


def test_a_new_rate_starts_a_new_empty_bucket_and_unlimited_has_none():
    clock = Clock()
    q = Quota("leader.replication.throttled.rate", "leader.replication.throttled.replicas", clock)
    assert q.bucket is None and not q.exceeded()
    q.set_rate(500)
    q.record(600)
    assert q.exceeded()
    q.set_rate(500)  # unchanged: the debt stays
    assert q.exceeded()
    q.set_rate(1000)
    assert not q.exceeded()
    q.set_rate(UNLIMITED)
    q.record(10 ** 12)
    assert q.bucket is None and not q.exceeded()


def test_leader_side_withholds_data_only_from_throttled_out_of_sync_followers(setup):
    throttle, configs, clock, partition = setup
    p = partition("t", 0, isr=[3, 1])
    other = partition("t", 1, isr=[3])
    configs.overrides["t"] = {"leader.replication.throttled.replicas": "0:3,0:1"}
    assert throttle.leader_read_limit(p, 2, 4096) == 4096  # no rate set: nothing is throttled
    rates(throttle, configs, leader=1000)
    assert throttle.leader_read_limit(p, 2, 4096) == 4096  # quota not used up yet
    throttle.after_leader_fetch([("t", [FetchPartitionData(0, records=[b"x" * 5000]),
                                              FetchPartitionData(1, records=[b"y" * 7000])])])
    assert throttle.leader.bucket.tokens == pytest.approx(-5000)  # only the throttled partition counts
    assert throttle.leader_read_limit(p, 2, 4096) == 0  # out of sync and over quota: nothing
    assert throttle.leader_read_limit(p, 1, 4096) == 4096  # an in-sync follower is never held back
    assert throttle.leader_read_limit(other, 2, 4096) == 4096  # not listed
    clock.now += 5.0
    assert throttle.leader_read_limit(p, 2, 4096) == 4096
    configs.overrides["t"] = {"leader.replication.throttled.replicas": "*"}
    throttle.after_leader_fetch([("t", [FetchPartitionData(1, records=[b"y" * 7000])])])
    assert throttle.leader_read_limit(other, 2, 4096) == 0


def test_follower_side_skips_throttled_partitions_until_caught_up(setup):
    throttle, configs, clock, partition = setup
    p = partition("t", 4)
    configs.overrides["t"] = {"follower.replication.throttled.replicas": "4:3"}
    rates(throttle, configs, follower=100)
    assert not throttle.follower_should_skip(p)
    throttle.after_follower_append(p, 1000, leader_high_watermark=50)  # our LEO is 0: lagging
    assert throttle.follower_should_skip(p)
    clock.now += 10.0
    assert not throttle.follower_should_skip(p)
    throttle.after_follower_append(p, 5000, leader_high_watermark=0)  # caught up with the leader's HW
    assert not throttle.follower_should_skip(p)  # caught-up replicas are not held back, over quota or not
    assert throttle.follower.exceeded()
    throttle.follower_started(p)  # following again (e.g. after being leader): in sync only once a fetch shows it
    assert throttle.follower_should_skip(p)
    again = partition("t", 4)  # the replica deleted and created again on this broker
    assert throttle.follower_should_skip(again)
    configs.overrides["t"] = {"follower.replication.throttled.replicas": "4:2"}  # listed for another broker
    throttle.after_follower_append(p, 1000, leader_high_watermark=50)
    assert not throttle.follower_should_skip(p)


@pytest.mark.parametrize("rate, chunk", [(100_000, 32_768), (1_000_000, 1_048_576), (50_000, 1_000)])
def test_bytes_moved_stay_within_rate_times_time(setup, rate, chunk):
    """A follower that fetches whenever allowed moves rate x time, give or take one fetch."""
    throttle, configs, clock, partition = setup
    p = partition("big", 0, isr=[3])
    configs.overrides["big"] = {"leader.replication.throttled.replicas": "*"}
    rates(throttle, configs, leader=rate)
    moved, start, step = 0, clock.now, 0.01
    while clock.now - start < 20.0:
        limit = throttle.leader_read_limit(p, 9, chunk)
        if limit:
            throttle.after_leader_fetch([("big", [FetchPartitionData(0, records=[b"z" * limit])])])
            moved += limit
        clock.now += step
    elapsed = clock.now - start
    assert rate * elapsed - chunk <= moved <= rate * elapsed + chunk
