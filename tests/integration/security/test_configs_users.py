"""bin/pylog-configs.sh --entity-type users: SCRAM credentials through ZooKeeper and through a broker.

The script is run as an operator runs it; once the broker applied the change (ZK-mode Kafka's brokers, the one
that wrote it included, follow the /config/changes notification: its answer does not wait for that), the
credential logs in over SASL_SSL with kcat.
"""

import json
import os
import subprocess

import pytest

from pylog.security.scram import ScramCredential
from support.clients import wait_for

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def configs(*args):
    return subprocess.run([os.path.join(REPO, "bin", "pylog-configs.sh"), *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": REPO})


def scram_login(cluster, ca, user, password, mechanism="SCRAM-SHA-256"):
    return subprocess.run(["kcat", "-b", cluster.bootstrap_on("SASL_SSL"), "-L", "-m", "3", "-X",
                           "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={ca.cert}", "-X",
                           f"sasl.mechanisms={mechanism}", "-X", f"sasl.username={user}", "-X",
                           f"sasl.password={password}"], capture_output=True, text=True, timeout=60)


def applied(cluster, user):
    """A function that waits until the broker has applied one more change of `user`'s credentials than now."""
    line = f"Updated SCRAM credentials of user {user} ("
    before = cluster.brokers[0].log_path.read_text().count(line)
    return lambda: wait_for(lambda: cluster.brokers[0].log_path.read_text().count(line) > before, 30,
                            f"the broker to apply the change of {user}'s credentials")


def test_configs_users_through_zookeeper_and_bootstrap(secure_cluster, ca, zk):
    c = secure_cluster
    alice = applied(c, "alice")
    r = configs("--zookeeper", c.zk_connect, "--alter", "--add-config",
                "SCRAM-SHA-256=[iterations=8192,password=alice-pw],SCRAM-SHA-512=[password=alice-pw]",
                "--entity-type", "users", "--entity-name", "alice")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Completed updating config for entity: user-principal 'alice'."
    stored = json.loads(zk.get("/config/users/alice")[0])["config"]
    assert ScramCredential.from_text(stored["SCRAM-SHA-256"]).iterations == 8192
    assert ScramCredential.from_text(stored["SCRAM-SHA-512"]).iterations == 4096
    alice()
    assert scram_login(c, ca, "alice", "alice-pw").returncode == 0

    r = configs("--bootstrap-server", c.bootstrap, "--describe", "--entity-type", "users", "--entity-name", "alice")
    assert r.stdout.strip() == ("SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, "
                                "SCRAM-SHA-512=iterations=4096")
    r = configs("--zookeeper", c.zk_connect, "--describe", "--entity-type", "users", "--entity-name", "alice")
    assert r.stdout.startswith("Configs for user-principal 'alice' are SCRAM-SHA-256=salt=")

    bob = applied(c, "bob")
    r = configs("--bootstrap-server", c.bootstrap, "--alter", "--add-config", "SCRAM-SHA-256=[password=bob-pw]",
                "--entity-type", "users", "--entity-name", "bob")
    assert r.returncode == 0 and r.stdout.strip() == "Completed updating config for user bob.", r.stderr
    bob()
    assert scram_login(c, ca, "bob", "bob-pw").returncode == 0

    alice = applied(c, "alice")
    r = configs("--bootstrap-server", c.bootstrap, "--alter", "--delete-config", "SCRAM-SHA-256",
                "--entity-type", "users", "--entity-name", "alice")
    assert r.returncode == 0, r.stderr
    alice()
    failed = scram_login(c, ca, "alice", "alice-pw")
    assert failed.returncode != 0 and "invalid credentials" in failed.stderr
    assert scram_login(c, ca, "alice", "alice-pw", "SCRAM-SHA-512").returncode == 0

    bad = configs("--bootstrap-server", c.bootstrap, "--alter", "--add-config",
                  "SCRAM-SHA-256=[iterations=10,password=x]", "--entity-type", "users", "--entity-name", "carol")
    assert bad.returncode == 1 and "Too few iterations" in bad.stderr
    gone = configs("--bootstrap-server", c.bootstrap, "--alter", "--delete-config", "SCRAM-SHA-256",
                   "--entity-type", "users", "--entity-name", "carol")
    assert gone.returncode == 1 and "Attempt to delete a user credential that does not exist" in gone.stderr
    nopw = configs("--zookeeper", c.zk_connect, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192]",
                   "--entity-type", "users", "--entity-name", "dave")
    assert nopw.returncode == 1 and "password= is required" in nopw.stderr
