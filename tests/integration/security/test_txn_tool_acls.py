"""pylog-transactions.sh with ACLs: DescribeProducers needs READ on the topic, an abort (WriteTxnMarkers)
CLUSTER_ACTION, as in Kafka; each refusal is one line in Kafka's words and exit 1."""

import os
import subprocess

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.records import build_batch
from support.clients import create_topic
from .conftest import SECURE_LISTENERS, security_overrides
from .test_acls import USERS

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PID = 7001
SPEC = f"AbortTransactionSpec(topicPartition=sec-0, producerId={PID}, producerEpoch=0, coordinatorEpoch=0)"


@pytest.fixture
def unverified_acl_cluster(cluster_factory, ca):
    """test_acls' cluster, without KIP-890 verification so that a raw transactional batch can hang (as before 3.6)."""
    return cluster_factory(1, extra_listeners=SECURE_LISTENERS, overrides=security_overrides(
        ca, **{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
               "super.users": "User:admin;User:ANONYMOUS", "transaction.partition.verification.enable": "false",
               "listener.name.sasl_plaintext.plain.sasl.jaas.config": USERS}))


def tool(name, *args):
    return subprocess.run([os.path.join(REPO, "bin", name), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO})


def props(tmp_path, user):
    path = tmp_path / f"{user}.properties"
    path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                    f'username="{user}" password="{user}-secret";\n')
    return str(path)


def test_transactions_tool_under_acls(unverified_acl_cluster, tmp_path):
    c = unverified_acl_cluster
    create_topic(c.bootstrap, "sec")
    raw = build_batch([(None, b"v", (), None)], producer_id=PID, producer_epoch=0, base_sequence=0,
                      is_transactional=True)
    with KafkaClient(c.bootstrap) as k:  # PLAINTEXT is User:ANONYMOUS, a super user here
        resp = k.call(ApiKey.Produce, lambda cls, v: cls(transactional_id="hung", acks=-1, timeout_ms=10000, topic_data=[
            cls.TopicProduceData(name="sec", partition_data=[
                cls.TopicProduceData.PartitionProduceData(index=0, records=raw)])]), node=0, max_version=8)
    assert resp.responses[0].partition_responses[0].error_code == 0
    bs = c.bootstrap_on("SASL_PLAINTEXT")
    alice, admin = props(tmp_path, "alice"), props(tmp_path, "admin")

    def txn(config, *args):
        return tool("pylog-transactions.sh", "--bootstrap-server", bs, "--command-config", config, *args)

    r = txn(alice, "describe-producers", "--topic", "sec", "--partition", "0", "--broker-id", "0")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.strip() == (
        "Failed to describe producers for partition sec-0 on broker 0: Failed to describe active producers for "
        "partition sec-0 due to authorization failure on topic `sec`. Enable debug logging for additional detail.")

    r = tool("pylog-acls.sh", "--bootstrap-server", c.bootstrap, "--add", "--allow-principal", "User:alice",
             "--operation", "Read", "--topic", "sec")
    assert r.returncode == 0, r.stderr
    r = txn(alice, "abort", "--topic", "sec", "--partition", "0", "--start-offset", "0")
    assert (r.returncode, r.stderr.strip()) == (
        1, f"Failed to abort transaction {SPEC}: WriteTxnMarkers request with {SPEC} failed due to cluster "
           "authorization error. Enable debug logging for additional detail.")
    r = txn(admin, "abort", "--topic", "sec", "--partition", "0", "--start-offset", "0")
    assert (r.returncode, r.stderr) == (0, "")
    r = txn(alice, "describe-producers", "--topic", "sec", "--partition", "0")
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[5].strip() for line in r.stdout.splitlines()[1:]] == ["None"]
