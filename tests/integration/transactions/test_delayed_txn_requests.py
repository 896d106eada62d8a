"""The delayed Produce anomaly (Jepsen's Bufstream 0.1.0 analysis; the reason for KIP-890 part 2): a
transactional Produce held up in the network until after its transaction was aborted lands in the
producer's next transaction and is committed with it. A proxy holds the Produce while the test, on
another connection, aborts the transaction and starts the next one; no client in reach speaks
transaction version 2 (librdkafka 2.16, kafka-python 3.0.12 and aiokafka 0.14 send EndTxn <= v3 and
read no finalized transaction.version), so the requests are built from Kafka's schemas.

  transaction.version 0, the next transaction already has the partition: part 1's verification asks the
      coordinator, which says the partition is in the (next) transaction -- the aborted write is committed;
  transaction.version 0, the next transaction has not added it yet: part 1 refuses it (TRANSACTION_ABORTABLE);
  transaction.version 2: the abort bumped the epoch and its marker carries it, so the late batch is fenced
      (INVALID_PRODUCER_EPOCH) and the next transaction holds only its own write.

The same for a delayed EndTxn(abort) whose retry went through first (KAFKA-17754): at transaction.version 0
it aborts the next transaction, at 2 it is fenced (PRODUCER_FENCED).
"""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import decode_response, encode_request
from pylog.protocol.errors import ErrorCode as E
from pylog.protocol.records import build_batch
from support.clients import create_topic, wait_for
from support.hold_proxy import HoldingProxy
from support.txn import TXN, coordinator_of, kafka_python_commit, read_all, stable_end
from support.txn_wire import txn_offset_commit
from support.wire import read_frame

pytestmark = pytest.mark.integration
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _build_produce(tid: str, topic: str, pid: int, epoch: int, seq: int, value: bytes):
    raw = build_batch([(None, value, (), None)], producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                      is_transactional=True)

    def build(cls, v):
        part = cls.TopicProduceData.PartitionProduceData(index=0, records=raw)
        return cls(transactional_id=tid, acks=-1, timeout_ms=10000,
                   topic_data=[cls.TopicProduceData(name=topic, partition_data=[part])])
    return build


def _produce(k: KafkaClient, version: int, *args) -> int:
    return _produce_error(k.call(ApiKey.Produce, _build_produce(*args), node=0, max_version=version))


class _Late:
    """One request sent through the holding proxy; its answer read once the proxy let it through."""

    def __init__(self, proxy: HoldingProxy, api_key: int, version: int, build) -> None:
        self.api_key, self.version = api_key, version
        self.sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=30)
        self.sock.sendall(encode_request(build(request_class(api_key)[version], version), version, 1, "late"))

    def answer(self):
        try:
            return decode_response(self.api_key, self.version, read_frame(self.sock))[1]
        finally:
            self.sock.close()


def _late_produce(proxy: HoldingProxy, version: int, *args) -> _Late:
    return _Late(proxy, ApiKey.Produce, version, _build_produce(*args))


def _produce_error(resp) -> int:
    return resp.responses[0].partition_responses[0].error_code


def _init(bootstrap: str, k: KafkaClient, tid: str) -> tuple[int, int]:
    assert coordinator_of(bootstrap, tid) == 0  # waits for __transaction_state
    r = k.call(ApiKey.InitProducerId, lambda cls, v: cls(transactional_id=tid, transaction_timeout_ms=60000,
                                                          producer_id=-1, producer_epoch=-1), node=0)
    assert r.error_code == 0
    return r.producer_id, r.producer_epoch


def _add(k: KafkaClient, tid: str, topic: str, pid: int, epoch: int) -> int:
    def build(cls, v):
        return cls(v3_and_below_transactional_id=tid, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
                   v3_and_below_topics=[cls.AddPartitionsToTxnTopic(name=topic, partitions=[0])])
    resp = k.call(ApiKey.AddPartitionsToTxn, build, node=0, max_version=3)
    return resp.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code


