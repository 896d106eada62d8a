"""Controller-to-broker requests are fenced like Kafka's: an older controller epoch gets
STALE_CONTROLLER_EPOCH, and a request addressed to an earlier registration of the broker (an older
broker epoch, KIP-380) gets STALE_BROKER_EPOCH; neither changes what the broker serves."""

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.zk.client import ZkClient

from support.clients import create_topic
from support.inspect import partitions

pytestmark = pytest.mark.integration


def current_epochs(zk_connect: str) -> tuple[int, int]:
    """(broker 0's epoch = czxid of its registration, controller epoch)."""
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        return zk.get_broker(0).epoch, zk.get_controller_epoch().epoch
    finally:
        zk.close()


def stop_replica(k: KafkaClient, broker_epoch: int, controller_epoch: int):
    return k.call(ApiKey.StopReplica, lambda cls, v: cls(
        controller_id=0, controller_epoch=controller_epoch, broker_epoch=broker_epoch, delete_partitions=False,
        topic_states=[cls.StopReplicaTopicState(topic_name="f", partition_states=[
            cls.StopReplicaTopicState.StopReplicaPartitionState(partition_index=0, leader_epoch=-1,
                                                                delete_partition=True)])]), node=0)


def update_metadata(k: KafkaClient, broker_epoch: int, controller_epoch: int):
    return k.call(ApiKey.UpdateMetadata, lambda cls, v: cls(
        controller_id=0, controller_epoch=controller_epoch, broker_epoch=broker_epoch, topic_states=[],
        live_brokers=[]), node=0)


def leader_and_isr(k: KafkaClient, broker_epoch: int, controller_epoch: int):
    return k.call(ApiKey.LeaderAndIsr, lambda cls, v: cls(
        controller_id=0, controller_epoch=controller_epoch, broker_epoch=broker_epoch, request_type=0,
        topic_states=[], live_leaders=[]), node=0)


def test_stale_broker_and_controller_epochs_are_refused(cluster):
    create_topic(cluster.bootstrap, "f", partitions=1)
    before = partitions(cluster.bootstrap, "f")
    broker_epoch, controller_epoch = current_epochs(cluster.zk_connect)
    with KafkaClient(cluster.bootstrap) as k:
        k.refresh_metadata(topics=[])
        for send in (stop_replica, update_metadata, leader_and_isr):
            resp = send(k, broker_epoch - 1, controller_epoch)
            assert resp.error_code == ErrorCode.STALE_BROKER_EPOCH, send.__name__
            resp = send(k, broker_epoch, controller_epoch - 1)
            assert resp.error_code == ErrorCode.STALE_CONTROLLER_EPOCH, send.__name__
    # Neither the StopReplica with delete_partition nor the empty UpdateMetadata took effect.
    assert partitions(cluster.bootstrap, "f") == before
    assert (cluster.brokers[0].data_dir / "logs" / "f-0").is_dir()
