"""Kafka 3.9's read-only operator tools against one real two-broker cluster (broker 1 has two log dirs):
pylog-log-dirs.sh, pylog-get-offsets.sh, pylog-broker-api-versions.sh, pylog-cluster.sh.
Each run goes through bin/ as an operator would and is compared with Kafka's output format."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from cli_helpers import REPO, script
from support.clients import create_topic, kcat
from tools_cluster import module_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def ops_cluster(zk_server, _zk_root, tmp_path_factory):
    base = tmp_path_factory.mktemp("ops-dirs")
    dirs = f"{base}/d1,{base}/d2"
    yield from module_cluster(zk_server, _zk_root, tmp_path_factory, "ops-tools", 2,
                              broker_overrides={1: {"log.dirs": dirs}})


@pytest.fixture(scope="module")
def ops_topic(ops_cluster):
    """'ops' with 3 partitions (RF 1) holding 5/3/0 records, 'other' with 1 empty partition."""
    create_topic(ops_cluster.bootstrap, "ops", partitions=3, rf=1)
    create_topic(ops_cluster.bootstrap, "other", partitions=1, rf=1)
    kcat(ops_cluster.bootstrap, "-P", "-t", "ops", "-p", "0", input="".join(f"m{i}\n" for i in range(5)))
    for i in range(3):  # one at a time: three distinct timestamps, the last the highest
        time.sleep(0.005)
        kcat(ops_cluster.bootstrap, "-P", "-t", "ops", "-p", "1", input=f"m{i}\n")
    return "ops"


def test_log_dirs_describe_prints_kafkas_lines_and_json(ops_cluster, ops_topic):
    r = script("pylog-log-dirs.sh", "--describe", "--bootstrap-server", ops_cluster.bootstrap, "--topic-list", "ops")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["Querying brokers for log directories information",
                         "Received log directory information from brokers 0,1"]
    assert len(lines) == 3
    # Kafka's Jackson output of its HashMaps: compact, keys in HashMap order.
    assert lines[2].startswith('{"brokers":[{"broker":0,"logDirs":[{"partitions":[')
    assert lines[2].endswith('],"version":1}')
    doc = json.loads(lines[2])
    dirs = {b["broker"]: b["logDirs"] for b in doc["brokers"]}
    assert set(dirs) == {0, 1} and len(dirs[1]) == 2 and len(dirs[0]) == 1
    for d in dirs[1]:
        assert list(d) == ["partitions", "error", "logDir"] and d["error"] is None
        for p in d["partitions"]:
            assert list(p) == ["partition", "size", "offsetLag", "isFuture"]
    replicas = {p["partition"]: p for d in dirs[0] + dirs[1] for p in d["partitions"]}
    assert set(replicas) == {"ops-0", "ops-1", "ops-2"}  # --topic-list leaves 'other' out
    assert replicas["ops-0"]["size"] > 0 and replicas["ops-1"]["size"] > 0 and replicas["ops-2"]["size"] == 0
    assert all(p["offsetLag"] == 0 and p["isFuture"] is False for p in replicas.values())

    r = script("pylog-log-dirs.sh", "--describe", "--bootstrap-server", ops_cluster.bootstrap, "--broker-list", "0,7")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.strip() == ("ERROR: The given brokers do not exist from --broker-list: 7. Current existent "
                                "brokers: 0,1")
    r = script("pylog-log-dirs.sh", "--bootstrap-server", ops_cluster.bootstrap)
    assert r.returncode == 2 and 'Missing required argument "[describe]"' in r.stderr


def test_get_offsets_prints_topic_partition_offset_lines(ops_cluster, ops_topic):
    bs = ops_cluster.bootstrap
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--topic", "ops")
    assert (r.returncode, r.stdout) == (0, "ops:0:5\nops:1:3\nops:2:0\n"), r.stderr
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--topic", "ops", "--partitions", "1", "--time", "-2")
    assert r.stdout == "ops:1:0\n"
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--topic-partitions", "ops:1-,oth.*", "--time",
               "earliest")
    assert r.stdout == "ops:1:0\nops:2:0\nother:0:0\n"
    # -3: the offset of the record with the highest timestamp (the last one written); an empty partition has none.
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--topic", "ops", "--partitions", "1,2", "--time", "-3")
    assert r.stdout == "ops:1:2\n", r.stderr
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--topic", "nope.*")
    assert (r.returncode, r.stderr.strip()) == (
        1, "Error occurred: Could not match any topic-partitions with the specified filters")
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--time", "yesterday")
    assert r.returncode == 1 and r.stderr.startswith("Error occurred: Malformed time argument yesterday. Please use")
    r = script("pylog-get-offsets.sh", "--bootstrap-server", bs, "--topic", "ops", "--topic-partitions", "ops")
    assert r.stderr.strip() == "Error occurred: --topic-partitions cannot be used with --topic or --partitions"


def test_get_offsets_excludes_internal_topics(ops_cluster, ops_topic):
    kcat(ops_cluster.bootstrap, "-C", "-G", "ops-g", "ops", "-e", "-o", "beginning", timeout=60)
    r = script("pylog-get-offsets.sh", "--bootstrap-server", ops_cluster.bootstrap, "--topic", "__consumer_offsets",
               "--partitions", "0")
    assert re.fullmatch(r"__consumer_offsets:0:\d+\n", r.stdout), r.stderr
    r = script("pylog-get-offsets.sh", "--bootstrap-server", ops_cluster.bootstrap, "--topic", "__consumer_offsets",
               "--exclude-internal-topics")
    assert r.returncode == 1 and "Could not match any topic-partitions" in r.stderr


def test_broker_api_versions_prints_node_api_versions(ops_cluster):
    r = script("pylog-broker-api-versions.sh", "--bootstrap-server", ops_cluster.bootstrap)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    heads = [i for i, line in enumerate(lines) if " -> (" in line]
    assert len(heads) == 2
    for bid, start in enumerate(heads):
        address = ops_cluster.brokers[bid].address
        assert lines[start] == f"{address} (id: {bid} rack: null) -> ("
        block = lines[start + 1:lines.index(")", start)]
        assert all(line.startswith("\t") for line in block)
        assert all(line.endswith(",") for line in block[:-1]) and not block[-1].endswith(",")
        assert "\tApiVersions(18): 0 to 4 [usable: 4]," in block
        assert "\tProduce(0): " in block[0] and " [usable: " in block[0]
        assert "\tUnregisterBroker(64): UNSUPPORTED," in block  # KRaft-only
        ids = [int(re.match(r"\t\w+\((\d+)\)", line).group(1)) for line in block]
        assert ids == sorted(ids) and ids[-1] == 87


def test_cluster_id_matches_zookeeper(ops_cluster, ops_topic):
    from pylog.zk.client import ZkClient
    zk = ZkClient(ops_cluster.zk_connect, create_chroot=False).start()
    try:
        cid = zk.get_cluster_id()
    finally:
        zk.close()
    r = script("pylog-cluster.sh", "cluster-id", "--bootstrap-server", ops_cluster.bootstrap)
    assert (r.returncode, r.stdout) == (0, f"Cluster ID: {cid}\n"), r.stderr
    r = script("pylog-cluster.sh", "unregister", "-b", ops_cluster.bootstrap, "--id", "1")
    assert (r.returncode, r.stdout) == (0, "The target cluster does not support the broker unregistration API.\n")
    r = script("pylog-cluster.sh", "cluster-id")
    assert r.returncode == 2 and "one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required" \
        in r.stderr


def test_zookeeper_shell_commands_over_the_chroot(ops_cluster, ops_topic):
    zk = ops_cluster.zk_connect
    banner = [f"Connecting to {zk}", "", "WATCHER::", "", "WatchedEvent state:SyncConnected type:None path:null"]
    r = script("pylog-zookeeper-shell.sh", zk, "ls", "/brokers/ids")
    assert (r.returncode, r.stdout.splitlines()) == (0, banner + ["[0, 1]"]), r.stderr
    r = script("pylog-zookeeper-shell.sh", zk, "create", "/ops-note", "hello")
    assert (r.returncode, r.stdout.splitlines(), r.stderr) == (0, banner, "Created /ops-note\n")
    r = script("pylog-zookeeper-shell.sh", zk, "get", "/ops-missing")
    assert (r.returncode, r.stdout.splitlines(), r.stderr) == (1, banner, "Node does not exist: /ops-missing\n")

    # Without a command it reads commands from stdin (ZooKeeperMain without JLine); paths are under the chroot.
    commands = ["ls /", "get /brokers/topics/ops", "set /ops-note bye", "get -s /ops-note", "stat /ops-note",
                "create /ops-note again", "delete /brokers", "delete /ops-note", "ls /ops-note"]
    r = subprocess.run([os.path.join(REPO, "bin", "pylog-zookeeper-shell.sh"), zk], input="\n".join(commands) + "\n",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1  # the last command failed
    lines = r.stdout.splitlines()
    assert lines[:len(banner) + 2] == banner + ["Welcome to ZooKeeper!", "JLine support is disabled"]
    lines = lines[len(banner) + 2:]
    assert lines[0].startswith("[admin, brokers, cluster, config, consumers, controller, controller_epoch")
    parts = json.loads(lines[1])["partitions"]
    assert sorted(parts) == ["0", "1", "2"] and all(len(rs) == 1 and rs[0] in (0, 1) for rs in parts.values())
    assert lines[2] == "bye"
    stat = lines[3:14]
    assert [line.split(" = ")[0] for line in stat] == [
        "cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion", "aclVersion", "ephemeralOwner",
        "dataLength", "numChildren"]
    assert re.fullmatch(r"cZxid = 0x[0-9a-f]+", stat[0])
    assert re.fullmatch(r"ctime = \w{3} \w{3} \d\d \d\d:\d\d:\d\d \w+ \d{4}", stat[1])
    assert stat[6:] == ["dataVersion = 1", "aclVersion = 0", "ephemeralOwner = 0x0", "dataLength = 3",
                        "numChildren = 0"]
    assert lines[14:] == stat  # `stat` prints the same StatPrinter lines
    assert r.stderr.splitlines() == ["Node already exists: /ops-note", "Node not empty: /brokers",
                                     "Node does not exist: /ops-note"]


@pytest.mark.parametrize("via", ["--bootstrap-server", "--zookeeper"])
def test_dynamic_configs_kafka_defines_are_validated_even_unused(ops_cluster, via):
    """Issue 25 edge 8: log.cleaner.threads is not used by pylog, but Kafka's type and range still apply."""
    target = ops_cluster.bootstrap if via == "--bootstrap-server" else ops_cluster.zk_connect

    def alter(entity: list[str], value: str):
        return script("pylog-configs.sh", via, target, "--entity-type", "brokers", *entity, "--alter",
                      "--add-config", f"log.cleaner.threads={value}")
    r = alter(["--entity-default"], "abc")
    assert r.returncode == 1
    assert "Invalid value abc for configuration log.cleaner.threads: Not a number of type INT" in r.stderr
    r = alter(["--entity-name", "1"], "-5")
    assert r.returncode == 1 and "Invalid value -5 for configuration log.cleaner.threads: Value must be at " \
        "least 0" in r.stderr
    r = alter(["--entity-name", "1"], "2")
    assert r.returncode == 0, r.stderr
    r = script("pylog-configs.sh", via, target, "--entity-type", "brokers", "--entity-name", "1", "--alter",
               "--delete-config", "log.cleaner.threads")
    assert r.returncode == 0, r.stderr
