"""The `pylog` format and Kafka transactions: read_committed by default in the batch reader and the stream
source (aborted records hidden, read_uncommitted shows them), and the exactly-once sink."""
from __future__ import annotations

import pytest

from support.clients import create_topic
from support.spark import pylog_session
from support.txn import TXN, read_all

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="module")
def spark():
    # local[2, 4]: a failed task is retried (up to 4 attempts), as on a cluster; plain local[2] never retries.
    with pylog_session("local[2, 4]", "pylog-txn-tests") as session:
        yield session


def _transactions(bootstrap: str, topic: str) -> None:
    """Transactions over two partitions: c0..c4 committed, a0..a4 aborted, c5..c9 committed."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "spark-isolation"})
    p.init_transactions(60)
    for kind, rng, end in (("c", range(5), p.commit_transaction), ("a", range(5), p.abort_transaction),
                           ("c", range(5, 10), p.commit_transaction)):
        p.begin_transaction()
        for i in rng:
            p.produce(topic, value=b"%s%d" % (kind.encode(), i), partition=i % 2)
        p.flush(30)  # in the log before the abort, so read_uncommitted sees them
        end(60)


def _read(spark, bootstrap: str, **options) -> list[bytes]:
    r = spark.read.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", "txn")
    for k, v in options.items():
        r = r.option(k, v)
    return sorted(row.value for row in r.load().collect())


def test_read_committed_by_default_hides_aborted_records(cluster_factory, spark, tmp_path):
    c = cluster_factory(1, overrides=TXN)
    create_topic(c.bootstrap, "txn", partitions=2)
    _transactions(c.bootstrap, "txn")
    committed = sorted(b"c%d" % i for i in range(10))
    everything = sorted(committed + [b"a%d" % i for i in range(5)])
    assert _read(spark, c.bootstrap) == committed
    assert _read(spark, c.bootstrap, **{"isolation.level": "read_uncommitted"}) == everything
    for name, options, expected in (("committed", {}, committed),
                                    ("uncommitted", {"isolation.level": "read_uncommitted"}, everything)):
        df = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", c.bootstrap)
              .option("subscribe", "txn").option("startingOffsets", "earliest").options(**options).load())
        q = (df.writeStream.format("memory").queryName(name).trigger(availableNow=True)
             .option("checkpointLocation", str(tmp_path / name)).start())
        try:
            assert q.awaitTermination(120), "the stream did not finish"
        finally:
            q.stop()
        assert sorted(r.value for r in spark.sql(f"SELECT value FROM {name}").collect()) == expected


def _copy(spark, bootstrap: str, checkpoint) -> list[int]:
    """Copy `in` to `out` (value upper-cased) until caught up; the first attempt of the task holding record-150
    fails halfway through its write. Returns the input rows of each batch that ran."""
    from pyspark.sql.functions import udf

    @udf("binary")
    def shout(value):
        from pyspark import TaskContext
        if value == b"record-150" and TaskContext.get().attemptNumber() == 0:
            raise RuntimeError("injected task failure")
        return value.upper()

    src = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", "in")
           .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "100").load())
    q = (src.select("key", shout("value").alias("value")).writeStream.format("pylog")
         .option("kafka.bootstrap.servers", bootstrap).option("topic", "out")
         .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(120), "the copy did not finish"
    finally:
        q.stop()
    return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]


def test_exactly_once_through_a_failed_task_and_a_replayed_batch(cluster_factory, spark, tmp_path):
    from confluent_kafka import Producer
    c = cluster_factory(1, overrides=TXN)
    create_topic(c.bootstrap, "in", partitions=3)
    create_topic(c.bootstrap, "out", partitions=2)
    p = Producer({"bootstrap.servers": c.bootstrap})
    for i in range(300):
        p.produce("in", key=b"%d" % i, value=b"record-%d" % i, partition=i % 3)
    assert p.flush(30) == 0
    checkpoint = tmp_path / "ckpt"
    assert sum(_copy(spark, c.bootstrap, checkpoint)) == 300
    # The driver dies after the last batch's tasks committed, before Spark logged the batch as done: forget the
    # batch's commit entry, and the restarted query runs that batch id again over the same offsets.
    last = max((checkpoint / "commits").glob("[0-9]*"), key=lambda f: int(f.name))
    last.unlink()
    (checkpoint / "commits" / f".{last.name}.crc").unlink(missing_ok=True)
    replayed = _copy(spark, c.bootstrap, checkpoint)
    assert replayed and sum(replayed) > 0, "the restarted query did not replay the batch"
    expected = sorted(b"RECORD-%d" % i for i in range(300))
    assert sorted(read_all(c.bootstrap, {"out": 2}, "read_committed", 300)) == expected
