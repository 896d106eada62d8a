"""TLS and SASL listeners with stock clients: kcat, confluent-kafka, kafka-python, aiokafka.

Each client keeps its defaults apart from the security settings a user sets. Failures (wrong password,
unknown user, wrong mechanism, no or expired client certificate, plaintext bytes on a TLS port) get a
clear error, close that connection only, and leave no secret in the broker's log.
"""

import asyncio
import socket
import ssl
import struct

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.helpers import create_ssl_context
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
from kafka import KafkaConsumer, TopicPartition

from support.clients import create_topic, kcat, wait_for

pytestmark = pytest.mark.integration


def _kcat_secure(bootstrap, *args, **kw):
    import subprocess
    return subprocess.run(["kcat", "-b", bootstrap, *args], capture_output=True, text=True, timeout=60, **kw)


def _add_scram(cluster, user, password, mechanism=ScramMechanism.SCRAM_SHA_512):
    """Set a credential through the broker and wait until it applied it: as ZK-mode Kafka's, its answer comes
    before its /config/changes notification reaches its own credential cache."""
    line = f"Updated SCRAM credentials of user {user} ("
    before = _broker_log(cluster).count(line)
    a = AdminClient({"bootstrap.servers": cluster.bootstrap})
    ups = UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 4096), password.encode())
    assert a.alter_user_scram_credentials([ups])[user].result(30) is None
    wait_for(lambda: _broker_log(cluster).count(line) > before, 30, f"the broker to apply {user}'s credential")


def _broker_log(cluster):
    return "".join(b.log_path.read_text() for b in cluster.brokers.values())


def test_metadata_advertises_the_listener_the_client_came_in_on(secure_cluster, ca):
    c = secure_cluster
    plain = kcat(c.bootstrap, "-L").stdout
    assert f"broker 0 at {c.bootstrap} (controller)" in plain
    sasl = _kcat_secure(c.bootstrap_on("SASL_PLAINTEXT"), "-L", "-X", "security.protocol=SASL_PLAINTEXT",
                        "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret")
    assert sasl.returncode == 0, sasl.stderr
    assert f"broker 0 at {c.bootstrap_on('SASL_PLAINTEXT')} (controller)" in sasl.stdout


