"""bin/pylog-acls.sh: kafka-acls.sh's flags and texts, through a broker and through ZooKeeper."""

import json
import os
import subprocess

import pytest

from .test_acls import acl_cluster  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOPIC_T = "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"


def acls(*args, input=None):
    return subprocess.run([os.path.join(REPO, "bin", "pylog-acls.sh"), *args], capture_output=True, text=True,
                          timeout=120, input=input, env={**os.environ, "PYTHONPATH": REPO})


def test_add_list_remove_through_the_broker(acl_cluster):  # noqa: F811
    bs = ["--bootstrap-server", acl_cluster.bootstrap]
    r = acls(*bs, "--add", "--allow-principal", "User:alice", "--producer", "--topic", "t")
    assert r.returncode == 0, r.stderr
    entries = [f"\t(principal=User:alice, host=*, operation={op}, permissionType=ALLOW)"
               for op in ("CREATE", "DESCRIBE", "WRITE")]
    block = f" {chr(10).join(entries)} \n"
    assert r.stdout == (f"Adding ACLs for resource `{TOPIC_T}`: \n{block}\n"
                        f"Current ACLs for resource `{TOPIC_T}`: \n{block}\n")

    r = acls(*bs, "--list", "--topic", "t")
    assert r.stdout == f"Current ACLs for resource `{TOPIC_T}`: \n{block}\n"
    r = acls(*bs, "--list", "--principal", "User:bob")
    assert r.stdout == "ACLs for principal `User:bob`\n"

    # Without --force the tool asks first; "n" keeps the ACL.
    r = acls(*bs, "--remove", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t", input="n\n")
    assert r.stdout.startswith("Are you sure you want to remove ACLs: \n \t(principal=User:alice, host=*, "
                               "operation=WRITE, permissionType=ALLOW) \n from resource filter "
                               f"`{TOPIC_T}`? (y/n)\n")
    assert "operation=WRITE" in acls(*bs, "--list", "--topic", "t").stdout
    r = acls(*bs, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t")
    assert r.returncode == 0 and "operation=WRITE" not in r.stdout and "operation=CREATE" in r.stdout

    bad = acls(*bs, "--add", "--allow-principal", "User:alice", "--operation", "IdempotentWrite", "--topic", "t")
    assert bad.returncode != 0 and "ResourceType TOPIC only supports operations" in bad.stderr
    none = acls(*bs, "--add", "--topic", "t", "--operation", "Read")
    assert none.returncode != 0 and "You must specify one of: --allow-principal, --deny-principal" in none.stderr
    both = acls(*bs, "--list", "--add")
    assert both.returncode != 0 and "Command must include exactly one action: --list, --add, --remove." in both.stderr


def test_consumer_and_prefixed_through_zookeeper(acl_cluster, zk):  # noqa: F811
    zkp = ["--authorizer-properties", f"zookeeper.connect={acl_cluster.zk_connect}"]
    r = acls(*zkp, "--add", "--allow-principal", "User:bob", "--consumer", "--topic", "logs-", "--group", "g",
             "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stderr
    assert "Warning: support for ACL configuration directly through the authorizer is deprecated" in r.stderr
    assert ("Adding ACLs for resource `ResourcePattern(resourceType=GROUP, name=g, patternType=PREFIXED)`: \n "
            "\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n") in r.stdout
    stored = json.loads(zk.get("/kafka-acl-extended/prefixed/Topic/logs-")[0])
    assert sorted(a["operation"] for a in stored["acls"]) == ["Describe", "Read"]
    r = acls("--bootstrap-server", acl_cluster.bootstrap, "--list", "--topic", "logs-", "--resource-pattern-type",
             "prefixed")
    assert "(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)" in r.stdout
    r = acls(*zkp, "--remove", "--force", "--topic", "logs-", "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stderr
    assert zk.exists("/kafka-acl-extended/prefixed/Topic/logs-") is None