def _build_end(tid: str, pid: int, epoch: int, commit: bool):
    return lambda cls, v: cls(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit)


def _end(k: KafkaClient, tid: str, pid: int, epoch: int, commit: bool, version: int):
    return k.call(ApiKey.EndTxn, _build_end(tid, pid, epoch, commit), node=0, max_version=version)


def _late_abort_meets_the_next_transaction(cluster, proxy, k, tid: str, version: int) -> tuple[int, int]:
    """Transaction 1 (a0) is aborted by a retried EndTxn while the first one is held in the proxy; transaction 2
    writes b and the held abort arrives. (The held EndTxn's error, transaction 2's commit's error.)"""
    create_topic(cluster.bootstrap, tid)
    k.refresh_metadata([tid])
    pid, epoch = _init(cluster.bootstrap, k, tid)
    tv2 = version >= 5
    if not tv2:
        assert _add(k, tid, tid, pid, epoch) == 0
    assert _produce(k, 12 if tv2 else 11, tid, tid, pid, epoch, 0, b"a0") == 0
    proxy.hold()
    late = _Late(proxy, ApiKey.EndTxn, version, _build_end(tid, pid, epoch, False))
    retried = _end(k, tid, pid, epoch, False, version)
    assert retried.error_code == 0
    epoch2, seq2 = (retried.producer_epoch, 0) if tv2 else (epoch, 1)
    wait_for(lambda: stable_end(cluster.bootstrap, tid) == 2, 30, "the ABORT marker of transaction 1")
    if not tv2:
        wait_for(lambda: _add(k, tid, tid, pid, epoch2) == 0, 30, "transaction 2 to start")
    wait_for(lambda: _produce(k, 12 if tv2 else 11, tid, tid, pid, epoch2, seq2, b"b") == 0, 30, "transaction 2's b")
    proxy.release()
    return late.answer().error_code, _end(k, tid, pid, epoch2, True, version).error_code


@pytest.fixture
def txn_cluster(cluster_factory):
    cluster = cluster_factory(1, overrides=TXN)
    proxy = HoldingProxy(cluster.brokers[0].port)
    try:
        yield cluster, proxy
    finally:
        proxy.close()


def _aborted_with_a_late_batch(cluster, proxy, k, tid, topic, version, pid, epoch):
    """Transaction 1: a0 written, a1 held in the proxy; aborted once a0's ABORT marker is stable."""
    if version < 12:
        assert _add(k, tid, topic, pid, epoch) == 0
    assert _produce(k, version, tid, topic, pid, epoch, 0, b"a0") == 0
    proxy.hold()
    late = _late_produce(proxy, version, tid, topic, pid, epoch, 1, b"a1")
    end = _end(k, tid, pid, epoch, False, 5 if version >= 12 else 4)
    assert end.error_code == 0
    wait_for(lambda: stable_end(cluster.bootstrap, topic) == 2, 30, "the ABORT marker of transaction 1")
    return late, end


