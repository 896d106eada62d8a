"""Transactional requests sent by hand, as a transactional producer (TxnOffsetCommit) or a transaction coordinator
(WriteTxnMarkers) sends them, for tests that drive the group side of exactly-once on the wire."""

from __future__ import annotations

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey


def txn_offset_commit(client: KafkaClient, group: str, topic: str, pid: int, epoch: int, offset: int, *,
                      transactional_id: str = "app", generation: int = -1, member: str = "") -> int:
    """TxnOffsetCommit of `topic`-0 (the highest version both sides know); the partition's error code."""
    def build(cls, v):
        part = cls.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
            partition_index=0, committed_offset=offset, committed_leader_epoch=-1, committed_metadata="")
        return cls(transactional_id=transactional_id, group_id=group, producer_id=pid, producer_epoch=epoch,
                   generation_id=generation, member_id=member, group_instance_id=None,
                   topics=[cls.TxnOffsetCommitRequestTopic(name=topic, partitions=[part])])
    resp = client.call(ApiKey.TxnOffsetCommit, build, node=0)
    return resp.topics[0].partitions[0].error_code


def write_marker(client: KafkaClient, topic: str, partition: int, pid: int, epoch: int, commit: bool) -> int:
    """WriteTxnMarkers for one partition led by broker 0; its error code."""
    def build(cls, v):
        t = cls.WritableTxnMarker.WritableTxnMarkerTopic(name=topic, partition_indexes=[partition])
        return cls(markers=[cls.WritableTxnMarker(producer_id=pid, producer_epoch=epoch, transaction_result=commit,
                                                  topics=[t], coordinator_epoch=0)])
    return client.call(ApiKey.WriteTxnMarkers, build, node=0).markers[0].topics[0].partitions[0].error_code
