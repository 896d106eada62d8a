"""Edge 5 of issue 25: admin calls while ZooKeeper does not answer. The broker answers the request
with REQUEST_TIMED_OUT and a message naming ZooKeeper, within the request's timeout (or the ZooKeeper
client's connection timeout, the shorter), on a connection it keeps open. ZooKeeper is this test's own
(SIGSTOP would freeze every other test on the shared one) and always continued in a finally."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from pylog.client.sync import KafkaClient
from pylog.localcluster import LocalCluster, wait_until
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.zk.testing import start_test_zookeeper

from cli_helpers import REPO

pytestmark = pytest.mark.integration
ZK_TIMEOUT_S = 6  # LocalCluster's zookeeper.session.timeout.ms, which the connection timeout defaults to
BOUND_S = ZK_TIMEOUT_S + 6  # the answer's deadline, with room for a loaded machine


@pytest.fixture
def own_zk_cluster(tmp_path):
    zk = start_test_zookeeper(str(tmp_path / "zk"))
    cluster = LocalCluster(tmp_path / "cluster", 1, zk_connect=f"{zk.connect_string}/edge5")
    try:
        yield zk, cluster.start()
    finally:
        os.kill(zk.pid, signal.SIGCONT)
        try:
            cluster.stop()
        except Exception:
            cluster.kill_all()
        zk.stop()


def _create(client: KafkaClient, name: str):
    return client.call(ApiKey.CreateTopics, lambda cls, v: cls(timeout_ms=30000, validate_only=False, topics=[
        cls.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])]))


def _describe_scram(bootstrap: str) -> tuple[int, str]:
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.DescribeUserScramCredentials, lambda cls, v: cls(users=None))
        return resp.error_code, resp.error_message


def test_admin_calls_during_a_zookeeper_outage_time_out_naming_zookeeper(own_zk_cluster):
    zk, cluster = own_zk_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    assert admin.list_topics(timeout=10).brokers  # its connection is up before ZooKeeper stops
    with KafkaClient(cluster.bootstrap) as client:
        client.refresh_metadata(topics=[])
        answers: dict = {}

        def timed(key, fn):
            t0 = time.monotonic()
            answers[key] = (fn(), time.monotonic() - t0)
        os.kill(zk.pid, signal.SIGSTOP)
        try:
            # All at once, so the test pays one ZooKeeper timeout: a raw CreateTopics on a connection the
            # test holds, a read of ZooKeeper (SCRAM users), a client with its defaults (operation_timeout 0:
            # the broker's ZooKeeper timeout bounds it) and the tool an operator runs.
            t0 = time.monotonic()
            fut = admin.create_topics([NewTopic("during-outage-3", 1, 1)])["during-outage-3"]
            side = [threading.Thread(target=timed, args=("create", lambda: _create(client, "during-outage-2"))),
                    threading.Thread(target=timed, args=("scram", lambda: _describe_scram(cluster.bootstrap)))]
            for t in side:
                t.start()
            p = subprocess.run([os.path.join(REPO, "bin", "pylog-topics.sh"), "--bootstrap-server", cluster.bootstrap,
                                "--create", "--topic", "during-outage", "--partitions", "1",
                                "--replication-factor", "1"], capture_output=True, text=True, timeout=60, cwd="/")
            assert time.monotonic() - t0 < BOUND_S + 5  # the tool's own start-up on top
            assert (p.returncode, p.stdout) == (1, "")
            assert p.stderr.startswith("Error while executing topic command : ") and len(p.stderr.splitlines()) == 1
            assert "ZooKeeper at 127.0.0.1:" in p.stderr and "is ZooKeeper running" in p.stderr
            with pytest.raises(KafkaException) as err:
                fut.result(timeout=BOUND_S)
            assert time.monotonic() - t0 < BOUND_S
            assert err.value.args[0].code() == ErrorCode.REQUEST_TIMED_OUT and "ZooKeeper" in str(err.value)
            for t in side:
                t.join(BOUND_S)
            resp, took = answers["create"]
            (topic,) = resp.topics
            assert took < BOUND_S and topic.error_code == ErrorCode.REQUEST_TIMED_OUT
            assert "ZooKeeper" in topic.error_message
            (code, message), took = answers["scram"]
            assert took < BOUND_S and code == ErrorCode.REQUEST_TIMED_OUT and "ZooKeeper at" in message
        finally:
            os.kill(zk.pid, signal.SIGCONT)
        # Same connections, still open: Metadata answers on both, then the create works once ZooKeeper is back.
        client.refresh_metadata(topics=[])
        assert admin.list_topics(timeout=10).brokers
        wait_until(lambda: _create(client, "after-outage").topics[0].error_code in (
            ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS), 60, "a topic to be created after ZooKeeper resumed")
