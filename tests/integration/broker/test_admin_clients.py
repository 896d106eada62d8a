"""Stock admin clients against pylog's admin APIs: librdkafka's (confluent-kafka) and kafka-python's.

The admin toolkit's --bootstrap-server paths use these APIs too, but our own client forgives what a
stock client would not (field names, versions, error shapes), so each API is driven here by the
clients operators' own scripts use.
"""

import pytest
from confluent_kafka import ElectionType as CkElectionType
from confluent_kafka import TopicCollection
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions,
                                   NewTopic, ResourceType)
from kafka import TopicPartition
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType, KafkaAdminClient
from kafka.admin import NewTopic as KpNewTopic

from support.clients import wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def test_confluent_admin_client_topics_cluster_and_configs(cluster_factory):
    c = cluster_factory(3)
    a = AdminClient({"bootstrap.servers": c.bootstrap})
    assert a.create_topics([NewTopic("adm", 3, 2)])["adm"].result(30) is None
    wait_for(lambda: all(p.leader >= 0 for p in partitions(c.bootstrap, "adm").values()), what="leaders")

    cluster = a.describe_cluster().result(30)
    assert sorted(n.id for n in cluster.nodes) == [0, 1, 2] and cluster.controller.id in (0, 1, 2)
    desc = a.describe_topics(TopicCollection(["adm"]))["adm"].result(30)
    assert [(p.id, len(p.replicas)) for p in desc.partitions] == [(0, 2), (1, 2), (2, 2)]

    assert a.create_partitions([NewPartitions("adm", 5)])["adm"].result(30) is None
    wait_for(lambda: len(partitions(c.bootstrap, "adm")) == 5, what="5 partitions")

    topic = ConfigResource(ResourceType.TOPIC, "adm", incremental_configs=[
        ConfigEntry("retention.ms", "12345", incremental_operation=AlterConfigOpType.SET)])
    assert a.incremental_alter_configs([topic])[topic].result(30) is None
    plain = ConfigResource(ResourceType.TOPIC, "adm")
    entry = wait_for(lambda: (e := a.describe_configs([plain])[plain].result(30)["retention.ms"]).value == "12345"
                     and e, what="retention.ms visible")
    assert entry.source == 1  # DYNAMIC_TOPIC_CONFIG

    bad = ConfigResource(ResourceType.TOPIC, "adm", incremental_configs=[
        ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(Exception, match="no.such.config"):
        a.incremental_alter_configs([bad])[bad].result(30)

    # Every leader is already the preferred replica: librdkafka reports ELECTION_NOT_NEEDED per partition.
    result = a.elect_leaders(CkElectionType.PREFERRED, [CkTopicPartition("adm", 0)]).result(30)
    (err,) = result.values()
    assert err is not None and err.name() == "ELECTION_NOT_NEEDED"


def test_kafka_python_admin_client_cluster_reassignment_and_election(cluster_factory):
    c = cluster_factory(3)
    k = KafkaAdminClient(bootstrap_servers=c.bootstrap, request_timeout_ms=30000)
    try:
        k.create_topics([KpNewTopic("kp", 1, 2)])
        first = wait_for(lambda: (p := partitions(c.bootstrap, "kp").get(0)) and p.leader >= 0 and
                         len(p.isr) == 2 and p, what="kp-0 in sync")
        cluster = k.describe_cluster()
        assert sorted(b["broker_id"] for b in cluster["brokers"]) == [0, 1, 2], cluster
        assert cluster["controller_id"] in (0, 1, 2)

        # Reorder the replicas: no data moves, the leader stays, and the new first replica is preferred.
        leader, other = first.replicas
        assert k.list_partition_reassignments() == {}
        k.alter_partition_reassignments({TopicPartition("kp", 0): [other, leader]})
        wait_for(lambda: k.list_partition_reassignments() == {}
                 and partitions(c.bootstrap, "kp")[0].replicas == (other, leader), what="reassignment done")
        assert partitions(c.bootstrap, "kp")[0].leader == leader

        k.elect_leaders(0, {"kp": [0]})  # 0 = PREFERRED
        wait_for(lambda: partitions(c.bootstrap, "kp")[0].leader == other, what="preferred leader elected")

        configs = k.describe_configs([KpConfigResource(ConfigResourceType.TOPIC, "kp")], config_filter="all")
        assert configs["topic"]["kp"]["min.insync.replicas"]["value"] == "1"
    finally:
        k.close()
