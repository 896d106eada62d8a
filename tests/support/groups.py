"""Helpers for consumer-group integration tests: producing test data and asking the group what it holds."""

from __future__ import annotations

import time

import pytest

# A broker setting (not a client default): fewer offsets partitions make the first FindCoordinator quicker.
GROUPS = {"offsets.topic.num.partitions": "3"}


def produce(bootstrap: str, topic: str, values: list[str], partitions: int = 1) -> None:
    """Write values round-robin over partitions with confluent-kafka (acks=all by default)."""
    ck = pytest.importorskip("confluent_kafka")
    p = ck.Producer({"bootstrap.servers": bootstrap})
    for i, v in enumerate(values):
        p.produce(topic, value=v.encode(), partition=i % partitions)
    assert p.flush(30) == 0


def poll_values(consumer, n: int, timeout: float = 60) -> list[str]:
    """Poll a confluent-kafka consumer until n records arrived."""
    out: list[str] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is None:
            continue
        assert m.error() is None, m.error()
        out.append(m.value().decode())
    assert len(out) == n, f"got {len(out)} of {n} records"
    return out


def describe(bootstrap: str, group: str):
    """DescribeGroups through confluent-kafka's AdminClient."""
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future completes
    return admin.describe_consumer_groups([group])[group].result(30)


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    """OffsetFetch (all partitions) through confluent-kafka's AdminClient."""
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future completes
    res = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {(tp.topic, tp.partition): tp.offset for tp in res.topic_partitions}


def run_group_chaos(cfg, base_dir, zk_connect: str, fault_kinds: list[str]):
    """One bounded group chaos run (pylog.chaos.groups): it must pass with exactly the given fault kinds."""
    from pylog.chaos.groups import run_groups

    report = run_groups(cfg, base_dir, zk_connect=zk_connect)
    print(report.text())
    assert report.ok, report.text()
    assert sorted(f.split()[1] for f in report.faults) == fault_kinds, report.faults
    return report


def committed_group(bootstrap: str, topic: str, group: str, n: int):
    """A confluent-kafka group member that read `n` records of `topic` and committed them synchronously; the
    caller closes it (keep it open while the group must have a member)."""
    import confluent_kafka as ck
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                            "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        poll_values(consumer, n)
        consumer.commit(asynchronous=False)
    except BaseException:
        consumer.close()
        raise
    return consumer