def test_kcat_sasl_ssl_scram_sha_512_and_refusals(secure_cluster, ca):
    c = secure_cluster
    _add_scram(c, "bob", "bob-secret")
    create_topic(c.bootstrap, "scram")
    base = ["-X", "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={ca.cert}", "-X", "sasl.mechanisms=SCRAM-SHA-512"]
    ok = ["-X", "sasl.username=bob", "-X", "sasl.password=bob-secret"]
    bs = c.bootstrap_on("SASL_SSL")
    produced = _kcat_secure(bs, *base, *ok, "-P", "-t", "scram", input="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    consumed = _kcat_secure(bs, *base, *ok, "-C", "-t", "scram", "-o", "beginning", "-e", "-q")
    assert consumed.stdout.split() == ["one", "two"]

    wrong = _kcat_secure(bs, *base, "-X", "sasl.username=bob", "-X", "sasl.password=not-it", "-L", "-m", "3")
    assert wrong.returncode != 0
    assert "Authentication failed during authentication due to invalid credentials with SASL mechanism " \
           "SCRAM-SHA-512" in wrong.stderr
    unknown = _kcat_secure(bs, *base, "-X", "sasl.username=nobody", "-X", "sasl.password=x", "-L", "-m", "3")
    assert unknown.returncode != 0 and "invalid credentials" in unknown.stderr
    # SCRAM-SHA-256 has no credential for bob: the same refusal, no hint which part was wrong.
    other_mech = _kcat_secure(bs, "-X", "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={ca.cert}",
                              "-X", "sasl.mechanisms=SCRAM-SHA-256", *ok, "-L", "-m", "3")
    assert other_mech.returncode != 0 and "invalid credentials" in other_mech.stderr
    # The SASL_PLAINTEXT listener enables only PLAIN (listener.name.sasl_plaintext.sasl.enabled.mechanisms).
    unsupported = _kcat_secure(c.bootstrap_on("SASL_PLAINTEXT"), "-X", "security.protocol=SASL_PLAINTEXT",
                               "-X", "sasl.mechanisms=SCRAM-SHA-512", *ok, "-L", "-m", "3")
    assert unsupported.returncode != 0
    assert "Unsupported SASL mechanism" in unsupported.stderr and "PLAIN" in unsupported.stderr

    # A new password works once the broker applied it (config change notification), the old one no longer does.
    _add_scram(c, "bob", "new-secret")
    renewed = ["-X", "sasl.username=bob", "-X", "sasl.password=new-secret"]
    assert _kcat_secure(bs, *base, *renewed, "-L", "-m", "3").returncode == 0
    assert _kcat_secure(bs, *base, *ok, "-L", "-m", "3").returncode != 0

    log = _broker_log(c)
    assert "Failed authentication with" in log
    for secret in ("bob-secret", "not-it", "new-secret", "alice-secret"):
        assert secret not in log
    assert kcat(c.bootstrap, "-L").returncode == 0  # the broker serves on


def test_confluent_kafka_sasl_plaintext_plain(secure_cluster):
    c = secure_cluster
    create_topic(c.bootstrap, "plain")
    conf = {"bootstrap.servers": c.bootstrap_on("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
    p = Producer(conf)
    for i in range(5):
        p.produce("plain", f"m{i}".encode())
    assert p.flush(30) == 0
    consumer = Consumer({**conf, "group.id": "g-plain", "auto.offset.reset": "earliest"})
    consumer.assign([__import__("confluent_kafka").TopicPartition("plain", 0, 0)])
    got = []
    wait_for(lambda: got.extend(m.value() for m in consumer.consume(10, 1) if m.error() is None) or len(got) >= 5,
             what="5 records")
    consumer.close()
    assert got == [f"m{i}".encode() for i in range(5)]

    errors = []
    bad = AdminClient({**conf, "sasl.password": "wrong", "error_cb": errors.append})
    with pytest.raises(Exception):
        bad.list_topics(timeout=5)
    wait_for(lambda: bad.poll(0.2) >= 0 and errors, what="the error callback")  # delivered by poll()
    assert any("Invalid username or password" in e.str() for e in errors)


def test_kafka_python_ssl_with_client_certificate(secure_cluster, ca):
    c = secure_cluster
    create_topic(c.bootstrap, "tls")
    kcat(c.bootstrap, "-P", "-t", "tls", input="a\nb\n")
    consumer = KafkaConsumer(bootstrap_servers=c.bootstrap_on("SSL"), security_protocol="SSL",
                             ssl_cafile=str(ca.cert), ssl_certfile=str(ca.dir / "alice.crt"),
                             ssl_keyfile=str(ca.dir / "alice.key"), auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)
    try:
        consumer.assign([TopicPartition("tls", 0)])
        assert [m.value for m in consumer] == [b"a", b"b"]
    finally:
        consumer.close()


def test_tls_refusals_close_only_that_connection(secure_cluster, ca):
    c = secure_cluster
    port = int(c.bootstrap_on("SSL").split(":")[1])
    # Plaintext Kafka bytes on the TLS port: no answer, the connection closed.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack(">ihhi", 10, 18, 0, 1) + b"\x00\x00")
        data = b""
        while chunk := s.recv(4096):  # until the broker closes it (the socket timeout fails the test)
            data += chunk
        assert data == b"" or data[0] == 0x15  # at most a TLS alert record, never a Kafka response
    # No client certificate where ssl.client.auth=required, and an expired one: refused.
    for cert in (None, "expired"):
        ctx = ssl.create_default_context(cafile=str(ca.cert))
        if cert:
            ctx.load_cert_chain(str(ca.dir / f"{cert}.crt"), str(ca.dir / f"{cert}.key"))
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.sendall(struct.pack(">ihhi", 10, 18, 0, 1) + b"\x00\x00")
                    if not tls.recv(4):
                        raise ConnectionError("closed")
    assert kcat(c.bootstrap, "-L").returncode == 0


def test_aiokafka_sasl_ssl_scram_sha_256(secure_cluster, ca):
    c = secure_cluster
    _add_scram(c, "carol", "carol-secret", ScramMechanism.SCRAM_SHA_256)
    create_topic(c.bootstrap, "aio")
    opts = dict(bootstrap_servers=c.bootstrap_on("SASL_SSL"), security_protocol="SASL_SSL",
                sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="carol", sasl_plain_password="carol-secret",
                ssl_context=create_ssl_context(cafile=str(ca.cert)))

    async def run():
        producer = AIOKafkaProducer(**opts)
        await producer.start()
        try:
            meta = await producer.send_and_wait("aio", b"hello")
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(**opts, auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([__import__("aiokafka").TopicPartition("aio", 0)])
            batch = await consumer.getmany(timeout_ms=10000)
        finally:
            await consumer.stop()
        return meta.offset, [r.value for records in batch.values() for r in records]

    assert asyncio.run(asyncio.wait_for(run(), 60)) == (0, [b"hello"])
