"""ACLs on consumer groups, seen through confluent-kafka as a user sees them.

Kafka's rule: joining and committing in a group needs READ on the group (FindCoordinator already needs
DESCRIBE, which READ implies) and READ on the topics. A principal without them gets
GROUP_AUTHORIZATION_FAILED from its consumer; once the ACLs exist, the same principal consumes and commits.
"""

import time

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AclOperation, AdminClient, ResourceType

from support.clients import create_topic, kcat
from .test_acls import acl, acl_cluster, sasl  # noqa: F401  (acl_cluster is a fixture)

pytestmark = pytest.mark.integration

TOPIC, GROUP = "payments", "billing"


def consumer(c, user):
    return Consumer({**sasl(c, user), "group.id": GROUP, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})


def first_error(cons, timeout=60):
    """The code of the first error the consumer reports (None if it got a record or nothing before the timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = cons.poll(1.0)
        if msg is not None:
            return msg.error().code() if msg.error() else None
    return None


def refusal(c, user):
    """The error a fresh group consumer of `user` reports first."""
    cons = consumer(c, user)
    try:
        cons.subscribe([TOPIC])
        return first_error(cons)
    finally:
        cons.close()


def consume(cons, n, timeout=90):
    """n record values, skipping the errors reported while the new ACLs reach the broker."""
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        msg = cons.poll(1.0)
        if msg is not None and not msg.error():
            got.append(msg.value())
    return got


def test_group_read_acl_gates_consuming_and_committing(acl_cluster):
    c = acl_cluster
    create_topic(c.bootstrap, TOPIC)
    kcat(c.bootstrap, "-P", "-t", TOPIC, input="a\nb\nc\n")

    assert refusal(c, "bob") == KafkaError.GROUP_AUTHORIZATION_FAILED

    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    for f in admin.create_acls([acl(ResourceType.TOPIC, TOPIC, "User:bob", AclOperation.READ),
                                acl(ResourceType.GROUP, GROUP, "User:bob", AclOperation.READ)]).values():
        assert f.result(30) is None

    cons = consumer(c, "bob")
    try:
        cons.subscribe([TOPIC])
        assert consume(cons, 3) == [b"a", b"b", b"c"]
        committed = cons.commit(asynchronous=False)
        assert [(tp.topic, tp.partition, tp.offset, tp.error) for tp in committed] == [(TOPIC, 0, 3, None)]
        # OffsetFetch (DESCRIBE on the group and the topic) reads the commit back.
        back = cons.committed([TopicPartition(TOPIC, 0)], timeout=30)
        assert [(tp.offset, tp.error) for tp in back] == [(3, None)]
    finally:
        cons.close()

    # alice has no ACL at all: the group stays closed to her while bob uses it.
    assert refusal(c, "alice") == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_txn_offset_commit_needs_transactional_id_write_then_group_and_topic_read(acl_cluster):
    """Kafka's order of checks for TxnOffsetCommit: WRITE on the transactional id, READ on the group, READ on
    each topic; with all three a transactional producer's offsets are accepted."""
    from pylog.client.aio import ConnectSecurity
    from pylog.client.sync import KafkaClient
    from pylog.protocol.api import ApiKey
    from pylog.security.sasl_client import PlainClient
    from support.clients import wait_for
    from support.txn_wire import txn_offset_commit

    c = acl_cluster
    create_topic(c.bootstrap, TOPIC)
    with KafkaClient(c.bootstrap) as superuser:  # creates __consumer_offsets
        wait_for(lambda: superuser.call(ApiKey.FindCoordinator, lambda cls, v: cls(key=GROUP, key_type=0),
                                        max_version=3).error_code == 0, 60, "the group coordinator")
    bob = KafkaClient(c.bootstrap_on("SASL_PLAINTEXT"),
                      security=ConnectSecurity(sasl=lambda: PlainClient("bob", "bob-secret")))
    admin = AdminClient({"bootstrap.servers": c.bootstrap})

    def commit():
        return txn_offset_commit(bob, GROUP, TOPIC, 4242, 0, 3, transactional_id="etl")

    def grant(rtype, name, op):
        for f in admin.create_acls([acl(rtype, name, "User:bob", op)]).values():
            assert f.result(30) is None

    with bob:
        assert commit() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        grant(ResourceType.TRANSACTIONAL_ID, "etl", AclOperation.WRITE)
        wait_for(lambda: commit() == KafkaError.GROUP_AUTHORIZATION_FAILED, 30, "the transactional id ACL")
        grant(ResourceType.GROUP, GROUP, AclOperation.READ)
        wait_for(lambda: commit() == KafkaError.TOPIC_AUTHORIZATION_FAILED, 30, "the group ACL")
        grant(ResourceType.TOPIC, TOPIC, AclOperation.READ)
        wait_for(lambda: commit() == 0, 30, "the topic ACL")


def test_a_consumer_protocol_member_needs_describe_on_the_topics_it_subscribes_to(acl_cluster):
    """KIP-848 (group.protocol=consumer): after READ on the group, ConsumerGroupHeartbeat checks DESCRIBE on each
    subscribed topic, as Kafka 4.0 does; with READ on the topic the same member consumes."""
    c = acl_cluster
    create_topic(c.bootstrap, TOPIC)
    kcat(c.bootstrap, "-P", "-t", TOPIC, input="a\nb\n")
    admin = AdminClient({"bootstrap.servers": c.bootstrap})

    def member_sees(grant, see):
        for f in admin.create_acls([acl(grant, GROUP if grant == ResourceType.GROUP else TOPIC, "User:bob",
                                        AclOperation.READ)]).values():
            assert f.result(30) is None
        cons = Consumer({**sasl(c, "bob"), "group.id": GROUP, "group.protocol": "consumer",
                         "auto.offset.reset": "earliest"})
        try:
            cons.subscribe([TOPIC])
            return see(cons)
        finally:
            cons.close()

    assert member_sees(ResourceType.GROUP, first_error) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert member_sees(ResourceType.TOPIC, lambda cons: consume(cons, 2)) == [b"a", b"b"]
