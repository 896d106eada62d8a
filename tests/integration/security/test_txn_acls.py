"""ACLs on transactional ids, seen through confluent-kafka's transactional Producer.

Kafka's rule: FindCoordinator for a transactional id needs DESCRIBE on it, InitProducerId,
AddPartitionsToTxn and EndTxn need WRITE on it (which implies DESCRIBE), and the records need WRITE on
their topics. Without the transactional id ACL, init_transactions() fails with
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; once it exists, the same principal commits a transaction.
"""

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AclOperation, AdminClient, ResourceType

from support.clients import create_topic
from support.txn import TXN, read_all
from .conftest import security_overrides
from .test_acls import SECURE_LISTENERS, USERS, acl, sasl

pytestmark = pytest.mark.integration


@pytest.fixture
def txn_acl_cluster(cluster_factory, ca):
    """test_acls.py's cluster, with the small internal topics of the transaction tests."""
    return cluster_factory(1, extra_listeners=SECURE_LISTENERS, overrides=security_overrides(
        ca, **TXN, **{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                      "super.users": "User:admin;User:ANONYMOUS",
                      "listener.name.sasl_plaintext.plain.sasl.jaas.config": USERS}))


def test_transactional_id_write_acl_gates_transactions(txn_acl_cluster):
    c = txn_acl_cluster
    create_topic(c.bootstrap, "ledger")
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    for f in admin.create_acls([acl(ResourceType.TOPIC, "ledger", "User:bob", AclOperation.WRITE)]).values():
        assert f.result(30) is None

    refused = Producer({**sasl(c, "bob"), "transactional.id": "bob-tx"})
    with pytest.raises(KafkaException) as failed:
        refused.init_transactions(30)
    assert failed.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED

    for f in admin.create_acls([acl(ResourceType.TRANSACTIONAL_ID, "bob-tx", "User:bob",
                                    AclOperation.WRITE)]).values():
        assert f.result(30) is None
    p = Producer({**sasl(c, "bob"), "transactional.id": "bob-tx"})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce("ledger", b"entry")
    p.commit_transaction(60)
    assert read_all(c.bootstrap, {"ledger": 1}, None, 1) == [b"entry"]
