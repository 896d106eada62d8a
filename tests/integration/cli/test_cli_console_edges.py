"""The console tools' edges from issue 25 on one module-scoped cluster with a SASL_SSL listener and ACLs:
keyed records on Kafka's partitions (murmur2), Java client property files accepted as they are
(PKCS12 truststore, sasl.jaas.config, serializers; a warning, never a failure, for the rest), a dead
bootstrap server named within seconds, and consumer failures that exit non-zero."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from kafka.partitioner.default import murmur2

from cli_helpers import REPO
from pylog.localcluster import LocalCluster
from pylog.security.certs import LocalCA
from pylog.zk.testing import unique_chroot
from support.clients import create_topic, kcat

pytestmark = pytest.mark.integration

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')


def tool(name: str, *args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([os.path.join(REPO, "bin", f"pylog-console-{name}.sh"), *args], input=input,
                          capture_output=True, text=True, timeout=timeout, cwd="/")


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A local CA, the broker's PEM keystore and a PKCS12 truststore made by keytool, as operators have them."""
    d = tmp_path_factory.mktemp("edges-ca")
    ca = LocalCA(d)
    ca.issue("broker", "/CN=localhost")
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "pylog-ca", "-file", str(ca.cert), "-keystore",
                    str(d / "truststore.p12"), "-storetype", "PKCS12", "-storepass", "trust-pw"],
                   check=True, capture_output=True, timeout=120)
    return ca, d / "truststore.p12"


@pytest.fixture(scope="module")
def edge_cluster(zk_server, _zk_root, tmp_path_factory, tls):
    ca, _ = tls
    chroot = unique_chroot("console-edges")
    overrides = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(ca.dir / "broker.keystore.pem"),
                 "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.cert),
                 "sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
                 # alice (no ACLs but READ on one topic) meets GROUP_AUTHORIZATION_FAILED; PLAINTEXT is a super user.
                 "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                 "super.users": "User:admin;User:ANONYMOUS"}
    c = LocalCluster(tmp_path_factory.mktemp("console-edges"), 1, zk_connect=f"{zk_server.connect_string}{chroot}",
                     overrides=overrides, extra_listeners={"SASL_SSL": "SASL_SSL"})
    try:
        yield c.start()
    finally:
        try:
            c.stop()
        except Exception:
            c.kill_all()
        _zk_root.delete_recursive(chroot)


def test_keyed_records_land_on_kafkas_partitions(edge_cluster):
    create_topic(edge_cluster.bootstrap, "keyed", partitions=5)
    keys = [f"user-{i}" for i in range(40)]
    r = tool("producer", "--bootstrap-server", edge_cluster.bootstrap, "--topic", "keyed", "--property",
             "parse.key=true", input="".join(f"{k}\tv\n" for k in keys))
    assert r.returncode == 0, r.stderr
    out = kcat(edge_cluster.bootstrap, "-C", "-t", "keyed", "-o", "beginning", "-e", "-f", "%k %p\n").stdout
    placed = dict(line.split() for line in out.splitlines())
    assert placed == {k: str((murmur2(k.encode()) & 0x7FFFFFFF) % 5) for k in keys}


def test_java_client_property_files_work_as_they_are(edge_cluster, tls, tmp_path):
    _, truststore = tls
    create_topic(edge_cluster.bootstrap, "secured", partitions=1)
    client_login = JAAS.replace(' user_admin="admin-secret" user_alice="alice-secret"', "")
    common = ("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
              f"sasl.jaas.config={client_login}\n"
              f"ssl.truststore.type=PKCS12\nssl.truststore.location={truststore}\nssl.truststore.password=trust-pw\n"
              "ssl.endpoint.identification.algorithm=\n")
    producer_cfg = tmp_path / "producer.properties"
    producer_cfg.write_text(common + "key.serializer=org.apache.kafka.common.serialization.StringSerializer\n"
                            "value.serializer=org.apache.kafka.common.serialization.StringSerializer\n"
                            "delivery.timeout.ms=30000\nmax.block.ms=10000\ninterceptor.classes=com.acme.Audit\n")
    consumer_cfg = tmp_path / "consumer.properties"
    consumer_cfg.write_text(common + "key.deserializer=org.apache.kafka.common.serialization.ByteArrayDeserializer\n"
                            "value.deserializer=org.apache.kafka.common.serialization.ByteArrayDeserializer\n"
                            "default.api.timeout.ms=60000\n")
    secure = edge_cluster.bootstrap_on("SASL_SSL")
    r = tool("producer", "--bootstrap-server", secure, "--topic", "secured", "--producer.config", str(producer_cfg),
             input="one\ntwo\n")
    assert r.returncode == 0, r.stderr
    warnings = r.stderr.splitlines()
    assert sorted(w.split()[5] for w in warnings) == ["interceptor.classes", "max.block.ms"], warnings
    assert all(w.startswith("WARNING: the Java client property ") and w.endswith("; it is ignored") for w in warnings)
    r = tool("consumer", "--bootstrap-server", secure, "--topic", "secured", "--consumer.config", str(consumer_cfg),
             "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000")
    assert (r.returncode, r.stdout) == (0, "one\ntwo\n"), r.stderr
    assert r.stderr.splitlines() == ["WARNING: the Java client property default.api.timeout.ms has no librdkafka "
                                     "equivalent; it is ignored", "Processed a total of 2 messages"]


