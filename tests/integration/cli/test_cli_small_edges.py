"""Issue 25 edge 10's smaller points: pylog-zookeeper-server-start.sh --help, a --zookeeper without the
chroot warns and names the chroots, --output json failures are JSON."""

from __future__ import annotations

import json

import pytest

from cli_helpers import script

pytestmark = pytest.mark.integration


def test_zookeeper_server_start_help():
    r = script("pylog-zookeeper-server-start.sh", "--help")
    assert r.returncode == 0 and r.stdout.startswith("USAGE: ") and "[-daemon] zookeeper.properties" in r.stdout


def test_zookeeper_without_the_chroot_warns_and_names_it(cluster, zk_server):
    chroot = "/" + cluster.zk_connect.split("/", 1)[1]
    r = script("pylog-topics.sh", "--zookeeper", zk_server.connect_string, "--list")
    assert r.returncode == 0 and r.stdout == ""
    warning = r.stderr.strip()
    assert warning.startswith(f"WARNING: no pylog cluster at the root of ZooKeeper at {zk_server.connect_string}; "
                              "clusters live under ") and chroot in warning
    r = script("pylog-topics.sh", "--zookeeper", cluster.zk_connect, "--list")
    assert r.returncode == 0 and r.stderr == ""


def test_output_json_failures_are_json(cluster):
    r = script("pylog-topics.sh", "--bootstrap-server", cluster.bootstrap, "--describe", "--topic", "nope",
               "--output", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["exit_code"] == 1 and "nope" in doc["error"]
    assert len(r.stderr.splitlines()) == 1
    r = script("pylog-configs.sh", "--bootstrap-server", cluster.bootstrap, "--entity-type", "brokers",
               "--entity-default", "--alter", "--add-config", "log.cleaner.threads=-1", "--output", "json")
    assert r.returncode == 1 and "Value must be at least 0" in json.loads(r.stdout)["error"]
