"""Classic and consumer-protocol members in one group (KIP-848's online migration, Kafka 4.0's default
`group.consumer.migration.policy=bidirectional`): a rolling upgrade of classic confluent-kafka consumers to
`group.protocol=consumer` and back, and a kafka-python classic member sharing a topic with a consumer-protocol
member. Clients keep their defaults, but for `auto.offset.reset=earliest` (records are produced first)."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from support.clients import create_topic, wait_for
from support.groups import GROUPS, produce

pytestmark = pytest.mark.integration

# Broker settings: KIP-848 sessions and heartbeats short enough for a test, no initial-rebalance delay.
MIXED = {**GROUPS, "group.initial.rebalance.delay.ms": "0", "group.consumer.min.heartbeat.interval.ms": "500",
         "group.consumer.heartbeat.interval.ms": "500"}


def _consumer(bootstrap: str, group: str, protocol: str | None, name: str):
    ck = pytest.importorskip("confluent_kafka")
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": name, "auto.offset.reset": "earliest"}
    if protocol is not None:  # None: the client's default (classic)
        conf["group.protocol"] = protocol
    c = ck.Consumer(conf)
    c.subscribe([TOPIC])
    return c


TOPIC = "mig"


def _poll(consumers: dict, seen: set, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for c in consumers.values():
            m = c.poll(0.05)
            if m is not None and m.error() is None:
                seen.add((m.partition(), m.offset()))


def _until(consumers: dict, seen: set, cond, what: str, timeout: float = 60) -> None:
    wait_for(lambda: _poll(consumers, seen, 0.3) or cond(), timeout, what)


def _split(consumers: dict) -> bool:
    counts = [len(c.assignment()) for c in consumers.values()]
    return sum(counts) == 4 and all(n == 2 for n in counts)


def _group(bootstrap: str, group: str):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return admin.describe_consumer_groups([group])[group].result(30)


def _listed(bootstrap: str, kind) -> list[str]:
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return [g.group_id for g in admin.list_consumer_groups(types={kind}).result(30).valid]


def _cli(bootstrap: str, *args: str) -> list[str]:
    from pylog.cli.consumer_groups import consumer_groups_command
    out = CliRunner().invoke(consumer_groups_command, ["--bootstrap-server", bootstrap, *args])
    assert out.exit_code == 0, out.output
    return out.stdout.splitlines()


def test_rolling_upgrade_to_the_consumer_protocol_and_back(cluster_factory):
    from confluent_kafka import ConsumerGroupType

    c = cluster_factory(1, overrides=MIXED)
    create_topic(c.bootstrap, TOPIC, partitions=4)
    produce(c.bootstrap, TOPIC, [f"a{i}" for i in range(200)], 4)
    seen: set = set()
    group = {n: _consumer(c.bootstrap, "roll", None, n) for n in ("one", "two")}
    try:
        _until(group, seen, lambda: _split(group), "two classic members to share the four partitions")
        assert _group(c.bootstrap, "roll").type == ConsumerGroupType.CLASSIC
        for step, name in enumerate(("one", "two")):  # the upgrade, one restart at a time
            group.pop(name).close()
            produce(c.bootstrap, TOPIC, [f"u{step}-{i}" for i in range(100)], 4)
            group[name] = _consumer(c.bootstrap, "roll", "consumer", name)
            _until(group, seen, lambda: _split(group), f"the group to split again after {name}'s upgrade")
            # From the first consumer-protocol member on, the group is a consumer group (the other still classic).
            assert _group(c.bootstrap, "roll").type == ConsumerGroupType.CONSUMER
        _until(group, seen, lambda: len(seen) == 400, "every record read after the upgrade")
        described = _group(c.bootstrap, "roll")
        assert (described.type, len(described.members)) == (ConsumerGroupType.CONSUMER, 2)
        assert _listed(c.bootstrap, ConsumerGroupType.CONSUMER) == ["roll"]
        assert _listed(c.bootstrap, ConsumerGroupType.CLASSIC) == []
        state = _cli(c.bootstrap, "--describe", "--group", "roll", "--state")[2].split()
        assert state[3:] == ["uniform", "Stable", "2"]

        for step, name in enumerate(("one", "two")):  # the downgrade
            group.pop(name).close()
            produce(c.bootstrap, TOPIC, [f"d{step}-{i}" for i in range(100)], 4)
            group[name] = _consumer(c.bootstrap, "roll", "classic", name)
            _until(group, seen, lambda: _split(group), f"the group to split again after {name}'s downgrade")
        _until(group, seen, lambda: len(seen) == 600, "every record read after the downgrade")
        described = _group(c.bootstrap, "roll")
        assert (described.type, str(described.state), len(described.members)) == \
            (ConsumerGroupType.CLASSIC, "ConsumerGroupState.STABLE", 2)
        assert _listed(c.bootstrap, ConsumerGroupType.CLASSIC) == ["roll"]
        assert _listed(c.bootstrap, ConsumerGroupType.CONSUMER) == []
    finally:
        for cons in group.values():
            cons.close()
    assert seen == {(p, o) for p in range(4) for o in range(150)}


def test_a_kafka_python_member_shares_partitions_with_a_consumer_protocol_member(cluster_factory):
    kafka = pytest.importorskip("kafka")
    from confluent_kafka import ConsumerGroupType

    c = cluster_factory(1, overrides=MIXED)
    create_topic(c.bootstrap, TOPIC, partitions=4)
    produce(c.bootstrap, TOPIC, [f"a{i}" for i in range(100)], 4)
    seen: set = set()
    kp = kafka.KafkaConsumer(TOPIC, bootstrap_servers=c.bootstrap, group_id="mixed", client_id="kafka-python",
                             auto_offset_reset="earliest")
    ck = None
    try:
        def kp_poll():
            for records in kp.poll(timeout_ms=200).values():
                seen.update((r.partition, r.offset) for r in records)
            return len(kp.assignment())
        wait_for(lambda: kp_poll() == 4, 60, "kafka-python to own all four partitions")
        ck = _consumer(c.bootstrap, "mixed", "consumer", "confluent")
        both = {"ck": ck}

        def split():
            _poll(both, seen, 0.2)
            return kp_poll() == 2 and len(ck.assignment()) == 2
        wait_for(split, 60, "a two-two split between the classic and the consumer-protocol member")
        assert not {tp.partition for tp in ck.assignment()} & {tp.partition for tp in kp.assignment()}
        described = _group(c.bootstrap, "mixed")
        assert described.type == ConsumerGroupType.CONSUMER
        assert sorted(m.client_id for m in described.members) == ["confluent", "kafka-python"]
        produce(c.bootstrap, TOPIC, [f"b{i}" for i in range(100)], 4)
        wait_for(lambda: split() and len(seen) == 200, 60, "every record read by the two members")
        ck.close()
        ck = None
        produce(c.bootstrap, TOPIC, [f"c{i}" for i in range(100)], 4)
        wait_for(lambda: kp_poll() == 4 and len(seen) == 300, 60,
                 "kafka-python to own all four partitions again and read the rest")
        assert _group(c.bootstrap, "mixed").type == ConsumerGroupType.CLASSIC
    finally:
        kp.close()
        if ck is not None:
            ck.close()
    assert seen == {(p, o) for p in range(4) for o in range(75)}
