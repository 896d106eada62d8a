"""The rest of Spark's Kafka-connector options on `format("pylog")`, against a real broker on local[2]:
reading by timestamp, the trigger budgets (minOffsetsPerTrigger with maxTriggerDelay, maxBytesPerTrigger), a
query's progress committed to a consumer group (commitOffsetsToGroup), and read_committed ranges that start or
end on transaction markers and aborted transactions."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from support.clients import create_topic, wait_for
from support.spark import pylog_session
from support.txn import TXN

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[3]
T0 = 1_700_000_000_000  # records' own timestamps: minutes apart, so each lookup has one right answer


@pytest.fixture(scope="module")
def spark():
    with pylog_session("local[2]", "pylog-connector-options") as session:
        session.conf.set("spark.sql.streaming.noDataProgressEventInterval", "200")
        yield session


@pytest.fixture
def broker(cluster_factory):
    """One broker that can run transactions (the marker tests) and hold every topic of this module."""
    return cluster_factory(1, overrides=TXN)


def _produce(bootstrap: str, topic: str, records: list[tuple[int, bytes, int | None]]) -> None:
    """(partition, value, timestamp or None) through confluent-kafka with its defaults."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap})
    for part, value, ts in records:
        p.produce(topic, value=value, partition=part, **({"timestamp": ts} if ts is not None else {}))
    assert p.flush(30) == 0


def _batch(spark, bootstrap: str, topic: str, **options) -> list[tuple[int, int, bytes]]:
    r = spark.read.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    return sorted((row.partition, row.offset, row.value) for row in r.options(**options).load().collect())


def _error(action) -> str:
    with pytest.raises(Exception) as info:
        action()
    return str(info.value)


def test_batch_reads_by_timestamp_as_spark_does(broker, spark):
    create_topic(broker.bootstrap, "times", partitions=2)
    # partition p, record i: timestamp T0 + i minutes (i = 0..4), so T0 + 2.5 min falls between records 2 and 3.
    _produce(broker.bootstrap, "times", [(p, b"p%d-%d" % (p, i), T0 + i * 60_000) for p in (0, 1) for i in range(5)])
    mid = str(T0 + 150_000)
    got = _batch(spark, broker.bootstrap, "times", startingTimestamp=mid)
    assert got == [(p, i, b"p%d-%d" % (p, i)) for p in (0, 1) for i in (3, 4)]
    # startingTimestamp wins over startingOffsetsByTimestamp, which wins over startingOffsets.
    assert _batch(spark, broker.bootstrap, "times", startingTimestamp=mid, startingOffsets="earliest",
                  startingOffsetsByTimestamp=json.dumps({"times": {"0": T0, "1": T0}})) == got
    per = _batch(spark, broker.bootstrap, "times",
                 startingOffsetsByTimestamp=json.dumps({"times": {"0": T0 + 240_000, "1": T0}}),
                 endingTimestamp=str(T0 + 120_000))
    # An ending timestamp ends before the first record at or after it; p0 starts at 4 and ends at 2: empty.
    assert per == [(1, 0, b"p1-0"), (1, 1, b"p1-1")]
    assert _batch(spark, broker.bootstrap, "times", endingOffsetsByTimestamp=json.dumps(
        {"times": {"0": T0 + 60_000, "1": T0 + 10**9}})) == [(0, 0, b"p0-0")] + [(1, i, b"p1-%d" % i) for i in range(5)]
    late = str(T0 + 10**9)  # after every record
    assert "startingOffsetsByTimestampStrategy" in _error(
        lambda: _batch(spark, broker.bootstrap, "times", startingTimestamp=late))
    assert _batch(spark, broker.bootstrap, "times", startingTimestamp=late,
                  startingOffsetsByTimestampStrategy="latest") == []
    assert "must name every subscribed partition" in _error(lambda: _batch(
        spark, broker.bootstrap, "times", startingOffsetsByTimestamp=json.dumps({"times": {"0": T0}})))


def _stream(spark, bootstrap: str, topic: str, name: str, checkpoint: Path, **options):
    df = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
          .option("startingOffsets", "earliest").options(**options).load())
    return (df.writeStream.format("memory").queryName(name).option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="200 milliseconds").start())


