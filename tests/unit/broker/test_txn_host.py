"""The broker's side of the transaction coordinator: loading on leadership, the topic's settings, and
which broker FindCoordinator names for a transactional id."""

import asyncio
from types import SimpleNamespace

from pylog.broker.txn_host import TRANSACTION_STATE_TOPIC, TxnHost, fenced_as
from pylog.common.config import BrokerConfig
from pylog.coordinator.ownership import java_string_hash, kafka_abs
from pylog.protocol.errors import ErrorCode as E
from support.fake_replicas import Replicas


def host(**props) -> tuple[TxnHost, Replicas, list]:
    replicas, spawned = Replicas(TRANSACTION_STATE_TOPIC), []
    h = TxnHost(BrokerConfig.from_props({"zookeeper.connect": "x:1", **props}),
                SimpleNamespace(topics={}, brokers={}), replicas, None, spawned.append, 0, None, None)
    h.start()
    return h, replicas, spawned


def test_becoming_leader_loads_the_partition_and_losing_it_unloads():
    async def run():
        h, replicas, spawned = host()
        replicas.set(7, True, 4)
        assert h.coordinator.ownership.loading(7) and not spawned  # the load runs in the coordinator
        assert h.coordinator.check_partition(7) == E.COORDINATOR_LOAD_IN_PROGRESS
        replicas.set(7, False, 5)
        assert not h.coordinator.ownership.loading(7) and 7 not in h.coordinator.loaded
        assert h.coordinator.check_partition(7) == E.NOT_COORDINATOR
    asyncio.run(run())


def test_the_topic_is_kafka_s_with_min_isr_capped_at_the_replicas():
    h, _, _ = host()
    assert h.num_partitions() == 50
    assert h.topic_configs(3) == {"cleanup.policy": "compact", "compression.type": "uncompressed",
                                  "unclean.leader.election.enable": "false", "min.insync.replicas": "2",
                                  "segment.bytes": "104857600"}
    assert h.topic_configs(1)["min.insync.replicas"] == "1"  # a one-broker cluster can still commit
    assert h.coordinator.config.max_timeout_ms == 900000
    h, _, _ = host(**{"transaction.max.timeout.ms": "1000"})
    assert h.coordinator.config.max_timeout_ms == 1000


def test_find_names_the_leader_of_the_id_s_partition():
    h, _, spawned = host()
    assert h.find("app")[0] == E.COORDINATOR_NOT_AVAILABLE and len(spawned) == 1  # creates the topic
    spawned.pop().close()
    node = SimpleNamespace(id=2, host="h2", port=9094, on=lambda listener: node)
    h.metadata.topics[TRANSACTION_STATE_TOPIC] = {
        i: SimpleNamespace(leader=2 if i == kafka_abs(java_string_hash("app")) % 50 else 1) for i in range(50)}
    h.metadata.brokers = {2: node}
    assert h.find("app") == (E.NONE, 2, "h2", 9094)


def test_producer_fenced_is_invalid_producer_epoch_for_old_versions():
    assert fenced_as(E.PRODUCER_FENCED, 3, 4) == E.INVALID_PRODUCER_EPOCH
    assert fenced_as(E.PRODUCER_FENCED, 4, 4) == E.PRODUCER_FENCED
    assert fenced_as(E.NOT_COORDINATOR, 0, 4) == E.NOT_COORDINATOR
