"""The transaction coordinator over an in-memory transaction log and marker writer."""

import asyncio

import pytest

from pylog.common.errors import ErrorCode as E
from pylog.coordinator.transaction.coordinator import TransactionCoordinator, TxnConfig
from pylog.coordinator.transaction.metadata import TxnMetadata, to_log_value
from pylog.coordinator.transaction.records import TxnLogValue, decode_key, decode_value, encode_key, encode_value
from pylog.coordinator.transaction.state import TxnState as S


class Log:
    def __init__(self):
        self.records = {p: [] for p in range(3)}
        self.epochs = {p: 5 for p in range(3)}
        self.fail = None

    def num_partitions(self):
        return 3

    def leader_epoch(self, p):
        return self.epochs.get(p)

    async def append(self, p, records):
        if self.fail:
            return self.fail
        self.records[p] += records
        return E.NONE

    async def read(self, p):
        for r in list(self.records[p]):
            yield r

    def states(self, tid):
        return [S(next(s for s in S if s.id == decode_value(v).status).value)
                for p in self.records for k, v in self.records[p] if decode_key(k) == tid]


class Markers:
    def __init__(self, failures=0):
        self.calls, self.failures = [], failures

    async def write(self, pid, epoch, coordinator_epoch, commit, partitions):
        self.calls.append((pid, epoch, coordinator_epoch, commit, partitions))
        if self.failures:
            self.failures -= 1
            return {tp: E.NOT_LEADER_OR_FOLLOWER for tp in partitions}
        return {tp: E.NONE for tp in partitions}


def make(log=None, markers=None, clock=None):
    ids = iter(range(1000, 2000))

    async def new_id():
        return next(ids)
    return TransactionCoordinator(log or Log(), markers or Markers(), new_id, lambda tid, n: 1,
                                  TxnConfig(marker_retry_backoff_ms=1), now_ms=clock or (lambda: 100))


async def ready(c):
    """What the broker does on becoming leader of every partition: load them (requests meanwhile get
    COORDINATOR_LOAD_IN_PROGRESS, as in Kafka)."""
    for p in range(c.store.num_partitions()):
        c.on_leadership_change(p)
        await c.ownership.wait(p)
    return c


async def settle(c):
    for _ in range(50):
        if not c._tasks:
            return
        await asyncio.sleep(0.005)
    raise AssertionError("background marker tasks did not finish")


def test_commit_writes_prepare_markers_then_complete():
    async def run():
        log, markers = Log(), Markers(failures=2)
        c = await ready(make(log, markers))
        r = await c.init_producer_id("tx", 60000)
        assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1000, 0)
        assert await c.add_partitions("tx", 1000, 0, frozenset({("t", 0), ("t", 1)})) == E.NONE
        assert await c.end_txn("tx", 1000, 0, commit=True) == E.NONE
        await settle(c)
        assert log.states("tx") == [S.EMPTY, S.ONGOING, S.PREPARE_COMMIT, S.COMPLETE_COMMIT]
        assert len(markers.calls) == 3 and markers.calls[-1][:4] == (1000, 0, 5, True)  # retried until written
        assert await c.end_txn("tx", 1000, 0, commit=True) == E.NONE  # a retried EndTxn
        assert await c.end_txn("tx", 1000, 0, commit=False) == E.INVALID_TXN_STATE
    asyncio.run(run())


def test_second_producer_fences_the_first_and_aborts_its_transaction():
    async def run():
        log, markers = Log(), Markers()
        c = await ready(make(log, markers))
        await c.init_producer_id("tx", 60000)
        await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)}))
        r = await c.init_producer_id("tx", 60000)
        assert r.error == E.CONCURRENT_TRANSACTIONS
        await settle(c)
        assert markers.calls == [(1000, 1, 5, False, frozenset({("t", 0)}))]  # aborted with the bumped epoch
        r = await c.init_producer_id("tx", 60000)
        assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1000, 2)
        assert await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)})) == E.PRODUCER_FENCED
        # Kafka's PrepareEpochFence stays in memory: the log holds the abort at the bumped epoch.
        assert log.states("tx") == [S.EMPTY, S.ONGOING, S.PREPARE_ABORT, S.COMPLETE_ABORT, S.EMPTY]
        assert [decode_value(v).producer_epoch for k, v in log.records[1]] == [0, 0, 1, 1, 2]
    asyncio.run(run())