def _batches(q) -> list[dict]:
    return [p for p in q.recentProgress if p["numInputRows"]]


def test_min_offsets_per_trigger_waits_at_most_max_trigger_delay(broker, spark, tmp_path):
    create_topic(broker.bootstrap, "trickle", partitions=1)
    _produce(broker.bootstrap, "trickle", [(0, b"first-%d" % i, None) for i in range(3)])
    q = _stream(spark, broker.bootstrap, "trickle", "trickle", tmp_path / "ckpt", minOffsetsPerTrigger="1000",
                maxTriggerDelay="4s")
    try:
        # The first trigger is never delayed (Spark's lastTriggerMillis starts at 0).
        wait_for(lambda: len(_batches(q)) == 1, 90, "the first batch")
        _produce(broker.bootstrap, "trickle", [(0, b"second-%d" % i, None) for i in range(3)])
        produced = time.monotonic()
        wait_for(lambda: len(_batches(q)) == 2, 90, "the delayed second batch", interval=0.1)
        waited = time.monotonic() - produced
        # 3 < 1000 offsets: the batch waited for maxTriggerDelay (4 s after the first batch, minus the produce).
        assert waited > 2.0, f"the second batch came {waited:.1f} s after its records, before maxTriggerDelay"
        assert [b["numInputRows"] for b in _batches(q)] == [3, 3]
    finally:
        q.stop()


def test_max_bytes_per_trigger_bounds_each_batch(broker, spark, tmp_path):
    create_topic(broker.bootstrap, "bulky", partitions=2)
    _produce(broker.bootstrap, "bulky", [(i % 2, b"%04d" % i + b"x" * 1000, None) for i in range(120)])
    q = _stream(spark, broker.bootstrap, "bulky", "bulky", tmp_path / "ckpt", maxBytesPerTrigger="20000",
                maxOffsetsPerTrigger="100")
    try:
        wait_for(lambda: sum(b["numInputRows"] for b in _batches(q)) >= 120, 120, "all 120 records")
        sizes = [b["numInputRows"] for b in _batches(q)]
        # ~1 KB per record on disk: 20,000 bytes is about 18 records a batch (batch headers share the rest).
        assert sum(sizes) == 120 and max(sizes) <= 24 and len(sizes) >= 5, sizes
        values = sorted(r.value[:4] for r in spark.sql("SELECT value FROM bulky").collect())
        assert values == [b"%04d" % i for i in range(120)]
    finally:
        q.stop()


def _describe_group(bootstrap: str, group: str) -> list[dict]:
    out = subprocess.run([str(ROOT / "bin" / "pylog-consumer-groups.sh"), "--bootstrap-server", bootstrap,
                          "--describe", "--group", group, "--output", "json"], capture_output=True, text=True,
                         timeout=60)
    if out.returncode != 0:  # no such group yet
        return []
    return [row for g in json.loads(out.stdout)["groups"] for row in g["rows"] if row["topic"] is not None]


def test_commit_offsets_to_group_shows_the_query_to_lag_tools(broker, spark, tmp_path):
    create_topic(broker.bootstrap, "watched", partitions=2)
    _produce(broker.bootstrap, "watched", [(i % 2, b"w%d" % i, None) for i in range(40)])
    q = _stream(spark, broker.bootstrap, "watched", "watched", tmp_path / "ckpt", maxOffsetsPerTrigger="10",
                commitOffsetsToGroup="spark-watched")

    def committed() -> dict | None:
        if q.exception() is not None:
            raise AssertionError(f"the query failed: {q.exception()}")
        rows = _describe_group(broker.bootstrap, "spark-watched")
        found = {(r["topic"], r["partition"]): (r["current_offset"], r["lag"]) for r in rows}
        if found != {("watched", 0): (20, 0), ("watched", 1): (20, 0)}:
            raise AssertionError(f"group spark-watched now: {found}")
        return found
    try:
        # A tool run every 2 s, not every few ms: each is a Python start-up beside Spark's own workers.
        wait_for(committed, 120, "the query's offsets committed to group spark-watched with no lag", interval=2.0)
        _produce(broker.bootstrap, "watched", [(0, b"more%d" % i, None) for i in range(5)])
        wait_for(lambda: {(r["partition"], r["current_offset"]) for r in _describe_group(
            broker.bootstrap, "spark-watched")} == {(0, 25), (1, 20)}, 120, "the next batch's commit", interval=2.0)
    finally:
        q.stop()


