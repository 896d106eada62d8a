"""The pylog format on a real Spark standalone cluster (Master + Worker from PySpark's spark-class, loopback)."""
from __future__ import annotations

import pytest

from support.clients import create_topic
from support.spark import TEST_JVM_OPTS, assert_numbered_copy, copy_stream, produce_numbered, standalone_cluster

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_stream_copy_runs_on_standalone_executors(cluster, tmp_path):
    import pylog.spark
    from pylog.spark.job import spark_session
    create_topic(cluster.bootstrap, "in", partitions=3)
    create_topic(cluster.bootstrap, "out", partitions=3)
    produce_numbered(cluster.bootstrap, "in", 300, 3)
    with standalone_cluster(tmp_path / "spark") as master:
        spark = spark_session(master, app_name="pylog-standalone-test", conf={
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": "1g", "spark.cores.max": "2", "spark.executor.extraJavaOptions": TEST_JVM_OPTS})
        try:
            assert spark.sparkContext.master == master
            pylog.spark.register(spark)
            copy_stream(spark, cluster.bootstrap, "in", "out", str(tmp_path / "ckpt"))
            executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
        finally:
            spark.stop()
    assert executors >= 2  # the driver's block manager and at least one executor on the worker
    assert_numbered_copy(cluster.bootstrap, "out", 300, 3)
