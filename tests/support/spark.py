"""Spark test helpers: reading a topic back with confluent-kafka, a Spark standalone cluster on loopback
(PySpark's own spark-class Master and one Worker), and a Spark Connect server (PySpark's start-connect-server.sh).

The Master and the Worker are the test's own processes, stopped by pid (the Worker's executors with its
process group) even when the test fails. Executors import the pylog of the current PYTHONPATH, like the driver.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from pylog.spark.standalone import free_port, stop_group
from pylog.spark.standalone import standalone_cluster as _standalone
from pylog.zk.testing import wait_until
from support.clients import wait_for

# JVM options for Spark's test JVMs (driver, Master, Worker, executors): short-lived, small jobs, so C1 only
# and the serial collector (see tests/integration/spark/conftest.py).
TEST_JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@contextlib.contextmanager
def pylog_session(master: str, app_name: str) -> Iterator:
    """A SparkSession with `format("pylog")` registered; its streams and itself stopped on exit."""
    import pylog.spark
    from pylog.spark.job import spark_session
    session = spark_session(master, app_name=app_name)
    pylog.spark.register(session)
    try:
        yield session
    finally:
        for q in session.streams.active:
            q.stop()
        session.stop()


def produce_numbered(bootstrap: str, topic: str, n: int, partitions: int) -> None:
    """Records key b"i", value b"ri" for i < n, record i to partition i % partitions (confluent-kafka)."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        p.produce(topic, key=b"%d" % i, value=b"r%d" % i, partition=i % partitions)
    assert p.flush(30) == 0


def assert_numbered_copy(bootstrap: str, topic: str, n: int, partitions: int) -> None:
    """`topic` holds exactly what produce_numbered wrote, each record once, in the same partitions."""
    got = consume_all(bootstrap, topic, n)
    assert sorted((m.partition(), m.key(), m.value()) for m in got) == \
        sorted((i % partitions, b"%d" % i, b"r%d" % i) for i in range(n))


def copy_stream(spark, bootstrap: str, src: str, dst: str, checkpoint: str, timeout: float = 300) -> None:
    """Copy `src` (from earliest, key, value and partition) to `dst` with the exactly-once sink, to its end."""
    q = (spark.readStream.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", src)
         .option("startingOffsets", "earliest").load().selectExpr("key", "value", "partition")
         .writeStream.format("pylog").option("kafka.bootstrap.servers", bootstrap).option("topic", dst)
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(timeout), "the copy did not finish"
    finally:
        q.stop()


def consume_all(bootstrap: str, topic: str, n: int, timeout: float = 60) -> list:
    """Every record of `topic` from the beginning, by a confluent-kafka consumer (stops once it has `n`)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient
    parts = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10).topics[topic].partitions
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
    got = []
    try:
        wait_for(lambda: got.extend(m for m in c.consume(100, 1.0) if not m.error()) or len(got) >= n, timeout,
                 f"{n} records in {topic}")
    finally:
        c.close()
    return got


@contextlib.contextmanager
def standalone_cluster(workdir: Path, cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """Start a Master and a Worker on 127.0.0.1 (pylog.spark.standalone, quick JVMs); yields spark://127.0.0.1:PORT.

    Sessions on it should pass spark.executor.extraJavaOptions=TEST_JVM_OPTS for quick executors."""
    with _standalone(workdir, cores, memory, TEST_JVM_OPTS) as master:
        yield master


@contextlib.contextmanager
def connect_server(workdir: Path, master: str = "local[2]") -> Iterator[str]:
    """Start PySpark's Spark Connect server (sbin/start-connect-server.sh --wait) on 127.0.0.1; yields sc://HOST:PORT.

    Its Python workers (the pylog data source's planning and tasks) run this interpreter with this PYTHONPATH."""
    import pyspark
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(workdir), "SPARK_PID_DIR": str(workdir),
           "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": os.environ.get("PYTHONPATH", os.getcwd())}
    script = Path(pyspark.__file__).parent / "sbin" / "start-connect-server.sh"
    with open(workdir / "connect-server.log", "wb") as log:
        proc = subprocess.Popen([str(script), "--wait", "--master", master, "--conf", "spark.ui.enabled=false",
                                 "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
                                 "--conf", f"spark.connect.grpc.binding.port={port}"],
                                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)

    def listening() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the Spark Connect server exited {proc.returncode}; see {workdir}/connect-server.log")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
        return False
    # A Connect session switches this whole process to Connect mode through these variables (PySpark sets them;
    # only a local-mode server's stop() clears them): restored on exit, so later classic sessions work.
    mode = {name: os.environ.get(name) for name in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    try:
        wait_until(listening, 180, "the Spark Connect server to listen", interval=1.0)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_group(proc)
        for name, value in mode.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
