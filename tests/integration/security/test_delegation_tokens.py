"""Delegation tokens (KIP-48) end to end: bin/pylog-delegation-tokens.sh, ZooKeeper, SCRAM with a token.

One broker with the ACL authorizer, a PLAINTEXT listener (the test's admin and the brokers: super user
ANONYMOUS) and a SASL_PLAINTEXT one taking PLAIN (admin, alice, bob, carol) and SCRAM. Tokens are made and
managed with the tool (no stock Python client has the token APIs); clients then authenticate with one:

- kafka-python, through the Spark source's SCRAM mechanism that sends Kafka's `tokenauth=true` extension
  (kafka-python has no option for it): it produces and consumes as the token's owner;
- pylog's tools, with Kafka's `ScramLoginModule required tokenauth=true ...` in --command-config;
- confluent-kafka (librdkafka) cannot: it has no way to send the extension, so the broker looks the token
  id up as a SCRAM user and refuses it, as Kafka 3.9 does.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType
from confluent_kafka.admin import ResourceType
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from pylog.spark.token_auth import DelegationTokenId
from support import tokens
from support.clients import create_topic, wait_for

pytestmark = pytest.mark.integration



@pytest.fixture
def token_cluster(cluster_factory):
    """One broker with delegation tokens on (expired ones removed every second)."""
    return cluster_factory(1, extra_listeners=tokens.LISTENERS, overrides=tokens.OVERRIDES)


def _tool(c, config: str, *args: str) -> subprocess.CompletedProcess:
    return tokens.tool(c.bootstrap_on("SASL_PLAINTEXT"), config, *args)


def _kp_token(c, token_id: str, hmac: str) -> dict:
    return {"bootstrap_servers": c.bootstrap_on("SASL_PLAINTEXT"), "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": DelegationTokenId(token_id),
            "sasl_plain_password": hmac}


def _librdkafka_errors(c, token_id: str, hmac: str) -> list[str]:
    """The errors a confluent-kafka producer logging in with the token reports (its defaults otherwise)."""
    errors: list[str] = []
    p = Producer({"bootstrap.servers": c.bootstrap_on("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
                  "sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": token_id, "sasl.password": hmac,
                  "error_cb": lambda e: errors.append(e.str())})
    with pytest.raises(KafkaException):
        p.list_topics(timeout=2)
    wait_for(lambda: p.poll(0.2) is not None or errors, timeout=10, what="librdkafka's error callback")
    return errors


def _grant_alice(c, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    binding = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    for f in admin.create_acls([binding]).values():
        f.result(30)


def test_token_lifecycle_with_the_tool_and_clients(token_cluster, zk, tmp_path):
    c = token_cluster
    alice, bob, carol = (tokens.user_login(tmp_path, u) for u in ("alice", "bob", "carol"))
    create_topic(c.bootstrap, "tok")
    _grant_alice(c, "tok")

    made = _tool(c, alice, "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("Calling create token operation with renewers :[User:bob] , "
                                  "max-life-time-period :-1\nCreated delegation token with tokenId : ")
    assert re.search(r"^TOKENID\s+HMAC\s+OWNER\s+REQUESTER\s+RENEWERS\s+ISSUEDATE\s+EXPIRYDATE\s+MAXDATE$",
                     made.stdout, re.M)
    [[token_id, hmac, owner, requester, renewers, issued, expiry, max_date]] = tokens.table_rows(made.stdout)
    assert (owner, requester, renewers) == ("User:alice", "User:alice", "[User:bob]")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", issued)

    # ZooKeeper holds the token as ZK-mode Kafka does (no HMAC), and announces it.
    stored = json.loads(zk.get(f"/delegation_token/tokens/{token_id}")[0])
    assert stored["version"] == 3 and stored["tokenId"] == token_id
    assert (stored["owner"], stored["tokenRequester"], stored["renewers"]) == ("User%3Aalice", "User%3Aalice",
                                                                              ["User%3Abob"])
    day, week = 24 * 3600 * 1000, 7 * 24 * 3600 * 1000
    assert stored["expiryTimestamp"] - stored["issueTimestamp"] == day
    assert stored["maxTimestamp"] - stored["issueTimestamp"] == week
    assert hmac not in json.dumps(stored)
    notes = [zk.get(f"/delegation_token/token_changes/{n}")[0] for n in zk.get_children("/delegation_token/token_changes")]
    assert token_id.encode() in notes

    # kafka-python with the token (tokenauth=true) acts as alice, who alone may use the topic.
    producer = KafkaProducer(**_kp_token(c, token_id, hmac))
    try:
        producer.send("tok", b"with-a-token").get(timeout=30)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer(**_kp_token(c, token_id, hmac))
    try:
        consumer.assign([TopicPartition("tok", 0)])
        consumer.seek_to_beginning()
        got: list[bytes] = []
        wait_for(lambda: got.extend(r.value for rs in consumer.poll(timeout_ms=500).values() for r in rs) or got,
                 timeout=30, what="the record read with the token")
        assert got == [b"with-a-token"]
    finally:
        consumer.close()

    # librdkafka cannot send the extension: the token id is taken for a SCRAM user and refused.
    errors = _librdkafka_errors(c, token_id, hmac)
    assert any("invalid credentials with SASL mechanism SCRAM-SHA-256" in e for e in errors), errors

    # A token-authenticated connection may not manage tokens (Kafka's allowTokenRequests).
    token_login = tokens.properties(tmp_path, "token", tokens.token_jaas(token_id, hmac), "SCRAM-SHA-512")
    refused = _tool(c, token_login, "--describe")
    assert refused.returncode == 1
    assert refused.stdout.strip() == "Calling describe token operation for current user."
    assert "UnsupportedByAuthenticationException: Delegation Token requests are not allowed" in refused.stderr, \
        refused.stderr

    # Who sees and renews it: its owner and renewer do, carol does not until granted DESCRIBE.
    for login, seen in ((alice, 1), (bob, 1), (carol, 0)):
        out = _tool(c, login, "--describe")
        assert out.returncode == 0 and f"Total number of tokens : {seen}" in out.stdout, out.stdout + out.stderr
    denied = _tool(c, carol, "--renew", "--hmac", hmac, "--renew-time-period", "1000")
    assert denied.returncode == 1 and "DelegationTokenOwnerMismatchException" in denied.stderr, denied.stderr
    # (confluent-kafka has no DelegationToken resource type: kafka-acls.sh's --delegation-token)
    grant = subprocess.run([str(tokens.ROOT / "bin" / "pylog-acls.sh"), "--bootstrap-server", c.bootstrap, "--add",
                            "--allow-principal", "User:carol", "--operation", "Describe", "--delegation-token",
                            token_id], capture_output=True, text=True, timeout=60)
    assert grant.returncode == 0, grant.stderr
    wait_for(lambda: "Total number of tokens : 1" in _tool(c, carol, "--describe").stdout, what="carol's DESCRIBE")

    renewed = _tool(c, bob, "--renew", "--hmac", hmac, "--renew-time-period", "3600000")
    assert renewed.returncode == 0, renewed.stderr
    assert renewed.stdout.startswith(f"Calling renew token operation with hmac :{hmac} , renew-time-period :3600000\n"
                                     "Completed renew operation. New expiry date : ")
    after = json.loads(zk.get(f"/delegation_token/tokens/{token_id}")[0])
    assert abs(after["expiryTimestamp"] - (time.time() * 1000 + 3600000)) < 60000

    # Expired now: gone from ZooKeeper, and the token no longer authenticates.
    expired = _tool(c, alice, "--expire", "--hmac", hmac, "--expiry-time-period", "-1")
    assert expired.returncode == 0 and "Completed expire operation. New expiry date : " in expired.stdout
    assert zk.exists(f"/delegation_token/tokens/{token_id}") is None
    gone = _tool(c, token_login, "--describe")
    assert gone.returncode == 1 and f"Token Authentication failed: Invalid tokenId : {token_id}" in gone.stderr, \
        gone.stderr


def test_expiry_tokens_for_other_owners_and_plaintext_refusal(token_cluster, zk, tmp_path):
    c = token_cluster
    made = _tool(c, tokens.user_login(tmp_path, "alice"), "--create", "--max-life-time-period", "5000")
    assert made.returncode == 0, made.stderr
    [[token_id, *_]] = tokens.table_rows(made.stdout)
    assert zk.exists(f"/delegation_token/tokens/{token_id}") is not None
    # delegation.token.expiry.check.interval.ms=1000: the broker removes it soon after its max lifetime
    wait_for(lambda: zk.exists(f"/delegation_token/tokens/{token_id}") is None, timeout=30, what="expiry removal")

    # A token for another owner needs CREATE_TOKENS on that owner's User resource (KIP-373).
    bob = tokens.user_login(tmp_path, "bob")
    refused = _tool(c, bob, "--create", "--max-life-time-period", "-1", "--owner-principal", "User:alice")
    assert refused.returncode == 1 and "DelegationTokenAuthorizationException" in refused.stderr, refused.stderr
    grant = subprocess.run([str(tokens.ROOT / "bin" / "pylog-acls.sh"), "--bootstrap-server", c.bootstrap, "--add",
                            "--allow-principal", "User:bob", "--operation", "CreateTokens", "--user-principal",
                            "User:alice"], capture_output=True, text=True, timeout=60)
    assert grant.returncode == 0, grant.stderr
    made = wait_for(lambda: (r := _tool(c, bob, "--create", "--max-life-time-period", "-1", "--owner-principal",
                                        "User:alice")).returncode == 0 and r, what="bob's CREATE_TOKENS")
    [[_, _, owner, requester, *_]] = tokens.table_rows(made.stdout)
    assert (owner, requester) == ("User:alice", "User:bob")

    empty = tmp_path / "plaintext.properties"
    empty.write_text("")
    plain = tokens.tool(c.bootstrap, str(empty), "--describe")
    assert plain.returncode == 1 and "UnsupportedByAuthenticationException" in plain.stderr, plain.stderr