def _marker_ranges(bootstrap: str, topic: str) -> None:
    """p0: a committed transaction (offsets 0-2, marker 3), an aborted one (4-6, marker 7). p1: plain records."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "spark-markers"})
    p.init_transactions(60)
    for values, end in (([b"c0", b"c1", b"c2"], p.commit_transaction), ([b"a0", b"a1", b"a2"], p.abort_transaction)):
        p.begin_transaction()
        for v in values:
            p.produce(topic, value=v, partition=0)
        p.flush(30)
        end(60)
    _produce(bootstrap, topic, [(1, b"plain%d" % i, None) for i in range(3)])


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_ranges_ending_on_markers_and_aborted_transactions_read_without_false_loss(broker, spark,
                                                                                   fail_on_data_loss):
    topic = f"marked-{fail_on_data_loss}"
    create_topic(broker.bootstrap, topic, partitions=2)
    _marker_ranges(broker.bootstrap, topic)
    cases = [
        ({"0": 4, "1": 3}, [b"c0", b"c1", b"c2"]),   # ends right after the commit marker
        ({"0": 3, "1": 3}, [b"c0", b"c1", b"c2"]),   # ends on the commit marker
        ({"0": 7, "1": 3}, [b"c0", b"c1", b"c2"]),   # ends inside the aborted transaction, on its marker
        ({"0": 8, "1": 3}, [b"c0", b"c1", b"c2"]),   # ends after the abort marker: the high watermark
    ]
    for ending, expected in cases:
        started = time.monotonic()
        got = _batch(spark, broker.bootstrap, topic, failOnDataLoss=fail_on_data_loss,
                     endingOffsets=json.dumps({topic: ending}))
        assert [v for part, _, v in got if part == 0] == expected, ending
        assert [v for part, _, v in got if part == 1] == [b"plain0", b"plain1", b"plain2"]
        assert time.monotonic() - started < 60, f"the read ending at {ending} stalled"
    # A range that starts on the commit marker or inside the aborted transaction holds no committed record.
    for start in ({"0": 3, "1": 0}, {"0": 5, "1": 0}):
        got = _batch(spark, broker.bootstrap, topic, failOnDataLoss=fail_on_data_loss,
                     startingOffsets=json.dumps({topic: start}))
        assert [v for part, _, v in got if part == 0] == [], start


def test_source_reads_with_a_delegation_token(spark, cluster_factory, tmp_path):
    """Spark's way to hand a token to executors, `kafka.sasl.jaas.config` with tokenauth=true: the driver's
    planning and the tasks' reads authenticate as the token's owner (alice, the only one the topic's ACL
    lets read)."""
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                       ResourcePatternType, ResourceType)
    from support import tokens
    c = cluster_factory(1, extra_listeners=tokens.LISTENERS, overrides=tokens.OVERRIDES)
    create_topic(c.bootstrap, "secured", partitions=2)
    _produce(c.bootstrap, "secured", [(p, b"s%d" % p, None) for p in (0, 1)])
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    for f in admin.create_acls([AclBinding(ResourceType.TOPIC, "secured", ResourcePatternType.LITERAL, "User:alice",
                                           "*", AclOperation.READ, AclPermissionType.ALLOW)]).values():
        f.result(30)
    made = tokens.tool(c.bootstrap_on("SASL_PLAINTEXT"), tokens.user_login(tmp_path, "alice"), "--create",
                       "--max-life-time-period", "-1")
    assert made.returncode == 0, made.stderr
    [[token_id, hmac, *_]] = tokens.table_rows(made.stdout)
    secure = {"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "SCRAM-SHA-512",
              "kafka.sasl.jaas.config": tokens.token_jaas(token_id, hmac)}
    assert _batch(spark, c.bootstrap_on("SASL_PLAINTEXT"), "secured", **secure) == [(0, 0, b"s0"), (1, 0, b"s1")]
