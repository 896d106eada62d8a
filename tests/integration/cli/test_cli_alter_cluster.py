"""pylog-alter-cluster on real brokers: add two brokers, then remove one, with data checked by a consumer."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pylog.cli.alter_cluster import alter_cluster_command
from pylog.cli.topics import topics_command
from pylog.zk import paths
from pylog.zk.codecs_admin import ShutdownRequest

from cli_helpers import cli
from support.clients import kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration

SETTINGS = {"auto.leader.rebalance.enable": "false", "zookeeper.session.timeout.ms": "4000"}


def spread(views, brokers):
    counts = Counter(b for v in views.values() for b in v.replicas)
    return [counts.get(b, 0) for b in brokers]


def test_add_two_brokers_then_remove_one(cluster_factory, zk):
    c = cluster_factory(3, overrides=SETTINGS)
    r = cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "grow", "--partitions", "6",
            "--replication-factor", "2")
    assert r.exit_code == 0, r.output
    values = [f"v{i:05d}" for i in range(600)]
    kcat(c.bootstrap, "-P", "-t", "grow", "-X", "acks=all", "-X", "batch.size=2000", input="\n".join(values) + "\n")
    c.add_broker()
    c.add_broker()
    before = partitions(c.bootstrap, "grow")
    r = cli(alter_cluster_command, "--bootstrap-server", c.bootstrap, "--add-brokers", "3,4", "--dry-run")
    assert r.exit_code == 0 and r.stdout.endswith("Dry run: nothing was changed.\n")
    assert partitions(c.bootstrap, "grow") == before

    r = cli(alter_cluster_command, "--bootstrap-server", c.bootstrap, "--add-brokers", "3,4", "--throttle",
            "50000000", "--output", "json")
    assert r.exit_code == 0, r.output
    done = json.loads(r.stdout)
    assert done["completed"] and done["report"]["replicas_moved"] == done["report"]["lower_bound"] == 4
    assert done["cleared"] == {"brokers": [0, 1, 2, 3, 4], "topics": ["grow"]}
    views = partitions(c.bootstrap, "grow")
    assert max(spread(views, range(5))) - min(spread(views, range(5))) <= 1
    assert {v.leader for v in views.values()} == {0, 1, 2, 3, 4}  # leadership reached the new brokers too
    assert all(v.leader == v.replicas[0] for v in views.values())

    # A shutdown request for an earlier run of a broker is dropped without effect.
    zk.create(paths.shutdown_broker(2), ShutdownRequest(1).encode(), make_parents=True)
    wait_for(lambda: zk.exists(paths.shutdown_broker(2)) is None, 30, "broker 2 to drop a stale request")
    assert c.brokers[2].pid is not None and zk.get_broker(2) is not None

    r = cli(alter_cluster_command, "--zookeeper", c.zk_connect, "--remove-brokers", "1")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Plan to remove broker 1: ")
    assert r.stdout.endswith("Broker 1 shut down and deregistered.\n")
    assert c.brokers[1].proc.wait(30) == 0  # the broker process exited after its controlled shutdown
    assert zk.get_broker(1) is None and zk.exists(paths.shutdown_broker(1)) is None
    rest = ",".join(c.brokers[b].address for b in (0, 2, 3, 4))
    views = partitions(rest, "grow")
    assert all(1 not in v.replicas and len(v.replicas) == 2 for v in views.values())
    assert max(spread(views, (0, 2, 3, 4))) - min(spread(views, (0, 2, 3, 4))) <= 1
    got = kcat(rest, "-C", "-t", "grow", "-e", "-f", "%s\n").stdout.split()
    assert sorted(got) == values
    r = cli(alter_cluster_command, "--zookeeper", c.zk_connect, "--remove-brokers", "2,3,4")
    assert (r.exit_code, r.stderr) == (1, "Error: Cannot remove broker(s) 2,3,4: the remaining 1 broker(s) cannot "
                                          "hold topic grow's replication factor 2\n")
