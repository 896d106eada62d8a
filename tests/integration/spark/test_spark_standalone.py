"""The pylog format on a real Spark standalone cluster (Master + Worker from PySpark's spark-class, loopback)."""
from __future__ import annotations

import pytest

from support.clients import create_topic
from support.spark import TEST_JVM_OPTS, consume_all, standalone_cluster

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_stream_copy_runs_on_standalone_executors(cluster, tmp_path):
    import pylog.spark
    from confluent_kafka import Producer
    from pylog.spark.job import spark_session
    create_topic(cluster.bootstrap, "in", partitions=3)
    create_topic(cluster.bootstrap, "out", partitions=3)
    p = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(300):
        p.produce("in", key=b"%d" % i, value=b"r%d" % i, partition=i % 3)
    assert p.flush(30) == 0
    with standalone_cluster(tmp_path / "spark") as master:
        spark = spark_session(master, app_name="pylog-standalone-test", conf={
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": "1g", "spark.cores.max": "2", "spark.executor.extraJavaOptions": TEST_JVM_OPTS})
        try:
            assert spark.sparkContext.master == master
            pylog.spark.register(spark)
            src = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
                   .option("subscribe", "in").option("startingOffsets", "earliest").load())
            q = (src.selectExpr("key", "value", "partition").writeStream.format("pylog")
                 .option("kafka.bootstrap.servers", cluster.bootstrap).option("topic", "out")
                 .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
            try:
                assert q.awaitTermination(300), "the copy did not finish"
            finally:
                q.stop()
            executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
        finally:
            spark.stop()
    assert executors >= 2  # the driver's block manager and at least one executor on the worker
    got = consume_all(cluster.bootstrap, "out", 300)
    assert sorted((m.partition(), m.key(), m.value()) for m in got) == \
        sorted((i % 3, b"%d" % i, b"r%d" % i) for i in range(300))
