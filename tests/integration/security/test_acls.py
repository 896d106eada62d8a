"""ACLs with authorizer.class.name=kafka.security.authorizer.AclAuthorizer, driven by stock clients.

Principals log in with SASL/PLAIN; User:ANONYMOUS (PLAINTEXT: the test's own admin connection and the
brokers) is a super user. ACLs are created through CreateAcls (confluent-kafka) and land in ZooKeeper
in Kafka's format; every change takes effect on the broker through the change notifications.
"""

import json
import subprocess

import pytest
from confluent_kafka import KafkaException, Producer, TopicPartition
from confluent_kafka import ElectionType, TopicCollection
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic,
                                   ResourcePatternType, ResourceType)
from confluent_kafka.admin import ResourceType as CkResourceType
from kafka import KafkaConsumer
from kafka import TopicPartition as KpTopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import ClusterAuthorizationFailedError, TopicAuthorizationFailedError

from support.clients import create_topic, kcat, wait_for
from .conftest import SECURE_LISTENERS, security_overrides

pytestmark = pytest.mark.integration

USERS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
         'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')


@pytest.fixture
def acl_cluster(cluster_factory, ca):
    return cluster_factory(1, extra_listeners=SECURE_LISTENERS, overrides=security_overrides(
        ca, **{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
               "super.users": "User:admin;User:ANONYMOUS",
               "listener.name.sasl_plaintext.plain.sasl.jaas.config": USERS}))


