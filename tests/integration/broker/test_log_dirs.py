"""Several log.dirs (JBOD) through kafka-python's admin client: placement, DescribeLogDirs, AlterReplicaLogDirs."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import LogDirNotFoundError, NoError

from support.clients import create_topic, wait_for

pytestmark = pytest.mark.integration


def _layout(admin: KafkaAdminClient) -> dict[tuple[str, int, bool], str]:
    """(topic, partition, is_future) -> log dir, from DescribeLogDirs."""
    (broker,) = admin.describe_log_dirs()
    return {(t["name"], p["partition_index"], p["is_future_key"]): d["log_dir"]
            for d in broker["log_dirs"] for t in d["topics"] for p in t["partitions"]}


def _produce(bootstrap: str, topic: str, start: int, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(start, start + n):
        p.produce(topic, value=f"v{i}".encode(), partition=0)
        if i % 20 == 19:
            p.flush(30)
    assert p.flush(30) == 0


def _values(bootstrap: str, topic: str, n: int) -> list[bytes]:
    c = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=10000)
    try:
        c.assign([TopicPartition(topic, 0)])
        out = []
        for m in c:
            out.append(m.value)
            if len(out) == n:
                break
        return out
    finally:
        c.close()


def test_replicas_spread_over_log_dirs_and_move_between_them(cluster_factory, tmp_path):
    d1, d2 = str(tmp_path / "jbod-a"), str(tmp_path / "jbod-b")
    c = cluster_factory(1, overrides={"log.dirs": f"{d1},{d2}"})
    admin = KafkaAdminClient(bootstrap_servers=c.bootstrap, request_timeout_ms=30000)
    try:
        create_topic(c.bootstrap, "spread", partitions=4)
        wait_for(lambda: len([k for k in _layout(admin) if k[0] == "spread"]) == 4, what="4 replicas")
        spread = [d for k, d in _layout(admin).items() if k[0] == "spread"]
        every = list(_layout(admin).values())  # with the broker's own metrics topic
        # Each new replica went to the dir with the fewest: the dirs differ by one at most.
        assert abs(every.count(d1) - every.count(d2)) <= 1 and set(spread) == {d1, d2}

        create_topic(c.bootstrap, "mv", configs={"segment.bytes": "2000"})
        _produce(c.bootstrap, "mv", 0, 300)
        src = _layout(admin)[("mv", 0, False)]
        dst = d2 if src == d1 else d1
        result = admin.alter_replica_log_dirs({("mv", 0, 0): dst, ("spread", 0, 0): str(tmp_path / "nowhere")})
        assert result[("mv", 0, 0)] is NoError and result[("spread", 0, 0)] is LogDirNotFoundError
        _produce(c.bootstrap, "mv", 300, 100)  # writes go on during the move
        wait_for(lambda: (lay := _layout(admin)).get(("mv", 0, False)) == dst and ("mv", 0, True) not in lay,
                 timeout=60, what="replica moved")
        _produce(c.bootstrap, "mv", 400, 10)
        assert _values(c.bootstrap, "mv", 410) == [f"v{i}".encode() for i in range(410)]
        assert [p.name for p in (tmp_path / "jbod-a").iterdir() if p.name.startswith("mv-0")] == \
            (["mv-0"] if dst == d1 else [])
        assert [p.name for p in (tmp_path / "jbod-b").iterdir() if p.name.startswith("mv-0")] == \
            (["mv-0"] if dst == d2 else [])

    finally:
        admin.close()
    c.stop([0])
    c.restart(0)
    admin = KafkaAdminClient(bootstrap_servers=c.bootstrap, request_timeout_ms=30000)
    try:
        assert _layout(admin).get(("mv", 0, False)) == dst
    finally:
        admin.close()
    assert _values(c.bootstrap, "mv", 410)[-1] == b"v409"
