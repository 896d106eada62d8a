"""Every bin/pylog-*.sh tool takes --command-config (client properties) for a TLS/SASL listener."""

import os
import subprocess

import pytest

from .test_acls import acl_cluster  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def tool(name, *args):
    return subprocess.run([os.path.join(REPO, "bin", name), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO})


def client_props(tmp_path, ca, user, protocol="SASL_SSL"):
    path = tmp_path / f"{user}.properties"
    path.write_text(f"security.protocol={protocol}\nsasl.mechanism=PLAIN\nssl.truststore.type=PEM\n"
                    f"ssl.truststore.location={ca.cert}\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                    f'username="{user}" password="{user}-secret";\n')
    return str(path)


def test_tools_over_sasl_ssl_with_command_config(acl_cluster, ca, tmp_path):  # noqa: F811
    c = acl_cluster
    bs = c.bootstrap_on("SASL_SSL")
    admin = client_props(tmp_path, ca, "admin")
    r = tool("pylog-topics.sh", "--bootstrap-server", bs, "--command-config", admin, "--create", "--topic", "sec",
             "--partitions", "2", "--replication-factor", "1")
    assert r.returncode == 0 and r.stdout.strip() == "Created topic sec.", r.stderr
    r = tool("pylog-acls.sh", "--bootstrap-server", bs, "--command-config", admin, "--add", "--allow-principal",
             "User:alice", "--operation", "Read", "--topic", "sec")
    assert r.returncode == 0 and "operation=READ" in r.stdout, r.stderr
    r = tool("pylog-configs.sh", "--bootstrap-server", bs, "--command-config", admin, "--describe", "--topic", "sec")
    assert r.returncode == 0 and r.stdout.startswith("Dynamic configs for topic sec are:"), r.stderr

    alice = client_props(tmp_path, ca, "alice")
    refused = tool("pylog-acls.sh", "--bootstrap-server", bs, "--command-config", alice, "--add",
                   "--allow-principal", "User:alice", "--operation", "All", "--topic", "sec")
    assert refused.returncode == 1 and "Cluster authorization failed." in refused.stderr
    refused = tool("pylog-topics.sh", "--bootstrap-server", bs, "--command-config", alice, "--delete", "--topic",
                   "sec")
    assert refused.returncode == 1 and "Topic authorization failed." in refused.stderr

    wrong = tmp_path / "wrong.properties"
    wrong.write_text(open(alice).read().replace("alice-secret", "nope"))
    r = tool("pylog-topics.sh", "--bootstrap-server", bs, "--command-config", str(wrong), "--list")
    assert r.returncode == 1 and "SASL authentication failed: Authentication failed: Invalid username or password" \
        in r.stderr and "nope" not in r.stderr
