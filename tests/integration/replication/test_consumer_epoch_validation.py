"""librdkafka's leader-epoch validation (OffsetForLeaderEpoch v2) across leader changes.

After a leader change a confluent-kafka consumer asks the new leader where the epoch of its
position ends before fetching again. After a clean failover the answer confirms the position
and consumption continues with no gap and no repeat; after an unclean election to a replica
that lacks the tail, the answer makes the consumer detect the truncation and continue from the
new leader's end of that epoch. What the client did is read from its own debug log.
"""

from __future__ import annotations

import logging
import signal
import time

import pytest

from support.clients import create_topic, kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration
confluent_kafka = pytest.importorskip("confluent_kafka")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _consumer(bootstrap: str, name: str) -> tuple[object, _Lines]:
    lines = _Lines()
    logger = logging.getLogger(f"rdkafka.{name}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(lines)
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": name, "enable.auto.commit": False,
                                  "debug": "protocol,fetch,consumer", "logger": logger,
                                  "topic.metadata.refresh.interval.ms": 1000})
    return c, lines


def _read(c, want: int, timeout: float = 60) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        for m in c.consume(100, 0.5):
            if m.error() is None:
                got.append(m.value().decode())
    return got


def _produce(bootstrap: str, topic: str, values) -> None:
    kcat(bootstrap, "-P", "-t", topic, "-X", "acks=all", input="".join(f"{v}\n" for v in values))


def test_consumer_validates_its_position_with_the_new_leader_and_continues(cluster_factory):
    c = cluster_factory(3, overrides={"zookeeper.session.timeout.ms": "3000", "replica.lag.time.max.ms": "3000"})
    create_topic(c.bootstrap, "ev", partitions=1, rf=3, configs={"min.insync.replicas": "2"})
    view = wait_for(lambda: (v := partitions(c.bootstrap, "ev")[0]) and len(v.isr) == 3 and v, 30, "full ISR")
    _produce(c.bootstrap, "ev", range(100))
    consumer, log = _consumer(c.bootstrap, "ev-failover")
    try:
        consumer.assign([confluent_kafka.TopicPartition("ev", 0, 0)])
        assert _read(consumer, 100) == [str(i) for i in range(100)]
        seen = len(log.lines)
        c.brokers[view.leader].kill()
        rest = ",".join(b.address for i, b in c.brokers.items() if i != view.leader)
        new = wait_for(lambda: (v := partitions(rest, "ev")[0]) and v.leader not in (-1, view.leader) and v, 30,
                       "a new leader")
        assert new.leader_epoch > view.leader_epoch
        _produce(rest, "ev", range(100, 200))
        assert _read(consumer, 100) == [str(i) for i in range(100, 200)]  # no gap, no repeat
    finally:
        consumer.close()
    after = "\n".join(log.lines[seen:])
    new_addr = c.brokers[new.leader].address
    assert f"{new_addr}/{new.leader}: Sent OffsetForLeaderEpochRequest (v2" in after
    assert f"offset and epoch validation succeeded: broker end offset 100 (offset leader epoch {view.leader_epoch})" \
        in after


def test_consumer_detects_truncation_after_an_unclean_election(cluster_factory):
    c = cluster_factory(2, overrides={"zookeeper.session.timeout.ms": "4000", "replica.lag.time.max.ms": "2000"})
    create_topic(c.bootstrap, "tr", partitions=1, rf=2, configs={"unclean.leader.election.enable": "true"})
    view = wait_for(lambda: (v := partitions(c.bootstrap, "tr")[0]) and len(v.isr) == 2 and v, 30, "full ISR")
    leader, follower = view.leader, next(r for r in view.replicas if r != view.leader)
    _produce(c.bootstrap, "tr", range(50))
    wait_for(lambda: (c.brokers[follower].data_dir / "logs" / "tr-0").exists(), 10, "the follower's log")
    time.sleep(1)  # the follower fetches the first 50
    c.brokers[follower].signal(signal.SIGSTOP)
    try:
        wait_for(lambda: partitions(c.brokers[leader].address, "tr")[0].isr == (leader,), 30, "ISR shrink")
        _produce(c.brokers[leader].address, "tr", range(50, 100))  # only on the leader
        consumer, log = _consumer(c.bootstrap, "tr-unclean")
        consumer.assign([confluent_kafka.TopicPartition("tr", 0, 0)])
        assert _read(consumer, 100) == [str(i) for i in range(100)]
        seen = len(log.lines)
        c.brokers[leader].kill()
    finally:
        c.brokers[follower].signal(signal.SIGCONT)
    try:
        rest = c.brokers[follower].address
        wait_for(lambda: partitions(rest, "tr")[0].leader == follower, 30, "the unclean election")
        _produce(rest, "tr", [f"new{i}" for i in range(10)])
        # Offsets 50-99 are gone; the consumer learns that from the new leader and reads the new records.
        got = _read(consumer, 10)
        assert got == [f"new{i}" for i in range(10)], "\n".join(log.lines[-30:])
    finally:
        consumer.close()
    after = "\n".join(log.lines[seen:])
    assert "Sent OffsetForLeaderEpochRequest (v2" in after
    # the new leader answered "epoch 0 ends at 50": the consumer moved back to 50, then read the new records
    assert "Partition tr [0] start fetching at offset 50 (leader epoch 0)" in after
