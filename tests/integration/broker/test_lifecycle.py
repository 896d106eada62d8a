"""Broker start-up and shutdown as an operator sees them: scripts, configs, registration, deletion."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pylog.client.sync import KafkaClient
from pylog.localcluster import ClusterError
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import encode_request
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.testing import free_port
from support.clients import create_topic, kcat, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def _props(tmp_path: Path, zk_connect: str, port: int, **extra: str) -> Path:
    props = {"broker.id": "0", "listeners": f"PLAINTEXT://127.0.0.1:{port}", "log.dirs": str(tmp_path / "logs"),
             "zookeeper.connect": zk_connect, "zookeeper.session.timeout.ms": "4000", **extra}
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_invalid_config_value_is_refused_with_the_key_named(tmp_path, zk_connect):
    cfg = _props(tmp_path, zk_connect, free_port(), **{"num.partitions": "zero"})
    r = subprocess.run([sys.executable, "-m", "pylog.broker.main", str(cfg)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert r.stderr == "Error: Invalid value zero for configuration num.partitions: Not a number of type INT\n"


def test_unknown_config_key_is_warned_about(cluster_factory):
    c = cluster_factory(1, overrides={"no.such.key": "1"})
    log = c.brokers[0].log_path.read_text()
    assert "The configuration 'no.such.key' was supplied but isn't a known config." in log


def test_server_scripts_start_as_daemon_and_stop_with_a_controlled_shutdown(tmp_path, zk_connect):
    port = free_port()
    cfg = _props(tmp_path, zk_connect, port)
    env = {**os.environ, "LOG_DIR": str(tmp_path / "console")}
    subprocess.run([str(ROOT / "bin" / "pylog-server-start.sh"), "-daemon", str(cfg)], check=True, env=env,
                   cwd="/", timeout=30)
    pid = int((tmp_path / "console" / "pylogServer.pid").read_text())
    try:
        wait_for(lambda: KafkaClient(f"127.0.0.1:{port}", timeout=2).refresh_metadata(topics=[]), 60, "the broker")
        r = subprocess.run([str(ROOT / "bin" / "pylog-server-stop.sh"), str(cfg)], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        wait_for(lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid), 60, "the broker to exit")
        console = (tmp_path / "console" / "pylogServer.out").read_text()
        assert "shut down completed" in console
        assert (tmp_path / "logs" / "meta.properties").exists()
    finally:
        if os.path.exists(f"/proc/{pid}"):
            os.kill(pid, 9)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_a_second_broker_with_the_same_id_is_refused(cluster_factory, tmp_path, zk_connect):
    c = cluster_factory(1, overrides={"zookeeper.session.timeout.ms": "2000"})
    cfg = _props(tmp_path, zk_connect, free_port(), **{"zookeeper.session.timeout.ms": "2000"})
    r = subprocess.run([sys.executable, "-m", "pylog.broker.main", str(cfg)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0
    assert "node already exists and owner" in r.stderr
    assert "/brokers/ids/0" in r.stderr
    # the first broker is untouched
    create_topic(c.bootstrap, "still-fine")


def test_topic_deletion_removes_partition_dirs_and_znodes(cluster, zk_connect):
    create_topic(cluster.bootstrap, "doomed", partitions=2)
    kcat(cluster.bootstrap, "-P", "-t", "doomed", input="a\nb\n")
    logs = cluster.brokers[0].data_dir / "logs"
    assert (logs / "doomed-0").is_dir() and (logs / "doomed-1").is_dir()
    with KafkaClient(cluster.bootstrap) as k:
        r = k.call(ApiKey.DeleteTopics, lambda cls, v: cls(topic_names=["doomed"], timeout_ms=30000), max_version=5)
    assert r.responses[0].error_code == 0
    wait_for(lambda: not (logs / "doomed-0").exists() and not (logs / "doomed-1").exists(), 30, "dirs deleted")
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        # The controller deletes these one after another (as Kafka's TopicDeletionManager does): wait for the last.
        wait_for(lambda: zk.exists(paths.delete_topic("doomed")) is None, 30, "deletion marker removed")
        assert zk.exists(paths.topic("doomed")) is None
        assert zk.exists(paths.config_entity("topics", "doomed")) is None
    finally:
        zk.close()


def test_persistent_paths_and_cluster_id_are_created(cluster, zk_connect):
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        for p in paths.PERSISTENT_PATHS:
            assert zk.exists(p) is not None, p
        cluster_id = zk.get_cluster_id()
        registration = zk.get_brokers()[0].registration
    finally:
        zk.close()
    meta = (cluster.brokers[0].data_dir / "logs" / "meta.properties").read_text()
    assert f"cluster.id={cluster_id}" in meta and "broker.id=0" in meta and "version=0" in meta
    assert registration.endpoint("PLAINTEXT").port == cluster.brokers[0].port


def test_restart_refuses_a_log_dir_from_another_cluster(cluster_factory, tmp_path, zk_connect):
    c = cluster_factory(1)
    meta = c.brokers[0].data_dir / "logs" / "meta.properties"
    c.stop()
    meta.write_text(meta.read_text().replace("cluster.id=", "cluster.id=X"))
    with pytest.raises(ClusterError) as err:
        c.restart(0)
    assert "doesn't match stored clusterId" in str(err.value)


def test_shutdown_while_a_fetch_response_is_being_sent_logs_no_error(cluster):
    create_topic(cluster.bootstrap, "big")
    value = b"x" * 900_000
    with KafkaClient(cluster.bootstrap) as k:
        for _ in range(20):  # 18 MB: more than the socket buffers hold, so sendfile has to wait
            resp = k.call(ApiKey.Produce, lambda cls, v: cls(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[
                cls.TopicProduceData(name="big", partition_data=[cls.TopicProduceData.PartitionProduceData(
                    index=0, records=records.build_batch([(None, value, [], int(time.time() * 1000))]))])]),
                max_version=8)
            assert resp.responses[0].partition_responses[0].error_code == 0
    cls = request_class(ApiKey.Fetch)[11]
    ft = cls.FetchTopic
    fetch = cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=50 << 20, isolation_level=0, session_id=0,
                session_epoch=-1, topics=[ft(topic="big", partitions=[ft.FetchPartition(
                    partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                    partition_max_bytes=50 << 20)])], forgotten_topics_data=[], rack_id="")
    broker = cluster.brokers[0]
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(20)
        s.connect(("127.0.0.1", broker.port))
        s.sendall(encode_request(fetch, 11, 1, "slow-reader"))
        assert s.recv(4)  # the response started; the client reads no further
        time.sleep(0.5)
        broker.stop(timeout=30)
    assert broker.proc.returncode == 0
    log_text = broker.log_path.read_text()
    assert "shut down completed" in log_text
    assert "Exception in callback" not in log_text and "InvalidStateError" not in log_text
