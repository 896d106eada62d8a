"""pylog-topics --bootstrap-server against real broker processes (LocalCluster): Kafka 3.x's texts, and the
ZooKeeper path agreeing with the broker path once the controller has elected leaders."""

import pytest

from pylog.cli.topics import topics_command

from cli_helpers import as_json, cli, script
from support.clients import wait_for

pytestmark = pytest.mark.integration

PREFIX = "Error while executing topic command : "


def topics(cluster, *args):
    return cli(topics_command, "--bootstrap-server", cluster.bootstrap, *args)


def partition_lines(result):
    assert result.exit_code == 0, result.output
    return [line for line in result.stdout.splitlines() if line.startswith("\t")]


def fully_replicated(cluster, topic):
    """Describe lines once every partition has a leader and a full ISR."""
    lines = partition_lines(topics(cluster, "--describe", "--topic", topic))
    ok = lines and all("Leader: none" not in ln and ln.split("Replicas: ")[1].split("\t")[0] ==
                       ln.split("Isr: ")[1].split("\t")[0] for ln in lines)
    return lines if ok else None


def test_topic_lifecycle_through_a_broker(cluster_factory):
    c = cluster_factory(3)
    r = topics(c, "--create", "--topic", "foo", "--partitions", "3", "--replication-factor", "2",
               "--config", "retention.ms=1000")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "Created topic foo.\n", "")
    wait_for(lambda: topics(c, "--list").stdout == "foo\n", what="every broker to list foo")
    lines = wait_for(lambda: fully_replicated(c, "foo"), what="foo fully replicated")
    doc = as_json(topics(c, "--describe", "--topic", "foo", "--output", "json"))
    (t,) = doc["topics"]
    assert (t["partition_count"], t["replication_factor"], t["configs"]) == (3, 2, {"retention.ms": "1000"})
    head = topics(c, "--describe", "--topic", "foo").stdout.splitlines()[0]
    assert head == (f"Topic: foo\tTopicId: {t['topic_id']}\tPartitionCount: 3\tReplicationFactor: 2\t"
                    "Configs: retention.ms=1000")
    for p, line in zip(doc["partitions"], lines):
        assert p["leader"] == p["replicas"][0] and len(set(p["replicas"])) == 2
        assert line == (f"\tTopic: foo\tPartition: {p['partition']}\tLeader: {p['leader']}\t"
                        f"Replicas: {','.join(map(str, p['replicas']))}\tIsr: {','.join(map(str, p['isr']))}")

    r = topics(c, "--alter", "--topic", "foo", "--partitions", "5")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    # Other brokers learn the new partitions from the next UpdateMetadata: wait until the describe shows all 5.
    wait_for(lambda: len(fully_replicated(c, "foo") or []) == 5, what="5 partitions")
    for count, message in (("2", "Topic currently has 5 partitions, which is higher than the requested 2."),
                           ("5", "Topic already has 5 partitions.")):
        r = topics(c, "--alter", "--topic", "foo", "--partitions", count)
        assert (r.exit_code, r.stderr) == (1, PREFIX + message + "\n")

    r = topics(c, "--create", "--topic", "foo", "--partitions", "1")
    assert (r.exit_code, r.stderr) == (1, PREFIX + "Topic 'foo' already exists.\n")
    assert topics(c, "--create", "--topic", "foo", "--if-not-exists").exit_code == 0
    r = topics(c, "--create", "--topic", "big", "--replication-factor", "4")
    assert (r.exit_code, r.stderr) == (1, PREFIX + "Replication factor: 4 larger than available brokers: 3.\n")
    r = topics(c, "--create", "--topic", "dflt")  # the broker's num.partitions / default.replication.factor
    assert r.exit_code == 0, r.output
    assert len(wait_for(lambda: fully_replicated(c, "dflt"), what="dflt")) == 1

    r = topics(c, "--delete", "--topic", "foo|dflt")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    # The answer comes once the controller's broker dropped the topics; the others learn it from the next
    # UpdateMetadata, as in Kafka, so wait until every broker's --list agrees before asserting on errors.
    wait_for(lambda: all(cli(topics_command, "--bootstrap-server", b.address, "--list").stdout == "\n"
                         for b in c.brokers.values()), what="every broker to forget foo and dflt")
    r = topics(c, "--delete", "--topic", "foo")
    assert (r.exit_code, r.stderr) == (1, PREFIX + "Topic 'foo' does not exist as expected\n")


def test_reports_follow_a_stopped_broker(cluster_factory):
    c = cluster_factory(2)
    assert topics(c, "--create", "--topic", "r", "--replica-assignment", "0:1,1:0",
                  "--config", "min.insync.replicas=2").exit_code == 0
    wait_for(lambda: fully_replicated(c, "r"), what="r replicated")
    assert partition_lines(topics(c, "--describe", "--under-replicated-partitions")) == []
    assert len(partition_lines(topics(c, "--describe", "--at-min-isr-partitions"))) == 2
    c.stop([1])

    def shrunk():
        lines = partition_lines(topics(c, "--describe", "--under-replicated-partitions"))
        return lines if len(lines) == 2 and all("Isr: 0\n" in ln + "\n" for ln in lines) else None
    lines = wait_for(shrunk, timeout=60, what="ISR without broker 1")
    assert all("Leader: 0" in ln for ln in lines)
    assert len(partition_lines(topics(c, "--describe", "--under-min-isr-partitions"))) == 2
    assert partition_lines(topics(c, "--describe", "--unavailable-partitions")) == []


def test_zookeeper_and_broker_paths_agree(cluster_factory):
    c = cluster_factory(3)
    r = cli(topics_command, "--zookeeper", c.zk_connect, "--create", "--topic", "z", "--partitions", "4",
            "--replication-factor", "3", "--config", "cleanup.policy=compact")
    assert r.exit_code == 0, r.output
    bs_lines = wait_for(lambda: fully_replicated(c, "z"), what="controller elected z's leaders")
    zk = cli(topics_command, "--zookeeper", c.zk_connect, "--describe", "--topic", "z")
    assert partition_lines(zk) == bs_lines
    bs_head = topics(c, "--describe", "--topic", "z").stdout.splitlines()[0]
    assert zk.stdout.splitlines()[0] == bs_head
    assert bs_head.endswith("Configs: cleanup.policy=compact")


def test_wrapper_script_through_a_broker(cluster_factory):
    c = cluster_factory(1)
    p = script("pylog-topics.sh", "--bootstrap-server", c.bootstrap, "--create", "--topic", "s.t")
    assert (p.returncode, p.stdout.splitlines()[-1], p.stderr) == (0, "Created topic s.t.", "")
    p = script("pylog-topics.sh", "--bootstrap-server", c.bootstrap, "--describe", "--output", "json")
    assert p.returncode == 0 and '"topic": "s.t"' in p.stdout
