"""Dynamic configs changed with pylog-configs take effect on running brokers, without a restart: what an
operator changes is what clients then experience (retention deletes segments, min.insync.replicas refuses
acks=all writes, unclean.leader.election.enable brings an offline partition back)."""

import confluent_kafka
import pytest

from pylog.cli.configs import configs_command
from pylog.cli.topics import topics_command

from cli_helpers import cli
from support.clients import wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def produce(bootstrap, topic, n, acks="all", one_batch_each=True):
    """Produce n records (one batch each unless told otherwise); the delivery error codes (None = success)."""
    errors = []
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 0 if one_batch_each
                                  else 200, "message.send.max.retries": 0, "message.timeout.ms": 15000})
    for i in range(n):
        p.produce(topic, value=b"x" * 100, key=str(i).encode(), partition=0,
                  on_delivery=lambda err, msg: errors.append(err and err.code()))
        if one_batch_each:
            assert p.flush(30) == 0
    assert p.flush(30) == 0
    return errors


def earliest_offset(bootstrap, topic):
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused"})
    try:
        low, _ = c.get_watermark_offsets(confluent_kafka.TopicPartition(topic, 0), timeout=10)
        return low
    finally:
        c.close()


def test_retention_and_min_insync_replicas_apply_without_restart(cluster_factory):
    c = cluster_factory(1, overrides={"log.retention.check.interval.ms": "300"})
    assert cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "dyn",
               "--config", "segment.bytes=1024").exit_code == 0
    wait_for(lambda: partitions(c.bootstrap, "dyn")[0].leader == 0, what="a leader for dyn-0")
    # A batch larger than a segment is refused for that partition (Kafka's RECORD_LIST_TOO_LARGE), and the
    # connection stays usable.
    assert set(produce(c.bootstrap, "dyn", 40, one_batch_each=False)) == {
        confluent_kafka.KafkaError.RECORD_LIST_TOO_LARGE}
    assert produce(c.bootstrap, "dyn", 60) == [None] * 60
    assert earliest_offset(c.bootstrap, "dyn") == 0

    r = cli(configs_command, "--bootstrap-server", c.bootstrap, "--topic", "dyn", "--alter",
            "--add-config", "retention.ms=1")
    assert r.exit_code == 0, r.output
    # Every closed segment is now past retention; the active one stays, so some records remain readable.
    low = wait_for(lambda: earliest_offset(c.bootstrap, "dyn") or None, timeout=30, what="retention to delete")
    assert 0 < low < 60

    r = cli(configs_command, "--zookeeper", c.zk_connect, "--topic", "dyn", "--alter",
            "--add-config", "min.insync.replicas=2")
    assert r.exit_code == 0, r.output
    wait_for(lambda: produce(c.bootstrap, "dyn", 1) == [confluent_kafka.KafkaError.NOT_ENOUGH_REPLICAS]
             or None, timeout=30, what="acks=all refused below min.insync.replicas")
    assert produce(c.bootstrap, "dyn", 1, acks="1") == [None]  # acks=1 does not need the ISR


def test_unclean_leader_election_enabled_dynamically_brings_an_offline_partition_back(cluster_factory):
    c = cluster_factory(2, overrides={"auto.leader.rebalance.enable": "false"})
    assert cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "u",
               "--replica-assignment", "0:1").exit_code == 0
    wait_for(lambda: partitions(c.bootstrap, "u")[0].isr == (0, 1), what="u-0 fully in sync")
    c.stop([1])  # the follower leaves the ISR...
    wait_for(lambda: partitions(c.bootstrap, "u")[0].isr == (0,), timeout=60, what="ISR [0]")
    c.stop([0])  # ...then the last in-sync replica goes: the partition is offline
    c.restart(1)
    wait_for(lambda: partitions(c.bootstrap, "u")[0].leader == -1, what="u-0 offline")
    r = cli(configs_command, "--bootstrap-server", c.bootstrap, "--topic", "u", "--alter",
            "--add-config", "unclean.leader.election.enable=true")
    assert r.exit_code == 0, r.output
    wait_for(lambda: partitions(c.bootstrap, "u")[0].leader == 1, timeout=30, what="unclean election of 1")
