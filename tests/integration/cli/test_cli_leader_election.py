"""pylog-leader-election: the ZooKeeper path's checks against real ZooKeeper (no controller needed for them),
and real preferred elections by the controller of a LocalCluster."""

import json

import pytest

from pylog.cli.leader_election import leader_election_command
from pylog.cli.topics import topics_command
from pylog.zk import paths

from cli_helpers import cli, register_brokers, script, write_states
from support.clients import wait_for

pytestmark = pytest.mark.integration


def elect(connect_opt, connect, *args):
    return cli(leader_election_command, connect_opt, connect, "--election-type", "preferred", *args)


def setup_topic(zk, zk_connect):
    """Topic e: e-0 led by its preferred replica, e-1 not (leader 1, preferred 2)."""
    register_brokers(zk, [1, 2])
    assert cli(topics_command, "--zookeeper", zk_connect, "--create", "--topic", "e", "--replica-assignment",
               "1:2,2:1").exit_code == 0
    write_states(zk, "e", {0: (1, [1, 2]), 1: (1, [1, 2])})


def test_checks_that_need_no_controller(zk, zk_connect):
    setup_topic(zk, zk_connect)
    r = elect("--zookeeper", zk_connect, "--topic", "e", "--partition", "0")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "Valid replica already elected for partitions e-0\n", "")
    assert zk.exists(paths.preferred_replica_election()) is None  # nothing to ask the controller
    r = elect("--zookeeper", zk_connect, "--topic", "nope", "--partition", "3")
    assert (r.exit_code, r.stdout, r.stderr) == (
        1, "Error completing leader election (PREFERRED) for partition: nope-3: "
           "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.\n",
        "Error: 1 replica(s) could not be elected\n")


def test_without_a_controller_the_request_times_out_and_stays_pending(zk, zk_connect):
    setup_topic(zk, zk_connect)
    r = elect("--zookeeper", zk_connect, "--all-topic-partitions", "--timeout", "300")
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", "Error: Timeout waiting for election results\n")
    # Only the partition that needs it was asked for; the znode waits for the next controller, as in Kafka.
    assert json.loads(zk.get(paths.preferred_replica_election())[0]) == {
        "version": 1, "partitions": [{"topic": "e", "partition": 1}]}
    r = elect("--zookeeper", zk_connect, "--topic", "e", "--partition", "1")
    assert (r.exit_code, r.stderr) == (1, "Error: Preferred replica leader election currently in progress for e-1. "
                                          "Aborting operation\n")


def test_topics_being_deleted_are_refused(zk, zk_connect, tmp_path):
    setup_topic(zk, zk_connect)
    zk.create_delete_topic_path("e")
    f = tmp_path / "e.json"
    f.write_text('{"partitions":[{"topic":"e","partition":1}]}')
    r = elect("--zookeeper", zk_connect, "--path-to-json-file", str(f))
    assert r.exit_code == 1
    assert r.stdout == ("Error completing leader election (PREFERRED) for partition: e-1: "
                        "org.apache.kafka.common.errors.InvalidTopicException: The topic is being deleted\n")


def leader_of(cluster, topic, partition):
    r = cli(topics_command, "--bootstrap-server", cluster.bootstrap, "--describe", "--topic", topic, "--output",
            "json")
    parts = {p["partition"]: p for p in json.loads(r.stdout)["partitions"]}
    return parts[partition]["leader"], parts[partition]["isr"]


def restart_preferred_leader(c):
    """Topic e with preferred leaders 0 (e-0) and 1 (e-1); broker 0 is restarted after e-0 failed over to 1."""
    assert cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "e",
               "--replica-assignment", "0:1,1:0").exit_code == 0
    wait_for(lambda: leader_of(c, "e", 0) == (0, [0, 1]), what="e-0 led by 0 with full ISR")
    c.stop([0])
    wait_for(lambda: leader_of(c, "e", 0)[0] == 1, timeout=60, what="e-0 failed over to 1")
    c.restart(0)


def move_leadership_away(c):
    """Topic e as above, with e-0 still led by 1 once broker 0 is back in its ISR."""
    restart_preferred_leader(c)
    wait_for(lambda: sorted(leader_of(c, "e", 0)[1]) == [0, 1], timeout=60, what="broker 0 back in e-0's ISR")
    assert leader_of(c, "e", 0)[0] == 1


NO_REBALANCE = {"auto.leader.rebalance.enable": "false"}


def test_preferred_election_through_zookeeper_and_the_controller(cluster_factory):
    c = cluster_factory(2, overrides=NO_REBALANCE)
    move_leadership_away(c)
    r = elect("--zookeeper", c.zk_connect, "--all-topic-partitions")
    assert (r.exit_code, r.stdout, r.stderr) == (
        0, "Successfully completed leader election (PREFERRED) for partitions e-0\n", "")
    assert leader_of(c, "e", 0)[0] == 0
    # Nothing left to elect: silent and successful, as cron wants it.
    p = script("pylog-leader-election.sh", "--zookeeper", c.zk_connect, "--election-type", "PREFERRED",
               "--all-topic-partitions")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


def test_preferred_election_through_a_broker(cluster_factory):
    c = cluster_factory(2, overrides=NO_REBALANCE)
    move_leadership_away(c)
    r = elect("--bootstrap-server", c.bootstrap, "--topic", "e", "--partition", "1")
    assert (r.exit_code, r.stdout) == (0, "Valid replica already elected for partitions e-1\n")
    r = elect("--bootstrap-server", c.bootstrap, "--all-topic-partitions")
    assert (r.exit_code, r.stdout) == (0, "Successfully completed leader election (PREFERRED) for partitions e-0\n")
    r = elect("--bootstrap-server", c.bootstrap, "--all-topic-partitions")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    r = cli(leader_election_command, "--bootstrap-server", c.bootstrap, "--election-type", "unclean",
            "--topic", "e", "--partition", "0")
    assert (r.exit_code, r.stdout) == (0, "Valid replica already elected for partitions e-0\n")


def test_the_controller_moves_leaders_back_when_imbalance_passes_the_threshold(cluster_factory):
    # Kafka's rule: rebalance broker B when (partitions preferring B but led elsewhere) / (partitions
    # preferring B) > leader.imbalance.per.broker.percentage / 100 (here 1/1 > 10%).
    c = cluster_factory(2, overrides={"auto.leader.rebalance.enable": "true",
                                      "leader.imbalance.check.interval.seconds": "1"})
    restart_preferred_leader(c)
    wait_for(lambda: leader_of(c, "e", 0)[0] == 0, timeout=60, what="the controller to make 0 leader of e-0 again")
    assert leader_of(c, "e", 1)[0] == 1
