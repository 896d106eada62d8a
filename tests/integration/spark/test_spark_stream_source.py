"""`spark.readStream.format("pylog")` against real brokers on a local[2] session: Spark's Kafka-source behaviour."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from support.clients import create_topic, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.integration]

KAFKA_SOURCE_COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


@pytest.fixture(scope="module")
def spark():
    import pylog.spark
    from pylog.spark.job import spark_session
    session = spark_session("local[2]", app_name="pylog-stream-tests")
    # Progress without data tells a test that a trigger ran (and so that startingOffsets=latest was resolved).
    session.conf.set("spark.sql.streaming.noDataProgressEventInterval", "200")
    pylog.spark.register(session)
    yield session
    for q in session.streams.active:
        q.stop()
    session.stop()


def produce(bootstrap: str, topic: str, records: list[tuple[int, bytes, bytes]], headers=None) -> None:
    """(partition, key, value) records through confluent-kafka with its defaults; waits for every ack."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap})
    for part, key, value in records:
        p.produce(topic, value=value, key=key, partition=part, headers=headers)
    assert p.flush(30) == 0


def rows_of(spark, table: str) -> list:
    return spark.sql(f"SELECT * FROM {table}").collect()


def wait_rows(spark, table: str, n: int, timeout: float = 180) -> list:
    return wait_for(lambda: (lambda r: r if len(r) >= n else None)(rows_of(spark, table)), timeout,
                    f"{n} rows in {table}", interval=1.0)


def last_checkpointed_offsets(checkpoint: Path) -> dict:
    """The source offsets of the newest entry of Spark's offset log (its last line is our JSON)."""
    newest = max((checkpoint / "offsets").glob("[0-9]*"), key=lambda f: int(f.name))
    return json.loads(newest.read_text().strip().splitlines()[-1])


def test_stream_from_earliest_rate_limited_and_across_an_added_partition(cluster, spark, tmp_path):
    from confluent_kafka.admin import AdminClient, NewPartitions
    create_topic(cluster.bootstrap, "events", partitions=3)
    produce(cluster.bootstrap, "events", [(i % 3, b"k%d" % i, b"v%d" % i) for i in range(90)])
    df = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
          .option("subscribe", "events").option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", "20").load())
    assert df.columns == KAFKA_SOURCE_COLUMNS
    q = (df.writeStream.format("memory").queryName("early").option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(processingTime="200 milliseconds").start())
    try:
        rows = wait_rows(spark, "early", 90)
        assert sorted((r.partition, r.offset) for r in rows) == [(p, o) for p in range(3) for o in range(30)]
        assert {r.value for r in rows} == {b"v%d" % i for i in range(90)}
        assert all(r.key == b"k" + r.value[1:] and r.topic == "events" and r.timestamp and r.timestampType == 0
                   for r in rows)
        # The memory sink shows a batch's rows before the query posts that batch's progress.
        def batch_sizes() -> list[int]:
            return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
        wait_for(lambda: sum(batch_sizes()) >= 90, 30, "the last batch's progress", interval=0.2)
        sizes = batch_sizes()
        assert sum(sizes) == 90 and max(sizes) <= 20 and len(sizes) >= 5, sizes

        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})  # kept: its futures die with it
        admin.create_partitions([NewPartitions("events", 4)])["events"].result(30)
        wait_for(lambda: _partition_count(cluster.bootstrap, "events") == 4, 30, "the 4th partition")
        produce(cluster.bootstrap, "events", [(3, b"new", b"n%d" % i) for i in range(10)])
        rows = wait_rows(spark, "early", 100)
        assert sorted(r.offset for r in rows if r.partition == 3) == list(range(10))
        assert len(rows) == 100
        wait_for(lambda: last_checkpointed_offsets(tmp_path / "ckpt") == {"events": {"0": 30, "1": 30, "2": 30,
                                                                                     "3": 10}},
                 60, "the checkpoint's per-partition offsets")
    finally:
        q.stop()