def test_a_jks_truststore_gets_keytools_fix_not_a_traceback(edge_cluster, tmp_path):
    cfg = tmp_path / "jks.properties"
    cfg.write_text("security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.jks\n")
    r = tool("producer", "--bootstrap-server", edge_cluster.bootstrap, "--topic", "t", "--producer.config", str(cfg),
             input="x\n")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    assert "ssl.truststore.type=JKS is not supported by pylog" in r.stderr and "keytool -importkeystore" in r.stderr


DEAD = "WARN [{role} clientId={cid}] Connection to node -1 (/127.0.0.1:{port}) could not be established. Node may " \
       "not be available."


def test_a_dead_bootstrap_server_is_named_within_seconds():
    from pylog.zk.testing import free_port
    port = free_port()
    started = time.monotonic()
    r = tool("producer", "--bootstrap-server", f"127.0.0.1:{port}", "--topic", "t", input="x\n")
    assert time.monotonic() - started < 30  # librdkafka alone waits message.timeout.ms (2 minutes)
    assert (r.returncode, r.stderr) == (1, DEAD.format(role="Producer", cid="console-producer", port=port) + "\n")
    r = tool("consumer", "--bootstrap-server", f"127.0.0.1:{port}", "--topic", "t", "--group", "g")
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1] == DEAD.format(role="Consumer", cid="console-consumer", port=port)


def test_consumer_failures_exit_non_zero(edge_cluster, tls, tmp_path):
    r = tool("consumer", "--bootstrap-server", edge_cluster.bootstrap, "--topic", "never-made", "--group", "g1",
             "--timeout-ms", "20000")
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[-1].startswith("ERROR Error processing message, terminating consumer process: "
                                                "org.apache.kafka.common.errors.UnknownTopicOrPartitionException")
    create_topic(edge_cluster.bootstrap, "guarded")
    acls = subprocess.run([os.path.join(REPO, "bin", "pylog-acls.sh"), "--bootstrap-server", edge_cluster.bootstrap,
                           "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "guarded"],
                          capture_output=True, text=True, timeout=120)
    assert acls.returncode == 0, acls.stderr
    _, truststore = tls
    cfg = tmp_path / "alice.properties"
    cfg.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common."
                   'security.plain.PlainLoginModule required username="alice" password="alice-secret";\n'
                   f"ssl.truststore.location={truststore}\nssl.truststore.type=PKCS12\n"
                   "ssl.truststore.password=trust-pw\nssl.endpoint.identification.algorithm=\n")
    r = tool("consumer", "--bootstrap-server", edge_cluster.bootstrap_on("SASL_SSL"), "--topic", "guarded",
             "--group", "alices", "--consumer.config", str(cfg), "--timeout-ms", "20000")
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[-1].startswith("ERROR Error processing message, terminating consumer process: "
                                                "org.apache.kafka.common.errors.GroupAuthorizationException")


def test_a_plaintext_tool_on_a_secured_port_says_what_is_wrong(edge_cluster):
    """Issue 25 edge 10: not 'connection closed by broker' but what the listener wants."""
    r = subprocess.run([os.path.join(REPO, "bin", "pylog-topics.sh"), "--bootstrap-server",
                        edge_cluster.bootstrap_on("SASL_SSL"), "--list"], capture_output=True, text=True, timeout=120)
    host_port = edge_cluster.bootstrap_on("SASL_SSL")
    assert (r.returncode, r.stderr) == (1, "Error while executing topic command : Request to "
                                           f"{host_port} failed: connection closed by broker (the listener at "
                                           f"{host_port} speaks TLS: give --command-config a file with "
                                           "security.protocol=SSL or SASL_SSL and ssl.truststore.location)\n")
