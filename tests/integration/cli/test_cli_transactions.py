"""bin/pylog-transactions.sh against a real broker: kafka-transactions.sh's tables, abort of a hanging
transaction, find-hanging, and describe/list of a confluent-kafka transactional producer.

A hanging transaction is made the way one happened before KIP-890: transactional batches reach a
partition from a producer whose coordinator never writes their markers (here, raw Produce requests
with a producer id no coordinator knows). Those brokers run with transaction.partition.verification.enable
=false, as Kafka before 3.6 (and 3.6+ with the setting off), since with verification the leader refuses them.
"""

from __future__ import annotations

import time

import pytest

from cli_helpers import script
from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.records import build_batch
from support.clients import create_topic, wait_for
from support.txn import coordinator_of, read_all

pytestmark = pytest.mark.integration

# Broker settings (not client defaults): fewer __transaction_state/__consumer_offsets partitions load faster.
TXN = {"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3"}
UNVERIFIED = {**TXN, "transaction.partition.verification.enable": "false"}
GHOST, PLAIN, OLD = 4242, 4243, 4244  # producer ids no transaction coordinator knows
PRODUCERS_HEADER = ("ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\t"
                    "CurrentTransactionStartOffset\t")
HANGING_HEADER = "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t"


def _produce(bootstrap: str, topic: str, pid: int, transactional: bool) -> None:
    raw = build_batch([(None, b"v", (), None)], producer_id=pid, producer_epoch=0, base_sequence=0,
                      is_transactional=transactional)

    def build(cls, v):
        part = cls.TopicProduceData.PartitionProduceData(index=0, records=raw)
        return cls(transactional_id="ghost-app" if transactional else None, acks=-1, timeout_ms=10000,
                   topic_data=[cls.TopicProduceData(name=topic, partition_data=[part])])
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.Produce, build, node=0, max_version=8)
    assert resp.responses[0].partition_responses[0].error_code == 0


def _tool(bootstrap: str, *args: str):
    return script("pylog-transactions.sh", "--bootstrap-server", bootstrap, *args)


def _rows(stdout: str) -> list[list[str]]:
    """The table's rows (after the header), cells stripped of their padding."""
    return [[c.strip() for c in line.split("\t")[:-1]] for line in stdout.splitlines()[1:]]