def _partition_count(bootstrap: str, topic: str) -> int:
    from confluent_kafka.admin import AdminClient
    return len(AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10).topics[topic].partitions)


def test_stream_from_latest_sees_only_new_records_with_headers(cluster, spark, tmp_path):
    create_topic(cluster.bootstrap, "late", partitions=2)
    produce(cluster.bootstrap, "late", [(i % 2, None, b"old%d" % i) for i in range(10)])
    df = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
          .option("subscribe", "late").option("includeHeaders", "true").load())
    assert df.columns == KAFKA_SOURCE_COLUMNS + ["headers"]
    q = (df.writeStream.format("memory").queryName("late").option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(processingTime="200 milliseconds").start())
    try:
        wait_for(lambda: q.lastProgress is not None, 120, "the first trigger", interval=0.5)
        produce(cluster.bootstrap, "late", [(i % 2, b"k", b"new%d" % i) for i in range(6)],
                headers=[("h1", b"one"), ("h2", b"")])
        rows = wait_rows(spark, "late", 6)
        time.sleep(1)  # old records, had they been read, would be in the same or an earlier batch
        rows = rows_of(spark, "late")
        assert sorted(r.value for r in rows) == sorted(b"new%d" % i for i in range(6))
        assert sorted((r.partition, r.offset) for r in rows) == [(p, o) for p in range(2) for o in range(5, 8)]
        assert all([(h.key, h.value) for h in r.headers] == [("h1", b"one"), ("h2", b"")] for r in rows)
    finally:
        q.stop()


def test_available_now_with_assign_and_specific_offsets_and_min_partitions(cluster, spark, tmp_path):
    create_topic(cluster.bootstrap, "spec", partitions=2)
    produce(cluster.bootstrap, "spec", [(i % 2, None, b"%d" % i) for i in range(40)])
    df = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
          .option("assign", '{"spec": [0, 1]}').option("startingOffsets", '{"spec": {"0": 15, "1": -2}}')
          .option("maxOffsetsPerTrigger", "10").option("minPartitions", "4").load())
    q = (df.writeStream.format("memory").queryName("spec").option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(180), "the AvailableNow query did not finish"
    finally:
        q.stop()
    rows = rows_of(spark, "spec")
    expected = [(0, o) for o in range(15, 20)] + [(1, o) for o in range(20)]
    assert sorted((r.partition, r.offset) for r in rows) == expected
    sizes = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
    assert sum(sizes) == 25 and max(sizes) <= 10, sizes


def _leaders(bootstrap: str, topic: str) -> dict[int, int]:
    from confluent_kafka.admin import AdminClient
    parts = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10).topics[topic].partitions
    return {p: md.leader for p, md in parts.items()}


def test_stream_goes_on_across_a_leader_failover(cluster_factory, spark, tmp_path):
    c = cluster_factory(2)
    create_topic(c.bootstrap, "moving", partitions=2, rf=2)
    produce(c.bootstrap, "moving", [(i % 2, None, b"a%d" % i) for i in range(40)])
    df = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", c.bootstrap)
          .option("subscribe", "moving").option("startingOffsets", "earliest").load())
    q = (df.writeStream.format("memory").queryName("moving").option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(processingTime="200 milliseconds").start())
    try:
        wait_rows(spark, "moving", 40)
        victim = _leaders(c.bootstrap, "moving")[0]
        c.brokers[victim].kill()
        wait_for(lambda: all(leader not in (victim, -1) for leader in _leaders(c.bootstrap, "moving").values()),
                 60, "both partitions led by the surviving broker")
        produce(c.bootstrap, "moving", [(i % 2, None, b"b%d" % i) for i in range(40)])
        rows = wait_rows(spark, "moving", 80)
        time.sleep(1)  # a duplicate would come in the same or the next trigger
        rows = rows_of(spark, "moving")
        assert sorted((r.partition, r.offset) for r in rows) == [(p, o) for p in range(2) for o in range(40)]
        assert q.exception() is None
    finally:
        q.stop()
