"""SCRAM credentials through AlterUserScramCredentials / DescribeUserScramCredentials (KIP-554).

They land in /config/users/<user> exactly as ZK-mode Kafka stores them (no password), next to any
other config keys of the user, with a /config/changes notification.
"""

import json

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion,
                                   UserScramCredentialUpsertion)
from kafka.admin import KafkaAdminClient
from kafka.admin import ScramMechanism as KpScramMechanism
from kafka.admin import UserScramCredentialDeletion as KpDeletion
from kafka.admin import UserScramCredentialUpsertion as KpUpsertion

from pylog.security.scram import ScramCredential

pytestmark = pytest.mark.integration


def _znode(zk, user):
    data, _ = zk.get(f"/config/users/{user}")
    return json.loads(data)


def test_confluent_alter_and_describe_scram_credentials(cluster, zk):
    a = AdminClient({"bootstrap.servers": cluster.bootstrap})
    zk.create("/config/users/alice", json.dumps({"version": 1, "config": {"producer_byte_rate": "1024"}}).encode(),
              make_parents=True)
    ups = UserScramCredentialUpsertion("alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                                       b"alice-secret")
    futures = a.alter_user_scram_credentials([ups])
    assert futures["alice"].result(30) is None

    stored = _znode(zk, "alice")
    assert stored["version"] == 1 and stored["config"]["producer_byte_rate"] == "1024"
    cred = ScramCredential.from_text(stored["config"]["SCRAM-SHA-512"])
    assert cred.iterations == 8192 and len(cred.stored_key) == 64
    assert "alice-secret" not in json.dumps(stored)
    notes = [json.loads(zk.get(f"/config/changes/{c}")[0]) for c in zk.get_children("/config/changes")]
    assert {"version": 2, "entity_path": "users/alice"} in notes

    desc = a.describe_user_scram_credentials(["alice"])["alice"].result(30)
    assert [(i.mechanism, i.iterations) for i in desc.scram_credential_infos] == [(ScramMechanism.SCRAM_SHA_512, 8192)]
    with pytest.raises(KafkaException) as info:
        a.describe_user_scram_credentials(["bob"])["bob"].result(30)
    assert info.value.args[0].name() == "RESOURCE_NOT_FOUND"

    too_few = UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 100), b"x")
    with pytest.raises(KafkaException) as info:
        a.alter_user_scram_credentials([too_few])["bob"].result(30)
    assert info.value.args[0].name() == "UNACCEPTABLE_CREDENTIAL" and "Too few iterations" in info.value.args[0].str()

    delete = UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_512)
    assert a.alter_user_scram_credentials([delete])["alice"].result(30) is None
    assert _znode(zk, "alice")["config"] == {"producer_byte_rate": "1024"}
    with pytest.raises(KafkaException) as info:
        a.alter_user_scram_credentials([delete])["alice"].result(30)
    assert "Attempt to delete a user credential that does not exist" in info.value.args[0].str()


def test_kafka_python_alter_and_describe_scram_credentials(cluster, zk):
    k = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        k.alter_user_scram_credentials([KpUpsertion("carol", KpScramMechanism.SCRAM_SHA_256, "pw", iterations=4096),
                                        KpUpsertion("dave", KpScramMechanism.SCRAM_SHA_512, "pw2")])
        described = k.describe_user_scram_credentials()
        assert sorted(described) == ["carol", "dave"]
        assert ScramCredential.from_text(_znode(zk, "carol")["config"]["SCRAM-SHA-256"]).iterations == 4096
        k.alter_user_scram_credentials([KpDeletion("dave", KpScramMechanism.SCRAM_SHA_512)])
        assert sorted(k.describe_user_scram_credentials()) == ["carol"]
    finally:
        k.close()
