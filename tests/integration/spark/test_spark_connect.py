"""The pylog format and the planner over Spark Connect (`sc://`): PySpark's own start-connect-server.sh (its
server jar ships in the pyspark wheel) on loopback, a Connect client session, Python data sources registered
through `spark.dataSource.register` like on a classic session."""
from __future__ import annotations

import pytest

from support.clients import create_topic
from support.spark import assert_numbered_copy, connect_server, copy_stream, produce_numbered

pytestmark = [pytest.mark.slow, pytest.mark.integration]
# The Connect client's own dependencies (setup.cfg's dev extras: pyspark[connect]'s grpcio, grpcio-status,
# googleapis-common-protos, zstandard).
pytest.importorskip("grpc_status", reason="Spark Connect's client needs grpcio-status (scripts/setup installs it)")


def test_stream_copy_and_plan_over_spark_connect(cluster, tmp_path):
    from pylog.planner.plan import plan_reassignment
    from pylog.planner.synthetic import synthetic_snapshot
    from pylog.spark.datasource import PylogDataSource
    from pylog.spark.job import plan_with_spark, spark_session
    create_topic(cluster.bootstrap, "in", partitions=2)
    create_topic(cluster.bootstrap, "out", partitions=2)
    produce_numbered(cluster.bootstrap, "in", 100, 2)
    with connect_server(tmp_path / "connect") as url:
        spark = spark_session(url, app_name="pylog-connect-test")
        try:
            assert type(spark).__module__ == "pyspark.sql.connect.session"
            spark.dataSource.register(PylogDataSource)
            batch = (spark.read.format("pylog").option("kafka.bootstrap.servers", cluster.bootstrap)
                     .option("subscribe", "in").load())
            assert batch.count() == 100
            copy_stream(spark, cluster.bootstrap, "in", "out", str(tmp_path / "ckpt"))
            snap = synthetic_snapshot(600, 6, rf=2, n_racks=2, seed=5)
            targets = [0, 1, 2, 3, 4, 5, 6, 7]
            racks = {6: "r0", 7: "r1"}
            on_connect = plan_with_spark(spark, snap, None, targets, broker_racks=racks)
        finally:
            spark.stop()
    assert_numbered_copy(cluster.bootstrap, "out", 100, 2)
    pure = plan_reassignment(snap, None, targets, broker_racks=racks)
    assert on_connect.proposed == pure.proposed and on_connect.report.replicas_moved == pure.report.replicas_moved > 0
