"""Brokers talk to each other over SASL_SSL with SCRAM-SHA-512 (inter.broker.listener.name=SASL_SSL).

The controller's requests and the replica fetchers use that listener: an acks=all write reaches all three
replicas, and after the leader stops another one takes over with every acknowledged record.
"""

import json

import pytest

from pylog.security.credentials import write_user_credentials
from pylog.security.scram import make_credential
from support.clients import create_topic, kcat, wait_for
from support.inspect import partitions
from .conftest import SECURE_LISTENERS, security_overrides

pytestmark = pytest.mark.integration

SCRAM_LOGIN = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" '
               'password="broker-secret";')


def test_replication_and_controller_over_sasl_ssl(cluster_factory, ca, zk):
    # As with Kafka, the brokers' own SCRAM credential goes into ZooKeeper before they start.
    write_user_credentials(zk, "broker", {"SCRAM-SHA-512": make_credential("SCRAM-SHA-512", "broker-secret")}, [])
    c = cluster_factory(3, extra_listeners=SECURE_LISTENERS, overrides=security_overrides(
        ca, **{"inter.broker.listener.name": "SASL_SSL", "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
               "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN,
               "min.insync.replicas": "2"}))
    reg = json.loads(zk.get("/brokers/ids/0")[0])
    assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL",
                                                     "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}
    assert reg["host"] == "127.0.0.1" and len(reg["endpoints"]) == 4

    create_topic(c.bootstrap, "rep", partitions=1, rf=3)
    wait_for(lambda: len(partitions(c.bootstrap, "rep")[0].isr) == 3, what="3 in-sync replicas")
    kcat(c.bootstrap, "-P", "-t", "rep", "-X", "acks=all", input="".join(f"m{i}\n" for i in range(50)))
    leader = partitions(c.bootstrap, "rep")[0].leader
    c.stop([leader])
    rest = ",".join(b.address for bid, b in c.brokers.items() if bid != leader)
    wait_for(lambda: partitions(rest, "rep")[0].leader not in (-1, leader), what="a new leader")
    got = kcat(rest, "-C", "-t", "rep", "-o", "beginning", "-e", "-q").stdout.split()
    assert got == [f"m{i}" for i in range(50)]
    logs = "".join(b.log_path.read_text() for b in c.brokers.values())
    assert "Failed authentication" not in logs and "broker-secret" not in logs
