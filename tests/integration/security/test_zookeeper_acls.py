"""zookeeper.set.acl=true with ZooKeeper digest authentication, against the real ZooKeeper.

The broker and the tools log in with the JAAS Client section that KAFKA_OPTS names, as Kafka's do;
what they create is creator-all + world-read, and creator-only for SCRAM credentials. A session that
did not log in (or logged in as someone else) can read the cluster's layout but change nothing and
read no credential.
"""

import json
import os
import subprocess

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from pylog.localcluster import wait_until
from pylog.zk.client import ZkClient

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
JAAS = """// the broker's and the tools' ZooKeeper login
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="kafka-zk-secret";
};
"""


@pytest.fixture
def zk_login_env(tmp_path, zk_connect):
    """KAFKA_OPTS naming a JAAS file with a Client section; at the end, the chroot is removed as that login."""
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(JAAS)
    env = {"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"}
    yield env
    # Only the login that created the znodes may delete below them: clean up before the chroot fixture does.
    with ZkClient(zk_connect, session_timeout_ms=10000, auth_data=[("digest", "kafka:kafka-zk-secret")]) as zk:
        zk.delete_recursive("/")


def tool(name, *args, env=None):
    return subprocess.run([os.path.join(REPO, "bin", name), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO, **(env or {})})


def kazoo_session(zk_connect, auth=None):
    client = KazooClient(hosts=zk_connect, auth_data=auth)
    client.start(timeout=15)
    return client


def test_znodes_get_kafkas_acls_and_only_the_login_may_change_them(zk_login_env, cluster_factory, zk_connect):
    c = cluster_factory(1, overrides={"zookeeper.set.acl": "true"}, env=zk_login_env)
    r = tool("pylog-configs.sh", "--zookeeper", zk_connect, "--alter", "--add-config",
             "SCRAM-SHA-512=[password=alice-pw]", "--entity-type", "users", "--entity-name", "alice", env=zk_login_env)
    assert r.returncode == 0, r.stderr
    r = tool("pylog-topics.sh", "--zookeeper", zk_connect, "--create", "--topic", "orders", "--partitions", "2",
             "--replication-factor", "1", env=zk_login_env)
    assert r.returncode == 0, r.stderr
    wait_until(lambda: "Leader: 0" in tool("pylog-topics.sh", "--bootstrap-server", c.bootstrap, "--describe",
                                           "--topic", "orders").stdout, 60, "orders to get a leader")

    anonymous = stranger = login = None
    try:
        anonymous = kazoo_session(zk_connect)
        stranger = kazoo_session(zk_connect, [("digest", "kafka:wrong-password")])
        for client in (anonymous, stranger):
            # The layout stays world-readable, as in Kafka ...
            assert json.loads(client.get("/brokers/ids/0")[0])["port"] == c.brokers[0].port
            assert sorted(client.get_children("/brokers/topics/orders/partitions")) == ["0", "1"]
            # ... but nothing can be registered, changed or read where credentials live.
            with pytest.raises(NoAuthError):
                client.create("/brokers/ids/7", b"{}")
            with pytest.raises(NoAuthError):
                client.set("/brokers/topics/orders", b"{}")
            with pytest.raises(NoAuthError):
                client.create("/admin/delete_topics/orders")
            with pytest.raises(NoAuthError):
                client.get("/config/users/alice")
        with pytest.raises(NoAuthError):  # ZooKeeper shows a znode's ACL only to who may read it
            anonymous.get_acls("/config/users/alice")
        login = kazoo_session(zk_connect, [("digest", "kafka:kafka-zk-secret")])
        acl_of = {path: {(a.id.scheme, a.perms) for a in login.get_acls(path)[0]}
                  for path in ("/brokers/ids/0", "/config/users/alice", "/config/topics/orders")}
    finally:
        for client in filter(None, (anonymous, stranger, login)):
            client.stop()
            client.close()
    assert acl_of["/brokers/ids/0"] == {("digest", 31), ("world", 1)}
    assert acl_of["/config/topics/orders"] == {("digest", 31), ("world", 1)}
    assert acl_of["/config/users/alice"] == {("digest", 31)}

    # A tool without the login is refused with one clear line; with it, it reads the credential.
    r = tool("pylog-configs.sh", "--zookeeper", zk_connect, "--alter", "--add-config",
             "SCRAM-SHA-512=[password=mallory]", "--entity-type", "users", "--entity-name", "alice")
    assert r.returncode == 1 and "Not authorized by the znode's ZooKeeper ACL" in r.stderr, r.stderr
    r = tool("pylog-configs.sh", "--zookeeper", zk_connect, "--describe", "--entity-type", "users",
             "--entity-name", "alice", env=zk_login_env)
    assert r.returncode == 0 and "SCRAM-SHA-512=salt=" in r.stdout, r.stderr


def test_set_acl_without_a_zookeeper_login_refuses_to_start(cluster_factory, tmp_path):
    with pytest.raises(Exception) as failed:
        cluster_factory(1, overrides={"zookeeper.set.acl": "true"}, env={"KAFKA_OPTS": ""})
    assert "zookeeper.set.acl is true, but the verification of the JAAS login file failed" in str(failed.value)


def test_security_migration_secures_existing_znodes_and_opens_them_again(zk_login_env, cluster_factory, zk_connect):
    # Kafka's procedure: brokers log in first (zookeeper.set.acl still false: open znodes), then the migration.
    c = cluster_factory(1, env=zk_login_env)
    r = tool("pylog-configs.sh", "--zookeeper", zk_connect, "--alter", "--add-config",
             "SCRAM-SHA-512=[password=alice-pw]", "--entity-type", "users", "--entity-name", "alice")
    assert r.returncode == 0, r.stderr
    r = tool("pylog-topics.sh", "--bootstrap-server", c.bootstrap, "--create", "--topic", "old", "--partitions", "1",
             "--replication-factor", "1")
    assert r.returncode == 0, r.stderr

    r = tool("pylog-zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect", zk_connect)
    assert r.returncode == 1 and "No JAAS configuration file has been specified" in r.stderr
    r = tool("pylog-zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect",
             zk_connect + "-typo", "--enable.path.check", env=zk_login_env)
    assert r.returncode == 1 and r.stdout.startswith(
        "Warning: The following secure root paths do not exist in ZooKeeper: /admin,/brokers"), r.stdout
    r = tool("pylog-zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect", zk_connect,
             "--output", "json", env=zk_login_env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["znodes"] > 20

    anonymous = kazoo_session(zk_connect)
    try:
        with pytest.raises(NoAuthError):
            anonymous.set("/brokers/topics/old", b"{}")
        with pytest.raises(NoAuthError):
            anonymous.get("/config/users/alice")
        assert json.loads(anonymous.get("/brokers/ids/0")[0])["port"] == c.brokers[0].port
        anonymous.create("/consumers/old-consumer")  # the old consumers' tree stays open, as in Kafka
        # The broker, logged in as the znodes' owner, still creates topics.
        r = tool("pylog-topics.sh", "--bootstrap-server", c.bootstrap, "--create", "--topic", "new", "--partitions",
                 "1", "--replication-factor", "1")
        assert r.returncode == 0, r.stderr

        r = tool("pylog-zookeeper-security-migration.sh", "--zookeeper.acl", "unsecure", "--zookeeper.connect",
                 zk_connect, env=zk_login_env)
        assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr
        assert json.loads(anonymous.get("/config/users/alice")[0])["config"]["SCRAM-SHA-512"].startswith("salt=")
    finally:
        anonymous.stop()
        anonymous.close()
