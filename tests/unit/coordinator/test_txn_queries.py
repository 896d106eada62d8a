"""DescribeTransactions / ListTransactions answers: Kafka's state names, filters and errors."""

import asyncio

from pylog.common.errors import ErrorCode as E
from pylog.coordinator.transaction import queries
from pylog.coordinator.transaction.metadata import TxnMetadata
from pylog.coordinator.transaction.state import TxnState as S

from test_txn_coordinator import Log, make, ready  # noqa: E402  (same directory: the in-memory seams)

ONGOING = TxnMetadata("tx", 7, producer_epoch=3, timeout_ms=60000, state=S.ONGOING,
                      partitions=frozenset({("b", 2), ("a", 1), ("a", 0)}), start_ms=1234, update_ms=1300)


def test_describe_reports_kafka_names_and_partitions_by_topic():
    d = queries.describe("tx", E.NONE, ONGOING)
    assert d == queries.TxnDescription("tx", E.NONE, "Ongoing", 60000, 1234, 7, 3, (("a", (0, 1)), ("b", (2,))))


def test_describe_errors_keep_schema_defaults():
    assert queries.describe("tx", E.NONE, None) == queries.TxnDescription("tx", E.TRANSACTIONAL_ID_NOT_FOUND)
    dead = TxnMetadata("tx", 7, state=S.DEAD)
    assert queries.describe("tx", E.NONE, dead).error == E.TRANSACTIONAL_ID_NOT_FOUND
    assert queries.describe("tx", E.NOT_COORDINATOR, ONGOING) == queries.TxnDescription("tx", E.NOT_COORDINATOR)
    assert queries.describe("tx", E.COORDINATOR_LOAD_IN_PROGRESS, None).error == E.COORDINATOR_LOAD_IN_PROGRESS
    assert queries.describe("", E.NONE, None).error == E.INVALID_REQUEST


def test_list_filters_by_state_name_exactly_and_by_producer_id():
    metas = [ONGOING, TxnMetadata("e", 8, state=S.EMPTY), TxnMetadata("d", 9, state=S.DEAD),
             TxnMetadata("c", 10, state=S.COMPLETE_COMMIT)]
    everything = queries.list_transactions(metas, [], [])
    assert everything == queries.TxnList(E.NONE, (), (
        queries.TxnListing("c", 10, "CompleteCommit"), queries.TxnListing("e", 8, "Empty"),
        queries.TxnListing("tx", 7, "Ongoing")))
    r = queries.list_transactions(metas, ["Ongoing", "ongoing", "Bogus", "Empty"], [])
    assert [t.transactional_id for t in r.transactions] == ["e", "tx"]
    assert r.unknown_state_filters == ("ongoing", "Bogus")
    assert [t.transactional_id for t in queries.list_transactions(metas, [], [8, 9]).transactions] == ["e"]
    assert queries.list_transactions(metas, ["Empty"], [7]).transactions == ()
    assert queries.list_transactions(metas, [], [], loading=True) == queries.TxnList(E.COORDINATOR_LOAD_IN_PROGRESS)


def test_coordinator_describe_and_list_over_its_partitions():
    async def run():
        log = Log()
        c = await ready(make(log))
        assert (await c.describe("tx")).error == E.TRANSACTIONAL_ID_NOT_FOUND
        r = await c.init_producer_id("tx", 60000)
        assert await c.add_partitions("tx", r.producer_id, r.producer_epoch, frozenset({("t", 0)})) == E.NONE
        d = await c.describe("tx")
        assert (d.error, d.state, d.producer_id, d.producer_epoch, d.timeout_ms, d.start_ms, d.topics) == (
            E.NONE, "Ongoing", 1000, 0, 60000, 100, (("t", (0,)),))
        listed = await c.list_transactions()
        assert listed.transactions == (queries.TxnListing("tx", 1000, "Ongoing"),)
        # A fresh coordinator (after a failover) answers LOAD_IN_PROGRESS until it has loaded what it leads.
        other = make(log)
        assert (await other.list_transactions()).error == E.COORDINATOR_LOAD_IN_PROGRESS
        await ready(other)
        assert (await other.list_transactions(["Ongoing"], [1000])).transactions == listed.transactions
        log.epochs[1] = None  # no longer the leader of the id's partition
        assert (await other.describe("tx")).error == E.NOT_COORDINATOR
        assert (await other.list_transactions()).transactions == ()
        await c.close()
        await other.close()
    asyncio.run(run())
