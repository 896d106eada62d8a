"""Stock clients consuming with a group id against real pylog brokers: every record arrives, offsets are kept.

Each client runs with its defaults; the tests set only what a user would (group id, where to start
without a committed offset, and the assignment strategy where the test is about it).
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from support.clients import create_topic, kcat, wait_for
from support.groups import GROUPS, committed, describe, poll_values, produce

pytestmark = pytest.mark.integration

def test_confluent_kafka_group_gets_every_record_and_resumes_from_the_commit(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "ckg", partitions=3)
    produce(c.bootstrap, "ckg", [f"a{i}" for i in range(90)], 3)
    conf = {"bootstrap.servers": c.bootstrap, "group.id": "ckg-group", "auto.offset.reset": "earliest"}
    first = ck.Consumer(conf)
    first.subscribe(["ckg"])
    assert sorted(poll_values(first, 90)) == sorted(f"a{i}" for i in range(90))
    first.close()  # commits what was consumed (enable.auto.commit is on by default)
    assert committed(c.bootstrap, "ckg-group") == {("ckg", p): 30 for p in range(3)}
    produce(c.bootstrap, "ckg", [f"b{i}" for i in range(30)], 3)
    second = ck.Consumer(conf)
    second.subscribe(["ckg"])
    try:
        assert sorted(poll_values(second, 30)) == sorted(f"b{i}" for i in range(30))
        assert second.poll(1.0) is None  # nothing consumed twice
    finally:
        second.close()


def test_kcat_balanced_consumer(cluster_factory):
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "kcg", partitions=2)
    produce(c.bootstrap, "kcg", [f"v{i}" for i in range(40)], 2)
    out = kcat(c.bootstrap, "-G", "kcat-group", "-o", "beginning", "-e", "-f", "%s\n", "kcg").stdout.split()
    assert sorted(out) == sorted(f"v{i}" for i in range(40))
    assert committed(c.bootstrap, "kcat-group") == {("kcg", 0): 20, ("kcg", 1): 20}


def test_kafka_python_group_consumer(cluster_factory):
    kafka = pytest.importorskip("kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "kpg", partitions=2)
    produce(c.bootstrap, "kpg", [f"k{i}" for i in range(50)], 2)
    cons = kafka.KafkaConsumer("kpg", bootstrap_servers=c.bootstrap, group_id="kp-group",
                               auto_offset_reset="earliest", consumer_timeout_ms=30000)
    got = []
    for m in cons:
        got.append(m.value.decode())
        if len(got) == 50:
            break
    cons.close()  # auto-commit on close
    assert sorted(got) == sorted(f"k{i}" for i in range(50))
    assert committed(c.bootstrap, "kp-group") == {("kpg", 0): 25, ("kpg", 1): 25}


def test_aiokafka_group_consumer(cluster_factory):
    aiokafka = pytest.importorskip("aiokafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "aig", partitions=2)
    produce(c.bootstrap, "aig", [f"x{i}" for i in range(40)], 2)

    async def run() -> list[str]:
        cons = aiokafka.AIOKafkaConsumer("aig", bootstrap_servers=c.bootstrap, group_id="aio-group",
                                         auto_offset_reset="earliest")
        await cons.start()
        got: list[str] = []
        try:
            deadline = time.monotonic() + 60
            while len(got) < 40 and time.monotonic() < deadline:
                batch = await cons.getmany(timeout_ms=500)
                got += [m.value.decode() for msgs in batch.values() for m in msgs]
            await cons.commit()
        finally:
            await cons.stop()
        return got

    assert sorted(asyncio.run(run())) == sorted(f"x{i}" for i in range(40))
    assert committed(c.bootstrap, "aio-group") == {("aig", 0): 20, ("aig", 1): 20}


def _round_robin(members: dict[str, set[str]], partitions: dict[str, int]) -> dict[str, set[tuple[str, int]]]:
    """Kafka's RoundRobinAssignor: partitions in topic order dealt over members sorted by id, skipping
    members that do not subscribe to the partition's topic."""
    order = sorted(members)
    out: dict[str, set[tuple[str, int]]] = {m: set() for m in order}
    i = 0
    for topic in sorted(partitions):
        for p in range(partitions[topic]):
            while topic not in members[order[i % len(order)]]:
                i += 1
            out[order[i % len(order)]].add((topic, p))
            i += 1
    return out


def _stable_assignment(bootstrap: str, group: str, n_members: int, consumers, timeout: float = 60):
    """Poll the consumers until the group is Stable with every member assigned; returns the description."""
    def ready():
        for cons in consumers:
            cons.poll(0.1)
        d = describe(bootstrap, group)
        return d.state.name == "STABLE" and len(d.members) == n_members and all(
            m.assignment.topic_partitions for m in d.members) and d
    return wait_for(ready, timeout, f"group {group} stable with {n_members} assigned members")


def test_seed_003_round_robin_example(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    sizes = {"T0": 3, "T1": 2, "T2": 4}
    for t, n in sizes.items():
        create_topic(c.bootstrap, t, partitions=n)
    subs = {"C0": ["T0", "T1"], "C1": ["T1", "T2"], "C2": ["T0", "T2"]}
    consumers = {}
    try:
        for name, topics in subs.items():
            cons = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "rr", "client.id": name,
                                "partition.assignment.strategy": "roundrobin"})
            cons.subscribe(topics)
            consumers[name] = cons
        d = _stable_assignment(c.bootstrap, "rr", 3, list(consumers.values()))
        assert d.partition_assignor == "roundrobin"
        got = {m.member_id: {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions} for m in d.members}
        by_client = {m.member_id: m.client_id for m in d.members}
        every = [tp for tps in got.values() for tp in tps]
        assert sorted(every) == sorted((t, p) for t, n in sizes.items() for p in range(n))  # each exactly once
        for member, tps in got.items():
            assert {t for t, _ in tps} <= set(subs[by_client[member]])  # only to a subscriber
        assert got == _round_robin({m: set(subs[by_client[m]]) for m in got}, sizes)
    finally:
        for cons in consumers.values():
            cons.close()


def test_range_example_with_confluent_kafka_and_kafka_python_in_one_group(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    kafka = pytest.importorskip("kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "R0", partitions=3)
    create_topic(c.bootstrap, "R1", partitions=2)
    stop = threading.Event()
    kp = kafka.KafkaConsumer(bootstrap_servers=c.bootstrap, group_id="range-g", client_id="kafka-python")
    kp.subscribe(["R0", "R1"])

    def poll_kp():
        while not stop.is_set():
            kp.poll(timeout_ms=200)
    t = threading.Thread(target=poll_kp, daemon=True)
    t.start()
    cons = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "range-g", "client.id": "librdkafka"})
    try:
        cons.subscribe(["R0", "R1"])
        d = _stable_assignment(c.bootstrap, "range-g", 2, [cons])
        assert d.partition_assignor == "range"  # both clients' default lists start with range
        first, second = sorted(d.members, key=lambda m: m.member_id)
        assert {(tp.topic, tp.partition) for tp in first.assignment.topic_partitions} == {
            ("R0", 0), ("R0", 1), ("R1", 0)}
        assert {(tp.topic, tp.partition) for tp in second.assignment.topic_partitions} == {("R0", 2), ("R1", 1)}
        assert {first.client_id, second.client_id} == {"kafka-python", "librdkafka"}
    finally:
        stop.set()
        t.join(10)
        kp.close()
        cons.close()