def test_a_new_coordinator_reloads_and_finishes_a_half_done_commit():
    async def run():
        log = Log()
        stuck = Markers(failures=10**9)
        old = await ready(make(log, stuck))
        await old.init_producer_id("tx", 60000)
        await old.add_partitions("tx", 1000, 0, frozenset({("t", 0)}))
        await old.end_txn("tx", 1000, 0, commit=True)
        await asyncio.sleep(0.02)
        log.epochs[1] = 6  # leadership moved: the old coordinator's marker task gives up
        await settle(old)
        markers = Markers()
        new = await ready(make(log, markers))
        # Loading the partition resumes the markers; depending on whether they are
        # all written by the time it is answered, the retried commit is in progress or done.
        assert await new.end_txn("tx", 1000, 0, commit=True) in (E.CONCURRENT_TRANSACTIONS, E.NONE)
        await settle(new)
        assert markers.calls[-1][2] == 6 and log.states("tx")[-1] is S.COMPLETE_COMMIT
        assert await new.end_txn("tx", 1000, 0, commit=True) == E.NONE
    asyncio.run(run())


def test_timed_out_transaction_is_fenced_and_aborted():
    async def run():
        now = [100]
        log, markers = Log(), Markers()
        c = await ready(make(log, markers, clock=lambda: now[0]))
        await c.init_producer_id("tx", 1000)
        await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)}))
        assert await c.abort_timed_out() == 0
        now[0] = 1100
        assert await c.abort_timed_out() == 1
        await settle(c)
        assert c.txns["tx"].state is S.COMPLETE_ABORT
        assert log.states("tx") == [S.EMPTY, S.ONGOING, S.PREPARE_ABORT, S.COMPLETE_ABORT]
        assert markers.calls == [(1000, 1, 5, False, frozenset({("t", 0)}))]
        assert await c.end_txn("tx", 1000, 0, commit=True) == E.PRODUCER_FENCED
        r = await c.init_producer_id("tx", 1000, producer_id=1000, producer_epoch=0)
        assert r.error == E.PRODUCER_FENCED  # the timed-out producer cannot re-init as a retry of the bump
    asyncio.run(run())


@pytest.mark.parametrize("epochs,fail,error", [({1: None}, None, E.NOT_COORDINATOR),
                                               ({}, E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE)])
def test_not_coordinator_and_failed_writes(epochs, fail, error):
    async def run():
        log = Log()
        log.epochs.update(epochs)
        log.fail = fail
        c = await ready(make(log))
        assert (await c.init_producer_id("tx", 60000)).error == error
        assert (await c.init_producer_id("tx", 10**9)).error == E.INVALID_TRANSACTION_TIMEOUT
    asyncio.run(run())


def test_concurrent_requests_share_one_load_and_get_load_in_progress_meanwhile():
    async def run():
        log = Log()
        old = await ready(make(log))
        await old.init_producer_id("tx", 60000)
        reads = []

        class Counting(Log):
            async def read(self, p):
                reads.append(p)
                await asyncio.sleep(0.01)
                for r in list(log.records[p]):
                    yield r
        counting = Counting()
        counting.records = log.records
        new = make(counting)
        results = await asyncio.gather(*(new.add_partitions("tx", 1000, 0, frozenset({("t", i)})) for i in range(3)))
        assert results == [E.COORDINATOR_LOAD_IN_PROGRESS] * 3 and reads == [1]  # one load, as Kafka answers
        await new.ownership.wait(1)
        results = await asyncio.gather(*(new.add_partitions("tx", 1000, 0, frozenset({("t", i)})) for i in range(3)))
        assert results == [E.NONE] * 3 and reads == [1]
        assert new.txns["tx"].partitions == {("t", 0), ("t", 1), ("t", 2)}
    asyncio.run(run())


def test_a_failed_load_is_retried_by_the_next_request():
    async def run():
        log = Log()
        failures = [1]

        class Flaky(Log):
            async def read(self, p):
                if failures:
                    failures.pop()
                    raise OSError("disk hiccup")
                for r in list(log.records[p]):
                    yield r
        flaky = Flaky()
        flaky.records = log.records
        c = make(flaky)
        assert (await c.init_producer_id("tx", 60000)).error == E.COORDINATOR_LOAD_IN_PROGRESS
        await c.ownership.wait(1)  # failed
        assert (await c.init_producer_id("tx", 60000)).error == E.COORDINATOR_LOAD_IN_PROGRESS  # loads again
        await c.ownership.wait(1)
        assert (await c.init_producer_id("tx", 60000)).error == E.NONE
    asyncio.run(run())