def test_part_1_verification_stops_a_late_produce_only_until_the_next_transaction_adds_its_partition(txn_cluster):
    cluster, proxy = txn_cluster
    create_topic(cluster.bootstrap, "early")
    create_topic(cluster.bootstrap, "late")
    with KafkaClient(cluster.bootstrap) as k:
        k.refresh_metadata(["early", "late"])
        # released before the next transaction: the coordinator says "not in the transaction"
        pid, epoch = _init(cluster.bootstrap, k, "early")
        late, _ = _aborted_with_a_late_batch(cluster, proxy, k, "early", "early", 11, pid, epoch)
        proxy.release()
        assert _produce_error(late.answer()) == E.TRANSACTION_ABORTABLE
        assert stable_end(cluster.bootstrap, "early") == 2

        # released after the next transaction added the partition: same producer id and epoch, so it passes
        pid, epoch = _init(cluster.bootstrap, k, "late")
        late, _ = _aborted_with_a_late_batch(cluster, proxy, k, "late", "late", 11, pid, epoch)
        wait_for(lambda: _add(k, "late", "late", pid, epoch) == 0, 30, "transaction 2 to start")
        proxy.release()
        assert _produce_error(late.answer()) == E.NONE
        assert _end(k, "late", pid, epoch, True, 4).error_code == 0
        # KAFKA-17754: the held EndTxn(abort) of transaction 1 aborts transaction 2, whose commit then fails
        assert _late_abort_meets_the_next_transaction(cluster, proxy, k, "endtxn", 4) == (E.NONE, E.INVALID_TXN_STATE)
    # The anomaly (G1a, an aborted write read as committed): transaction 1's a1 is committed by transaction 2.
    assert read_all(cluster.bootstrap, {"late": 1}, None, 1, timeout=15) == [b"a1"]


def _finalize_tv2(bootstrap: str) -> None:
    p = subprocess.run([os.path.join(REPO, "bin", "pylog-features.sh"), "--bootstrap-server", bootstrap, "upgrade",
                        "--feature", "transaction.version=2"], capture_output=True, text=True, timeout=120, cwd="/")
    assert (p.returncode, p.stdout) == (0, "transaction.version was upgraded to 2.\n"), p.stderr

    def served() -> bool:
        with KafkaClient(bootstrap) as fresh:
            fresh.refresh_metadata([])
            return all(fresh.version_for(ApiKey.EndTxn, n) == 5 and fresh.version_for(ApiKey.Produce, n) == 12
                       for n in fresh.brokers)
    wait_for(served, 30, "EndTxn 5 and Produce 12 in every broker's ApiVersions")


def test_transaction_version_2_fences_the_late_produce_and_older_clients_keep_working(txn_cluster):
    cluster, proxy = txn_cluster
    create_topic(cluster.bootstrap, "tv2")
    with KafkaClient(cluster.bootstrap) as k:
        assert k.version_for(ApiKey.EndTxn, 0) == 4  # Kafka 3.9's range until the level is finalized
    _finalize_tv2(cluster.bootstrap)
    with KafkaClient(cluster.bootstrap) as k:
        k.refresh_metadata(["tv2"])
        pid, epoch = _init(cluster.bootstrap, k, "tv2")
        # no AddPartitionsToTxn: Produce 12 adds the partition; EndTxn 5 answers the bumped epoch
        late, end = _aborted_with_a_late_batch(cluster, proxy, k, "tv2", "tv2", 12, pid, epoch)
        assert (end.producer_id, end.producer_epoch) == (pid, epoch + 1)
        wait_for(lambda: _produce(k, 12, "tv2", "tv2", pid, epoch + 1, 0, b"b") == 0, 30, "transaction 2's write")
        proxy.release()
        assert _produce_error(late.answer()) == E.INVALID_PRODUCER_EPOCH
        # TxnOffsetCommit 5 without AddOffsetsToTxn: the group's offsets partition joins transaction 2
        k.call(ApiKey.FindCoordinator, lambda cls, v: cls(key="g", key_type=0), max_version=3)
        wait_for(lambda: txn_offset_commit(k, "g", "tv2", pid, epoch + 1, 1, transactional_id="tv2") == 0, 60,
                 "the transactional offset commit")
        committed = _end(k, "tv2", pid, epoch + 1, True, 5)
        assert (committed.error_code, committed.producer_epoch) == (0, epoch + 2)
        wait_for(lambda: _committed_offset(k, "g", "tv2") == 1, 30, "the offset committed with transaction 2")
        # the held EndTxn(abort) of transaction 1 is fenced: transaction 2 commits
        assert _late_abort_meets_the_next_transaction(cluster, proxy, k, "endtxn2", 5) == (E.PRODUCER_FENCED, E.NONE)
    assert read_all(cluster.bootstrap, {"tv2": 1, "endtxn2": 1}, None, 2, timeout=15) == [b"b", b"b"]
    _old_clients_commit(cluster.bootstrap)  # transaction version 0/1 clients on the same cluster