def test_describe_producers_and_abort_a_hanging_transaction(cluster_factory):
    cluster = cluster_factory(1, overrides=UNVERIFIED)
    b = cluster.bootstrap
    create_topic(b, "hang", partitions=1)
    _produce(b, "hang", GHOST, transactional=True)  # offset 0, never ended
    _produce(b, "hang", PLAIN, transactional=False)  # offset 1, an idempotent producer
    _produce(b, "hang", OLD, transactional=True)  # offset 2, never ended

    r = _tool(b, "describe-producers", "--topic", "hang", "--partition", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == PRODUCERS_HEADER
    rows = _rows(r.stdout)
    now = int(time.time() * 1000)
    assert all(0 <= now - int(row[4]) < 120_000 for row in rows)  # LastTimestamp: the batches' own
    assert [row[:4] + row[5:] for row in rows] == [
        [str(GHOST), "0", "-1", "0", "0"], [str(PLAIN), "0", "-1", "0", "None"], [str(OLD), "0", "-1", "0", "2"]]
    assert _tool(b, "describe-producers", "--topic", "hang", "--partition", "0", "--broker-id", "0").stdout == r.stdout

    r = _tool(b, "describe-producers", "--topic", "hang", "--partition", "7")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.strip() == ("Failed to describe producers for partition hang-7 on leader: This server does not "
                                "host this topic-partition.. Enable debug logging for additional detail.")

    # By start offset (brokers 3.0+), then by producer id, epoch and coordinator epoch (older brokers).
    r = _tool(b, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "0")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = _tool(b, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "0")
    assert (r.returncode, r.stderr.strip()) == (
        1, "Could not find any open transactions starting at offset 0 on partition hang-0")
    r = _tool(b, "abort", "--topic", "hang", "--partition", "0", "--producer-id", str(OLD), "--producer-epoch", "0",
              "--coordinator-epoch", "-1")
    assert (r.returncode, r.stderr) == (0, "")
    after = _rows(_tool(b, "describe-producers", "--topic", "hang", "--partition", "0").stdout)
    assert [(row[0], row[5]) for row in after] == [(str(GHOST), "None"), (str(PLAIN), "None"), (str(OLD), "None")]


def test_find_hanging_then_abort(cluster_factory):
    cluster = cluster_factory(1, overrides=UNVERIFIED)
    b = cluster.bootstrap
    create_topic(b, "stuck", partitions=2)
    _produce(b, "stuck", GHOST, transactional=True)
    time.sleep(0.05)  # older than the 0 minute timeout below by a clear margin

    r = _tool(b, "find-hanging", "--topic", "stuck", "--max-transaction-timeout", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == HANGING_HEADER
    (row,) = _rows(r.stdout)
    assert row[:6] + row[7:] == ["stuck", "0", str(GHOST), "0", "-1", "0", "0"]
    by_broker = _tool(b, "find-hanging", "--broker-id", "0", "--max-transaction-timeout", "0")
    assert by_broker.returncode == 0 and _rows(by_broker.stdout) == [row]
    # The default timeout (15 minutes) leaves a young transaction alone.
    assert _tool(b, "find-hanging", "--topic", "stuck").stdout.strip() == HANGING_HEADER.strip()

    assert _tool(b, "abort", "--topic", "stuck", "--partition", "0", "--start-offset", row[5]).returncode == 0
    r = _tool(b, "find-hanging", "--topic", "stuck", "--max-transaction-timeout", "0")
    assert (r.returncode, r.stdout.strip()) == (0, HANGING_HEADER.strip())
    r = _tool(b, "find-hanging", "--topic", "nope")
    assert (r.returncode, r.stderr.strip()) == (1, "Failed to describe 1 topics: This server does not host this "
                                                   "topic-partition.. Enable debug logging for additional detail.")


def test_describe_and_list_a_confluent_transactional_producer(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    cluster = cluster_factory(1, overrides=TXN)
    b = cluster.bootstrap
    create_topic(b, "orders", partitions=2)
    p = ck.Producer({"bootstrap.servers": b, "transactional.id": "shop-1"})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce("orders", value=b"o1", partition=1)
    p.produce("orders", value=b"o2", partition=0)
    p.flush(30)

    r = _tool(b, "describe", "--transactional-id", "shop-1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == (  # the last column is as wide as its value
        "CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\tTransactionState\tTransactionTimeoutMs\t"
        "CurrentTransactionStartTimeMs\tTransactionDurationMs\tTopicPartitions  \t")
    (row,) = _rows(r.stdout)
    pid = row[2]
    assert row[:2] + row[3:6] + row[8:] == ["0", "shop-1", "0", "Ongoing", "60000", "orders-0,orders-1"]
    started = row[6]
    assert int(started) > 0 and int(row[7]) >= 0  # start time and duration of the open transaction
    r = _tool(b, "list")
    assert (r.returncode, r.stdout.splitlines()[0]) == (0, "TransactionalId\tCoordinator\tProducerId\tTransactionState\t")
    assert _rows(r.stdout) == [["shop-1", "0", pid, "Ongoing"]]
    # A transaction in progress is not hanging: its coordinator knows its partitions.
    time.sleep(0.05)
    assert _rows(_tool(b, "find-hanging", "--topic", "orders", "--max-transaction-timeout", "0").stdout) == []

    p.commit_transaction(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the markers are written in the background after EndTxn is answered
        row = _rows(_tool(b, "describe", "--transactional-id", "shop-1").stdout)[0]
        if row[4] == "CompleteCommit":
            break
        time.sleep(0.2)
    # As Kafka's coordinator, a completed transaction keeps its start time and has no partitions left.
    assert row[4:7] + row[8:] == ["CompleteCommit", "60000", started, ""]
    r = _tool(b, "describe", "--transactional-id", "nope")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.strip() == (
        "Failed to describe transaction state of transactional-id `nope`: DescribeTransactions request for "
        "transactionalId `nope` failed because the ID could not be found. Enable debug logging for additional detail.")


def _create_on(bootstrap: str, topic: str, broker: int) -> None:
    """A one-partition topic whose only replica is `broker`."""
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.CreateTopics, lambda cls, v: cls(
            topics=[cls.CreatableTopic(name=topic, num_partitions=-1, replication_factor=-1, configs=[],
                                       assignments=[cls.CreatableTopic.CreatableReplicaAssignment(
                                           partition_index=0, broker_ids=[broker])])],
            timeout_ms=30000, validate_only=False))
    assert resp.topics[0].error_code == 0, resp.topics[0].error_message


def test_describe_lists_the_partitions_until_the_markers_are_written(cluster_factory):
    """Kafka keeps topicPartitions through PrepareCommit/PrepareAbort and clears them at Complete*: while
    the only leader of the transaction's partition is down its markers wait, and describe shows them."""
    ck = pytest.importorskip("confluent_kafka")
    # One replica of __transaction_state (a broker setting) keeps the coordinator writing with the other broker down.
    cluster = cluster_factory(2, overrides={**TXN, "transaction.state.log.replication.factor": "1"})
    b = cluster.bootstrap
    p = ck.Producer({"bootstrap.servers": b, "transactional.id": "pending-1"})
    p.init_transactions(60)
    coordinator = coordinator_of(b, "pending-1")
    other = 1 - coordinator
    _create_on(b, "far", other)
    p.begin_transaction()
    p.produce("far", value=b"x", partition=0)
    assert p.flush(30) == 0
    cluster.brokers[other].kill()
    p.commit_transaction(60)  # answered once PrepareCommit is durable; the marker waits for "far"'s leader

    def describe() -> list[str]:
        r = _tool(cluster.brokers[coordinator].address, "describe", "--transactional-id", "pending-1")
        assert r.returncode == 0, r.stderr
        (row,) = _rows(r.stdout)
        return row
    row = describe()
    assert [row[0], row[1], row[4], row[8]] == [str(coordinator), "pending-1", "PrepareCommit", "far-0"]
    cluster.restart(other)
    wait_for(lambda: describe()[4] == "CompleteCommit", timeout=60, what="the commit marker to be written")
    assert describe()[8:] == [""]  # Complete*: no partitions left
    # The restarted leader may be asked before it hosts "far" again: that answer is retried, not taken
    # as a deleted topic, so the marker is there and read_committed sees the record.
    assert read_all(b, {"far": 1}, "read_committed", 1, timeout=60) == [b"x"]