def test_idle_transactional_ids_expire_with_a_tombstone():
    async def run():
        now = [100]
        log = Log()
        c = await ready(make(log, clock=lambda: now[0]))
        await c.init_producer_id("idle", 60000)
        await c.init_producer_id("busy", 60000)
        await c.add_partitions("busy", 1001, 0, frozenset({("t", 0)}))
        now[0] = 100 + 7 * 86400000
        assert await c.expire_transactional_ids(7 * 86400000) == 1  # an Ongoing transaction never expires
        assert set(c.txns) == {"busy"} and log.records[1][-1] == (encode_key("idle"), None)
        fresh = await ready(make(log))  # a reload finds the tombstone: the id is gone there too
        assert fresh.check("busy") == E.NONE and set(fresh.txns) == {"busy"}
        r = await c.init_producer_id("idle", 60000)  # and starts afresh: a new producer id, epoch 0
        assert (r.error, r.producer_epoch) == (E.NONE, 0) and r.producer_id not in (1000, 1001)
    asyncio.run(run())


def test_loading_an_older_log_with_prepare_epoch_fence_finishes_the_abort():
    async def run():
        log = Log()
        # Written by an older pylog (status 7, the bumped epoch): the fence its coordinator left half done.
        fenced = TxnLogValue(1000, 1, 60000, S.PREPARE_EPOCH_FENCE.id, {"t": (0,)}, 90, 50)
        log.records[1] = [(encode_key("tx"), encode_value(fenced))]
        markers = Markers()
        new = await ready(make(log, markers))
        assert new.check("tx") == E.NONE
        assert new.txns["tx"].state in (S.PREPARE_ABORT, S.COMPLETE_ABORT)
        await settle(new)
        assert log.states("tx") == [S.PREPARE_EPOCH_FENCE, S.COMPLETE_ABORT]  # nothing new at status 7
        assert markers.calls == [(1000, 1, 5, False, frozenset({("t", 0)}))]  # aborted with the bumped epoch
        assert (await new.init_producer_id("tx", 60000)).producer_epoch == 2
    asyncio.run(run())


def test_prepare_epoch_fence_is_never_encoded():
    meta = TxnMetadata("tx", 1000, producer_epoch=1, state=S.PREPARE_EPOCH_FENCE, partitions=frozenset({("t", 0)}))
    with pytest.raises(ValueError, match="PrepareEpochFence is never written"):
        to_log_value(meta)


def test_verify_only_reports_which_partitions_are_in_the_transaction():
    async def run():
        c = await ready(make())
        await c.init_producer_id("tx", 60000)
        await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)}))
        both = frozenset({("t", 0), ("t", 1)})
        assert await c.verify_partitions("tx", 1000, 0, both) == {("t", 0): E.NONE, ("t", 1): E.TRANSACTION_ABORTABLE}
        assert await c.verify_partitions("tx", 1000, 1, both) == dict.fromkeys(both, E.PRODUCER_FENCED)
        assert await c.verify_partitions("other", 1000, 0, both) == dict.fromkeys(both, E.INVALID_PRODUCER_ID_MAPPING)
    asyncio.run(run())


@pytest.mark.parametrize("failures,state", [(0, S.COMPLETE_COMMIT), (10**9, S.PREPARE_COMMIT)])
def test_end_txn_answers_once_complete_when_the_markers_are_quick(failures, state):
    async def run():
        c = await ready(make(markers=Markers(failures=failures)))
        c.config = TxnConfig(marker_retry_backoff_ms=1, end_txn_complete_wait_ms=30)
        await c.init_producer_id("tx", 60000)
        await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)}))
        assert await asyncio.wait_for(c.end_txn("tx", 1000, 0, commit=True), 5) == E.NONE
        # Complete: the next transaction may start at once. Stuck markers: answered anyway, still committing.
        assert c.txns["tx"].state is state
        expected = E.NONE if failures == 0 else E.CONCURRENT_TRANSACTIONS
        assert await c.add_partitions("tx", 1000, 0, frozenset({("t", 1)})) == expected
        await c.close()
    asyncio.run(run())


def test_end_txn_v2_writes_markers_at_the_bumped_epoch_and_answers_it():
    """KIP-890 part 2: the markers carry epoch + 1, the reply names it, the old epoch is fenced after."""
    async def run():
        log, markers = Log(), Markers()
        c = await ready(make(log, markers))
        await c.init_producer_id("tx", 60000)
        assert await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)})) == E.NONE
        r = await c.end_txn_v2("tx", 1000, 0, commit=False)
        assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1000, 1)
        await settle(c)
        assert log.states("tx") == [S.EMPTY, S.ONGOING, S.PREPARE_ABORT, S.COMPLETE_ABORT]
        assert markers.calls[-1][:4] == (1000, 1, 5, False)
        retried = await c.end_txn_v2("tx", 1000, 0, commit=False)  # the reply was lost: same answer
        assert (retried.error, retried.producer_epoch) == (E.NONE, 1)
        assert await c.add_partitions("tx", 1000, 0, frozenset({("t", 0)})) == E.PRODUCER_FENCED
        assert await c.add_partitions("tx", 1000, 1, frozenset({("t", 0)})) == E.NONE
        await c.close()
    asyncio.run(run())
