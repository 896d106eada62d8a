"""pylog-reassign-partitions with log_dirs: replicas placed in and moved between the log dirs of their
brokers (AlterReplicaLogDirs), --verify's replica lines, and the refusal through ZooKeeper."""

from __future__ import annotations

import json

import pytest

from pylog.cli.admin_client import BrokerAdmin
from pylog.cli.reassign import reassign_command
from pylog.cli.topics import topics_command

from cli_helpers import cli
from support.clients import kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def rp(*args: str):
    return cli(reassign_command, *args)


def test_log_dirs_in_a_reassignment_move_and_place_replicas(cluster_factory, tmp_path):
    dirs = {b: (str(tmp_path / f"b{b}-x"), str(tmp_path / f"b{b}-y")) for b in (0, 1)}
    c = cluster_factory(2, overrides={"auto.leader.rebalance.enable": "false"},
                        broker_overrides={b: {"log.dirs": ",".join(d)} for b, d in dirs.items()})
    r = cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "ld",
            "--replica-assignment", "0")
    assert r.exit_code == 0, r.output
    values = [f"value-{i:05d}" for i in range(2000)]
    kcat(c.bootstrap, "-P", "-t", "ld", "-p", "0", "-X", "batch.size=4096", input="\n".join(values) + "\n")
    admin = BrokerAdmin(c.bootstrap)
    try:
        (here, _), = [v for k, v in admin.replica_log_dirs([("ld", 0, 0)]).items()]
        there = dirs[0][1] if here == dirs[0][0] else dirs[0][0]
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": "ld", "partition": 0, "replicas": [0, 1], "log_dirs": [there, dirs[1][1]]}]}))
        r = rp("--bootstrap-server", c.bootstrap, "--execute", "--reassignment-json-file", str(plan),
               "--replica-alter-log-dirs-throttle", "10000000")
        assert r.exit_code == 0, r.output
        assert "Successfully started partition reassignment for ld-0\n" in r.stdout
        started = [line.split(": ", 1)[1] for line in r.stdout.splitlines()
                   if line.startswith("Successfully started log directory move")]
        assert sorted(n for line in started for n in line.split(",")) == ["ld-0-0", "ld-0-1"]

        def verified():
            out = rp("--bootstrap-server", c.bootstrap, "--verify", "--reassignment-json-file", str(plan)).stdout
            return "Reassignment of partition ld-0 is completed." in out and \
                "Reassignment of replica ld-0-0 completed successfully." in out and \
                "Reassignment of replica ld-0-1 completed successfully." in out and out
        out = wait_for(verified, 60, "both replicas in their log dirs", interval=0.5)
        assert out.startswith("Status of partition reassignment:\nReassignment of partition ld-0 is completed.\n"
                              "Reassignment of replica ld-0-0 completed successfully.\n"
                              "Reassignment of replica ld-0-1 completed successfully.\n")
        assert "Clearing broker-level throttles on brokers 0,1" in out
        assert admin.replica_log_dirs([("ld", 0, 0), ("ld", 0, 1)]) == {
            ("ld", 0, 0): (there, None), ("ld", 0, 1): (dirs[1][1], None)}
    finally:
        admin.close()
    wait_for(lambda: len(partitions(c.bootstrap, "ld")[0].isr) == 2, 30, "both replicas in sync")
    got = kcat(c.brokers[0].address, "-C", "-t", "ld", "-p", "0", "-o", "beginning", "-e").stdout.splitlines()
    assert got == values

    r = rp("--zookeeper", c.zk_connect, "--verify", "--reassignment-json-file", str(plan))
    assert r.exit_code == 1
    assert "bootstrap-server needs to be provided when replica reassignments are present." in r.stderr