def sasl(c, user):
    return {"bootstrap.servers": c.bootstrap_on("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret"}


def produce(c, user, topic):
    """The name of the delivery error librdkafka reports for one record (None when it was written)."""
    p = Producer({**sasl(c, user), "message.timeout.ms": 10000})
    errors = []
    p.produce(topic, b"x", on_delivery=lambda err, msg: errors.append(None if err is None else err.name()))
    p.flush(30)
    return errors[0] if errors else "no delivery report"


def listed_topics(c, user):
    r = subprocess.run(["kcat", "-b", c.bootstrap_on("SASL_PLAINTEXT"), "-L", "-m", "10", "-X",
                        "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", f"sasl.username={user}",
                        "-X", f"sasl.password={user}-secret"], capture_output=True, text=True, timeout=60)
    return sorted(line.split('"')[1] for line in r.stdout.splitlines() if line.strip().startswith("topic \""))


def acl(rtype, name, principal, op, perm=AclPermissionType.ALLOW, pattern=ResourcePatternType.LITERAL):
    return AclBinding(rtype, name, pattern, principal, "*", op, perm)


def test_producer_consumer_deny_prefixed_and_live_removal(acl_cluster, zk):
    c = acl_cluster
    for t in ("orders", "logs-app", "logs-secret", "hidden"):
        create_topic(c.bootstrap, t)
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    bindings = [acl(ResourceType.TOPIC, "orders", "User:alice", AclOperation.WRITE),
                acl(ResourceType.TOPIC, "orders", "User:bob", AclOperation.READ),
                acl(ResourceType.TOPIC, "logs-", "User:bob", AclOperation.READ, pattern=ResourcePatternType.PREFIXED),
                acl(ResourceType.TOPIC, "logs-secret", "User:bob", AclOperation.READ, AclPermissionType.DENY)]
    for f in admin.create_acls(bindings).values():
        assert f.result(30) is None

    stored = json.loads(zk.get("/kafka-acl/Topic/orders")[0])
    assert stored["version"] == 1 and sorted(stored["acls"], key=lambda a: a["principal"]) == [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Write", "host": "*"},
        {"principal": "User:bob", "permissionType": "Allow", "operation": "Read", "host": "*"}]
    assert json.loads(zk.get("/kafka-acl-extended/prefixed/Topic/logs-")[0])["acls"][0]["operation"] == "Read"
    changes = [zk.get(f"/kafka-acl-changes/{n}")[0] for n in zk.get_children("/kafka-acl-changes")]
    assert b"TOPIC:orders" in changes and b"TOPIC:logs-secret" in changes
    ext = [json.loads(zk.get(f"/kafka-acl-extended-changes/{n}")[0])
           for n in zk.get_children("/kafka-acl-extended-changes")]
    assert {"version": 1, "resourceType": "TOPIC", "name": "logs-", "patternType": "PREFIXED"} in ext

    # The producer-only principal writes, and cannot read; unauthorised topics are invisible to it.
    wait_for(lambda: produce(c, "alice", "orders") is None, what="alice may write orders")
    assert produce(c, "alice", "hidden") == "TOPIC_AUTHORIZATION_FAILED"
    assert listed_topics(c, "alice") == ["orders"]
    consumer = KafkaConsumer(bootstrap_servers=c.bootstrap_on("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret",
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    try:
        consumer.assign([KpTopicPartition("orders", 0)])
        with pytest.raises(TopicAuthorizationFailedError):
            list(consumer)
    finally:
        consumer.close()

    # The consumer principal reads orders and the prefixed logs-*, but DENY beats ALLOW on logs-secret.
    kcat(c.bootstrap, "-P", "-t", "logs-app", input="a\n")
    kcat(c.bootstrap, "-P", "-t", "logs-secret", input="s\n")
    base = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=bob",
            "-X", "sasl.password=bob-secret", "-C", "-o", "beginning", "-e", "-q"]
    read = subprocess.run(["kcat", "-b", c.bootstrap_on("SASL_PLAINTEXT"), *base, "-t", "logs-app"],
                          capture_output=True, text=True, timeout=60)
    assert read.stdout.split() == ["a"]
    denied = subprocess.run(["kcat", "-b", c.bootstrap_on("SASL_PLAINTEXT"), *base, "-t", "logs-secret"],
                            capture_output=True, text=True, timeout=60)
    assert "Topic authorization failed" in denied.stderr or "TOPIC_AUTHORIZATION_FAILED" in denied.stderr
    # DENY READ does not deny DESCRIBE (implied by the prefixed READ): logs-secret stays visible, as in Kafka.
    assert listed_topics(c, "bob") == ["logs-app", "logs-secret", "orders"]

    # Removing the ACL takes effect without a restart.
    gone = AclBindingFilter(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", None,
                            AclOperation.ANY, AclPermissionType.ANY)
    assert len(admin.delete_acls([gone])[gone].result(30)) == 1
    wait_for(lambda: produce(c, "alice", "orders") not in (None, "no delivery report"), what="alice refused")
    assert produce(c, "alice", "orders") == "TOPIC_AUTHORIZATION_FAILED"

    # Authorized operations as the clients ask for them (Metadata v8+ / DescribeCluster).
    bob = AdminClient(sasl(c, "bob"))
    topic = bob.describe_topics(TopicCollection(["orders"]), include_authorized_operations=True)["orders"].result(30)
    assert sorted(op.name for op in topic.authorized_operations) == ["DESCRIBE", "READ"]
    assert not bob.describe_cluster(include_authorized_operations=True).result(30).authorized_operations  # none
    every = admin.describe_cluster(include_authorized_operations=True).result(30).authorized_operations
    assert len(every) == 7  # the super user: every operation Kafka checks on the cluster

    described = admin.describe_acls(AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                                     AclOperation.ANY, AclPermissionType.ANY)).result(30)
    assert len(described) == 3


def test_admin_apis_refused_without_permission(acl_cluster):
    c = acl_cluster
    alice = AdminClient(sasl(c, "alice"))
    with pytest.raises(KafkaException) as info:
        alice.create_topics([NewTopic("nope", 1, 1)])["nope"].result(30)
    assert info.value.args[0].name() == "TOPIC_AUTHORIZATION_FAILED"
    binding = acl(ResourceType.TOPIC, "x", "User:alice", AclOperation.ALL)
    with pytest.raises(KafkaException) as info:
        alice.create_acls([binding])[binding].result(30)
    assert info.value.args[0].name() == "CLUSTER_AUTHORIZATION_FAILED"
    create_topic(c.bootstrap, "kept")
    with pytest.raises(KafkaException) as info:
        alice.delete_topics(["kept"])["kept"].result(30)
    assert info.value.args[0].name() == "TOPIC_AUTHORIZATION_FAILED"
    # Topic-level admin APIs answer TOPIC_AUTHORIZATION_FAILED, cluster-level ones CLUSTER_AUTHORIZATION_FAILED.
    refused = {}
    refused["create_partitions"] = alice.create_partitions([NewPartitions("kept", 3)])["kept"]
    topic_cfg = ConfigResource(CkResourceType.TOPIC, "kept", incremental_configs=[
        ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)])
    refused["incremental_alter_configs"] = alice.incremental_alter_configs([topic_cfg])[topic_cfg]
    plain_cfg = ConfigResource(CkResourceType.TOPIC, "kept")
    refused["describe_configs"] = alice.describe_configs([plain_cfg])[plain_cfg]
    broker_cfg = ConfigResource(CkResourceType.BROKER, "0")
    refused["describe_configs_broker"] = alice.describe_configs([broker_cfg])[broker_cfg]
    refused["elect_leaders"] = alice.elect_leaders(ElectionType.PREFERRED, [TopicPartition("kept", 0)])
    names = {}
    for api, fut in refused.items():
        try:
            result = fut.result(30)
            names[api] = next(iter(result.values())).name() if isinstance(result, dict) else "no error"
        except KafkaException as exc:
            names[api] = exc.args[0].name()
    assert names == {"create_partitions": "TOPIC_AUTHORIZATION_FAILED",
                     "incremental_alter_configs": "TOPIC_AUTHORIZATION_FAILED",
                     "describe_configs": "TOPIC_AUTHORIZATION_FAILED",
                     "describe_configs_broker": "CLUSTER_AUTHORIZATION_FAILED",
                     "elect_leaders": "CLUSTER_AUTHORIZATION_FAILED"}
    # librdkafka 2.16 aborts the process on DescribeUserScramCredentials' top-level error (Kafka sends the
    # same answer): kafka-python reads it.
    k = KafkaAdminClient(bootstrap_servers=c.bootstrap_on("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
                         sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret")
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            k.describe_user_scram_credentials(["x"])
        with pytest.raises(ClusterAuthorizationFailedError):
            k.list_partition_reassignments()
    finally:
        k.close()
    # The super user may do all of it.
    admin = AdminClient(sasl(c, "admin"))
    assert admin.create_topics([NewTopic("made", 1, 1)])["made"].result(30) is None
    assert admin.delete_topics(["kept"])["kept"].result(30) is None


def test_delete_records_log_dir_and_producer_apis_need_their_acls(acl_cluster):
    c = acl_cluster
    create_topic(c.bootstrap, "trimmed")
    kcat(c.bootstrap, "-P", "-t", "trimmed", "-p", "0", input="a\nb\nc\n")
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    describe = acl(ResourceType.TOPIC, "trimmed", "User:alice", AclOperation.DESCRIBE)
    assert admin.create_acls([describe])[describe].result(30) is None
    # librdkafka caches a topic its Metadata did not show: each attempt is a new client, once alice sees it.
    wait_for(lambda: listed_topics(c, "alice") == ["trimmed"], 60, what="alice to see trimmed")
    seen = []

    def delete_below(offset, expected):
        try:
            alice = AdminClient(sasl(c, "alice"))
            fut = alice.delete_records([TopicPartition("trimmed", 0, offset)], request_timeout=10)
            got = f"low watermark {next(iter(fut.values())).result(20).low_watermark}"
        except KafkaException as exc:
            got = exc.args[0].name()
        seen.append(got)
        return got == expected

    def answers(expected):
        seen.clear()
        try:
            wait_for(lambda: delete_below(2, expected), 90, what=f"DeleteRecords to answer {expected}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; answers seen: {seen}") from exc

    # DESCRIBE shows the topic (so the client finds its leader) but DELETE is what DeleteRecords needs.
    answers("TOPIC_AUTHORIZATION_FAILED")
    delete = acl(ResourceType.TOPIC, "trimmed", "User:alice", AclOperation.DELETE)
    assert admin.create_acls([delete])[delete].result(30) is None
    answers("low watermark 2")

    k = KafkaAdminClient(bootstrap_servers=c.bootstrap_on("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
                         sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret")
    log_dir = str(c.brokers[0].data_dir / "logs")
    try:
        assert k.describe_log_dirs() == [{"broker": 0, "log_dirs": []}]  # Kafka answers no dirs without DESCRIBE
        moved = k.alter_replica_log_dirs({("trimmed", 0, 0): log_dir})
        assert list(moved.values()) == [ClusterAuthorizationFailedError]
        # DescribeProducers needs READ on the topic (alice has DESCRIBE and DELETE only).
        with pytest.raises(TopicAuthorizationFailedError, match="Topic authorization failed."):
            k.describe_producers([KpTopicPartition("trimmed", 0)], broker_id=0)
    finally:
        k.close()
    super_user = KafkaAdminClient(bootstrap_servers=c.bootstrap)
    try:
        assert [d["log_dir"] for d in super_user.describe_log_dirs()[0]["log_dirs"]] == [log_dir]
        assert list(super_user.alter_replica_log_dirs({("trimmed", 0, 0): log_dir}).values()) != \
            [ClusterAuthorizationFailedError]
        assert KpTopicPartition("trimmed", 0) in super_user.describe_producers([KpTopicPartition("trimmed", 0)],
                                                                              broker_id=0)
    finally:
        super_user.close()
