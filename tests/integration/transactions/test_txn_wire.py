"""The transactional APIs on the wire, as a client drives them: InitProducerId, AddPartitionsToTxn v3,
AddOffsetsToTxn, produce, EndTxn; and a late batch of an ended transaction, which the leader refuses
after asking the coordinator (KIP-890 part 1, on by default) instead of letting it open a transaction
nobody will end."""

from __future__ import annotations

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode as E
from pylog.protocol.records import build_batch
from support.clients import create_topic, wait_for
from support.txn import TXN, coordinator_of, stable_end

pytestmark = pytest.mark.integration


def _produce(k: KafkaClient, pid: int, epoch: int, seq: int, value: bytes) -> int:
    raw = build_batch([(None, value, (), None)], producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                      is_transactional=True)

    def build(cls, v):
        part = cls.TopicProduceData.PartitionProduceData(index=0, records=raw)
        return cls(transactional_id="wire", acks=-1, timeout_ms=10000,
                   topic_data=[cls.TopicProduceData(name="t", partition_data=[part])])
    return k.call(ApiKey.Produce, build, node=0, max_version=9).responses[0].partition_responses[0].error_code


def _init(k: KafkaClient, node: int) -> tuple[int, int]:
    init = k.call(ApiKey.InitProducerId, lambda cls, v: cls(
        transactional_id="wire", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), node=node)
    assert init.error_code == 0
    return init.producer_id, init.producer_epoch


def _add(k: KafkaClient, node: int, pid: int, epoch: int) -> int:
    def build(cls, v):
        topic = cls.AddPartitionsToTxnTopic(name="t", partitions=[0])
        return cls(v3_and_below_transactional_id="wire", v3_and_below_producer_id=pid,
                   v3_and_below_producer_epoch=epoch, v3_and_below_topics=[topic])
    added = k.call(ApiKey.AddPartitionsToTxn, build, node=node, max_version=3)
    return added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code


def _end(k: KafkaClient, node: int, pid: int, epoch: int, commit: bool) -> int:
    return k.call(ApiKey.EndTxn, lambda cls, v: cls(transactional_id="wire", producer_id=pid, producer_epoch=epoch,
                                                    committed=commit), node=node).error_code


@pytest.fixture
def wired(cluster_factory):
    """(cluster, client, coordinator node, producer id, epoch) of a fresh transactional id "wire"."""
    cluster = cluster_factory(1, overrides=TXN)
    create_topic(cluster.bootstrap, "t")
    node = coordinator_of(cluster.bootstrap, "wire")
    with KafkaClient(cluster.bootstrap) as k:
        k.refresh_metadata(["t"])
        yield (cluster, k, node, *_init(k, node))


def _one_transaction(wired, value: bytes, commit: bool) -> None:
    """AddPartitions, one batch at sequence 0 and EndTxn; returns once the marker after it is stable (offset 2)."""
    cluster, k, node, pid, epoch = wired
    assert _add(k, node, pid, epoch) == 0
    assert _produce(k, pid, epoch, 0, value) == 0
    assert _end(k, node, pid, epoch, commit=commit) == 0
    # The markers follow the answer: once the batch (0) and its marker (1) are stable, nothing is open.
    wait_for(lambda: stable_end(cluster.bootstrap, "t") == 2, timeout=30,
             what="the COMMIT marker" if commit else "the ABORT marker")


def test_a_late_batch_of_an_ended_transaction_is_refused(wired):
    cluster, k, node, pid, epoch = wired
    _one_transaction(wired, b"in-transaction", commit=True)
    assert _produce(k, pid, epoch, 1, b"late") == E.INVALID_TXN_STATE
    assert _end(k, node, pid, epoch - 1, commit=True) in (E.PRODUCER_FENCED, E.INVALID_PRODUCER_EPOCH)
    assert stable_end(cluster.bootstrap, "t") == 2  # the late batch was not appended


def test_a_transaction_with_a_group_s_offsets_partition_ends(wired):
    cluster, k, node, pid, epoch = wired
    offsets = k.call(ApiKey.AddOffsetsToTxn, lambda cls, v: cls(
        transactional_id="wire", producer_id=pid, producer_epoch=epoch, group_id="readers"), node=node)
    assert offsets.error_code == 0
    _one_transaction(wired, b"dropped", commit=False)
    # The next transaction starts once every marker, the offsets partition's too, is written.
    wait_for(lambda: _add(k, node, pid, epoch) == 0, timeout=30, what="the abort to complete")


def _marker(k: KafkaClient, pid: int, epoch: int, coordinator_epoch: int) -> int:
    def build(cls, v):
        topic = cls.WritableTxnMarker.WritableTxnMarkerTopic(name="t", partition_indexes=[0])
        return cls(markers=[cls.WritableTxnMarker(producer_id=pid, producer_epoch=epoch, transaction_result=False,
                                                  topics=[topic], coordinator_epoch=coordinator_epoch)])
    out = k.call(ApiKey.WriteTxnMarkers, build, node=0)
    return out.markers[0].topics[0].partitions[0].error_code


def test_a_marker_from_an_older_coordinator_is_fenced(wired):
    cluster, k, node, pid, epoch = wired
    _one_transaction(wired, b"kept", commit=True)
    # A coordinator at epoch 9 wrote this producer's marker; one still at epoch 3 is fenced and writes nothing.
    assert _marker(k, pid, epoch, 9) == 0
    end = stable_end(cluster.bootstrap, "t")
    assert _marker(k, pid, epoch, 3) == E.TRANSACTION_COORDINATOR_FENCED
    assert stable_end(cluster.bootstrap, "t") == end
