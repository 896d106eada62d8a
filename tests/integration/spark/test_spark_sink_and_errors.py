"""`write` / `writeStream.format("pylog")` read back by confluent-kafka; bad options and lost data get clear errors."""
from __future__ import annotations

import pytest

from support.clients import create_topic, wait_for
from support.spark import consume_all, pylog_session

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="module")
def spark():
    with pylog_session("local[2]", "pylog-sink-tests") as session:
        yield session


def reader(spark, bootstrap: str, **options):
    r = spark.read.format("pylog").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def test_batch_write_with_key_value_headers_partition_columns(cluster, spark):
    create_topic(cluster.bootstrap, "out", partitions=3)
    rows = [(f"k{i}", f"v{i}".encode(), i % 3, [("h", f"{i}".encode())]) for i in range(30)]
    df = spark.createDataFrame(rows, "key string, value binary, partition int, "
                                     "headers array<struct<key: string, value: binary>>")
    df.write.format("pylog").mode("append").option("kafka.bootstrap.servers", cluster.bootstrap) \
        .option("topic", "out").save()
    got = consume_all(cluster.bootstrap, "out", 30)
    assert sorted((m.key(), m.value(), m.partition(), m.headers()) for m in got) == \
        sorted((f"k{i}".encode(), f"v{i}".encode(), i % 3, [("h", f"{i}".encode())]) for i in range(30))


def test_topic_column_routes_rows_and_keys_pick_partitions(cluster, spark):
    create_topic(cluster.bootstrap, "red", partitions=4)
    create_topic(cluster.bootstrap, "blue", partitions=1)
    df = spark.createDataFrame([("red" if i % 2 else "blue", f"key{i % 5}", f"{i}") for i in range(40)],
                               "topic string, key string, value string")
    df.write.format("pylog").mode("append").option("kafka.bootstrap.servers", cluster.bootstrap).save()
    red, blue = consume_all(cluster.bootstrap, "red", 20), consume_all(cluster.bootstrap, "blue", 20)
    assert sorted(int(m.value()) for m in red) == list(range(1, 40, 2))
    assert sorted(int(m.value()) for m in blue) == list(range(0, 40, 2))
    # The producer's key hash partitioner: one key, one partition.
    by_key: dict[bytes, set[int]] = {}
    for m in red:
        by_key.setdefault(m.key(), set()).add(m.partition())
    assert all(len(p) == 1 for p in by_key.values()) and len(set().union(*by_key.values())) > 1


def test_stream_copies_a_topic_to_another(cluster, spark, tmp_path):
    from confluent_kafka import Producer
    create_topic(cluster.bootstrap, "src", partitions=2)
    create_topic(cluster.bootstrap, "dst", partitions=2)
    p = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(200):
        p.produce("src", key=b"%d" % i, value=b"record-%d" % i)
    assert p.flush(30) == 0
    src = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
           .option("subscribe", "src").option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "80")
           .load())
    q = (src.selectExpr("key", "upper(cast(value as string)) AS value").writeStream.format("pylog")
         .option("kafka.bootstrap.servers", cluster.bootstrap).option("topic", "dst")
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(180), "the copy did not finish"
    finally:
        q.stop()
    got = consume_all(cluster.bootstrap, "dst", 200)
    assert sorted((m.key(), m.value()) for m in got) == sorted((b"%d" % i, b"RECORD-%d" % i) for i in range(200))


def _error_text(action) -> str:
    with pytest.raises(Exception) as info:
        action()
    return str(info.value)


def test_bad_options_get_one_clear_error(cluster, spark, tmp_path):
    create_topic(cluster.bootstrap, "there", partitions=1)
    no_bootstrap = _error_text(lambda: spark.readStream.format("pylog").option("subscribe", "there").load())
    assert 'pylog data source: option "kafka.bootstrap.servers" is required' in no_bootstrap
    bad_json = _error_text(lambda: reader(spark, cluster.bootstrap, subscribe="there",
                                          startingOffsets='{"there": {"0": 1').collect())
    assert 'pylog data source: option "startingOffsets" is not valid JSON' in bad_json
    unknown = _error_text(lambda: reader(spark, cluster.bootstrap, subscribe="nope").collect())
    assert "pylog data source: topic(s) 'nope' do not exist" in unknown
    stream = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
              .option("subscribe", "nope").load().writeStream.format("memory").queryName("nope")
              .option("checkpointLocation", str(tmp_path / "ckpt")).start())
    try:
        failed = _error_text(lambda: stream.awaitTermination(120))
    finally:
        stream.stop()
    assert "pylog data source: topic(s) 'nope' do not exist" in failed
    df = spark.createDataFrame([("v",)], "value string")
    no_topic = _error_text(lambda: df.write.format("pylog").mode("append")
                           .option("kafka.bootstrap.servers", cluster.bootstrap).save())
    assert "pylog data source: no topic" in no_topic
    eos = _error_text(lambda: df.write.format("pylog").mode("append").option("topic", "there")
                      .option("kafka.bootstrap.servers", cluster.bootstrap).option("semantics", "exactly-twice").save())
    assert 'pylog data source: option "semantics" must be "exactly-once" or "at-least-once"' in eos


def test_data_deleted_by_retention_is_reported_per_fail_on_data_loss(cluster_factory, spark):
    c = cluster_factory(1, overrides={"log.retention.check.interval.ms": "300"})
    create_topic(c.bootstrap, "short", configs={"segment.bytes": "2000", "retention.bytes": "3000"})
    from confluent_kafka import Consumer, Producer, TopicPartition
    p = Producer({"bootstrap.servers": c.bootstrap, "linger.ms": 0})
    for i in range(100):
        p.produce("short", value=b"%03d" % i + b"x" * 100)
        p.flush(30)  # one batch per record, so that segments roll
    watcher = Consumer({"bootstrap.servers": c.bootstrap, "group.id": "unused"})
    try:
        low = wait_for(lambda: watcher.get_watermark_offsets(TopicPartition("short", 0), 10)[0], 60,
                       "retention to delete the first segments")
    finally:
        watcher.close()
    lost = _error_text(lambda: reader(spark, c.bootstrap, subscribe="short",
                                      startingOffsets='{"short": {"0": 0}}').collect())
    assert "pylog data source: offsets 0.." in lost and "were deleted" in lost and "failOnDataLoss" in lost
    rows = reader(spark, c.bootstrap, subscribe="short", startingOffsets='{"short": {"0": 0}}',
                  failOnDataLoss="false").collect()
    offsets = sorted(r.offset for r in rows)
    assert offsets[0] >= low and offsets == list(range(offsets[0], 100))