def _committed_offset(k: KafkaClient, group: str, topic: str) -> int:
    def build(cls, v):
        return cls(group_id=group, require_stable=True,
                   topics=[cls.OffsetFetchRequestTopic(name=topic, partition_indexes=[0])])
    resp = k.call(ApiKey.OffsetFetch, build, node=0, max_version=7)
    return resp.topics[0].partitions[0].committed_offset if resp.error_code == 0 else -1


def _epoch_of(bootstrap: str, tid: str) -> int:
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.DescribeTransactions, lambda cls, v: cls(transactional_ids=[tid]), node=0)
    return resp.transaction_states[0].producer_epoch


def _old_clients_commit(bootstrap: str) -> None:
    """librdkafka and kafka-python read no finalized transaction.version and send EndTxn <= v3: at level 2
    their transactions commit as before, and the epoch InitProducerId gave them does not move (an EndTxn v5
    would have bumped it) -- neither uses transaction version 2."""
    from confluent_kafka import Producer

    create_topic(bootstrap, "old")
    ck = Producer({"bootstrap.servers": bootstrap, "transactional.id": "ck"})
    ck.init_transactions(60)
    ck.begin_transaction()
    ck.produce("old", value=b"librdkafka")
    ck.commit_transaction(60)
    kafka_python_commit(bootstrap, "kp", "old", b"kafka-python")
    assert sorted(read_all(bootstrap, {"old": 1}, None, 2, timeout=15)) == [b"kafka-python", b"librdkafka"]
    assert (_epoch_of(bootstrap, "ck"), _epoch_of(bootstrap, "kp")) == (0, 0)


def test_transaction_version_2_across_brokers(cluster_factory):
    """The leader of the written partition is not the coordinator: Produce 12 has the leader add the
    partition over the inter-broker AddPartitionsToTxn v5 (not verifyOnly), and the coordinator's markers
    reach it with the bumped epoch."""
    cluster = cluster_factory(2, overrides=TXN)
    create_topic(cluster.bootstrap, "x", partitions=1, rf=1)
    _finalize_tv2(cluster.bootstrap)
    with KafkaClient(cluster.bootstrap) as k:
        meta = k.refresh_metadata(["x"])
        leader = meta.topics[0].partitions[0].leader_id
        tid = next(t for t in (f"x{i}" for i in range(100)) if coordinator_of(cluster.bootstrap, t) != leader)
        coordinator = 1 - leader
        r = k.call(ApiKey.InitProducerId, lambda cls, v: cls(transactional_id=tid, transaction_timeout_ms=60000,
                                                              producer_id=-1, producer_epoch=-1), node=coordinator)
        pid, epoch = r.producer_id, r.producer_epoch

        def produce(e: int, seq: int, value: bytes) -> int:
            resp = k.call(ApiKey.Produce, _build_produce(tid, "x", pid, e, seq, value), node=leader, max_version=12)
            return resp.responses[0].partition_responses[0].error_code
        assert produce(epoch, 0, b"one") == 0
        end = k.call(ApiKey.EndTxn, lambda cls, v: cls(transactional_id=tid, producer_id=pid, producer_epoch=epoch,
                                                       committed=True), node=coordinator, max_version=5)
        assert (end.error_code, end.producer_epoch) == (0, epoch + 1)
        wait_for(lambda: stable_end(cluster.bootstrap, "x") == 2, 30, "the COMMIT marker on the other broker")
        assert produce(epoch, 1, b"late") == E.INVALID_PRODUCER_EPOCH  # the coordinator fences the old epoch
    assert read_all(cluster.bootstrap, {"x": 1}, None, 1, timeout=15) == [b"one"]
