"""Transactional offset commits in the group coordinator: pending until the marker, commit/abort, ordering against
plain commits, KIP-447 fencing, and the same outcome after a reload from the log (MemoryLog from the group tests)."""

from __future__ import annotations

import asyncio

import pytest

from pylog.coordinator.group.api import CommitRequest, TxnCommitRequest
from pylog.coordinator.group.coordinator import GroupCoordinator
from pylog.coordinator.group.records import OffsetValue
from tests.unit.coordinator.test_group_coordinator import MemoryLog, cfg, join_req, loaded, run
from pylog.protocol.errors import ErrorCode as E

TP = ("t", 0)
PID, EPOCH = 4000, 0


def txn(offset: int, *, pid: int = PID, group: str = "g", generation: int = -1, member: str = "",
        instance: str | None = None, tps=(TP,)) -> TxnCommitRequest:
    return TxnCommitRequest(group, pid, EPOCH, generation, member, instance,
                            {tp: OffsetValue(offset, -1, "", 1) for tp in tps})


def plain(offset: int) -> CommitRequest:
    return CommitRequest("g", -1, "", None, {TP: OffsetValue(offset, -1, "", 1)})


def marker(c: GroupCoordinator, commit: bool, pid: int = PID) -> None:
    p = c.partition_of("g")
    c.on_txn_marker(p, pid, commit, c.store.marker(p, pid, commit))


def committed(c: GroupCoordinator) -> int | None:
    v = c.fetch("g", [TP]).offsets.get(TP)
    return None if v is None else v.offset


def test_pending_until_commit_marker_and_unstable_for_require_stable():
    async def go():
        c = await loaded()
        assert await c.txn_commit(txn(5)) == {TP: E.NONE}
        stored = c.store.records[c.partition_of("g")]
        assert [(r.producer_id, r.transactional) for r in stored] == [(PID, True)]
        assert committed(c) is None
        res = c.fetch("g", [TP], require_stable=True)
        assert res.unstable == {TP} and res.offsets == {}
        assert c.fetch("g", None).offsets == {}  # all offsets: only committed ones, no error
        marker(c, True)
        assert committed(c) == 5
        assert c.fetch("g", [TP], require_stable=True).unstable == set()
    run(go())


def test_abort_marker_drops_the_pending_offsets_and_keeps_the_committed_one():
    async def go():
        c = await loaded()
        await c.commit(plain(3))
        await c.txn_commit(txn(9))
        marker(c, False)
        assert committed(c) == 3 and not c.pending.by_producer
    run(go())


def test_a_plain_commit_written_after_the_transactional_one_wins():
    async def go():
        c = await loaded()
        await c.txn_commit(txn(9))
        await c.commit(plain(20))
        marker(c, True)
        assert committed(c) == 20  # the transactional batch is older in the log
    run(go())


def test_markers_of_another_producer_or_partition_change_nothing():
    async def go():
        c = await loaded()
        await c.txn_commit(txn(9))
        marker(c, True, pid=PID + 1)
        other = (c.partition_of("g") + 1) % c.store.num_partitions()
        c.on_txn_marker(other, PID, True, 0)
        assert committed(c) is None and c.pending.has("g", TP)
    run(go())


def test_kip447_fencing_by_generation_member_and_instance():
    async def go():
        c = await loaded()
        r = await c.join(join_req(instance="i1"))  # a static member joins in one round trip
        await c.sync("g", 1, r.member_id, "i1", None, None, {r.member_id: b"a"})
        assert await c.txn_commit(txn(1, generation=0, member=r.member_id)) == {TP: E.ILLEGAL_GENERATION}
        assert await c.txn_commit(txn(1, generation=1, member="zombie")) == {TP: E.UNKNOWN_MEMBER_ID}
        assert await c.txn_commit(txn(1, generation=1, member="zombie", instance="i1")) == {TP: E.FENCED_INSTANCE_ID}
        assert await c.txn_commit(txn(1, generation=1, member=r.member_id, instance="i1")) == {TP: E.NONE}
        # v0-2 carry no member: accepted although the group has members (Kafka does the same)
        assert await c.txn_commit(txn(2, pid=PID + 1)) == {TP: E.NONE}
        assert c.pending.by_producer.keys() == {PID, PID + 1}
    run(go())


def test_unknown_group_is_created_empty_and_not_coordinator_when_not_leading():
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        assert await c.txn_commit(txn(1, group="fresh")) == {TP: E.NONE}
        assert c.groups["fresh"].state.value == "Empty"
        store.epochs[c.partition_of("g")] = None
        assert await c.txn_commit(txn(1)) == {TP: E.NOT_COORDINATOR}
    run(go())


def test_a_failed_append_unstages_and_a_fenced_epoch_passes_through():
    async def go():
        c = await loaded()
        c.store.fail = E.NOT_ENOUGH_REPLICAS
        assert await c.txn_commit(txn(1)) == {TP: E.COORDINATOR_NOT_AVAILABLE}
        assert not c.pending.has("g", TP)
        c.store.fail = E.INVALID_PRODUCER_EPOCH
        assert await c.txn_commit(txn(1)) == {TP: E.INVALID_PRODUCER_EPOCH}
        assert not c.pending.by_producer
    run(go())


async def _reloaded(store: MemoryLog, c: GroupCoordinator) -> GroupCoordinator:
    p = c.partition_of("g")
    store.epochs[p] = None
    c.check_partition(p)
    store.epochs[p] = 1
    other = GroupCoordinator(store, cfg())
    other.check_partition(p)
    await asyncio.sleep(0.01)
    return other


def test_reload_replays_pending_committed_and_aborted_transactions_in_log_order():
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        await c.commit(plain(1))
        await c.txn_commit(txn(5, tps=(TP, ("t", 1))))  # committed below
        await c.txn_commit(txn(7, pid=PID + 1, tps=(("t", 1),)))  # aborted below
        await c.txn_commit(txn(8, pid=PID + 2, tps=(("t", 2),)))  # still open at the reload
        await c.commit(CommitRequest("g", -1, "", None, {("t", 1): OffsetValue(6, -1, "", 1)}))
        marker(c, True)
        marker(c, False, pid=PID + 1)
        before = c.fetch("g", None).offsets
        other = await _reloaded(store, c)
        after = other.fetch("g", None).offsets
        assert after == before
        assert {tp: v.offset for tp, v in after.items()} == {TP: 5, ("t", 1): 6}
        assert other.fetch("g", [("t", 2)], require_stable=True).unstable == {("t", 2)}
        marker(other, True, pid=PID + 2)
        assert other.fetch("g", [("t", 2)]).offsets[("t", 2)].offset == 8
    run(go())


def test_a_marker_written_while_loading_is_applied_once_loaded_but_not_twice():
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        await c.txn_commit(txn(5))
        p = c.partition_of("g")
        store.epochs[p] = None
        c.check_partition(p)
        store.epochs[p] = 1
        other = GroupCoordinator(store, cfg())
        assert other.check_partition(p) == E.COORDINATOR_LOAD_IN_PROGRESS
        seen = store.marker(p, PID + 9, False)  # a marker the loader reads: must not settle a later transaction
        other.on_txn_marker(p, PID + 9, False, seen)
        late = len(store.records[p]) + 100  # a marker past what the loader reads
        other.on_txn_marker(p, PID, True, late)
        await asyncio.sleep(0.01)
        assert committed(other) == 5
    run(go())


def test_deleting_the_group_or_its_offsets_drops_pending_transactional_offsets_live_and_at_reload():
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        await c.commit(plain(1))
        await c.txn_commit(txn(5))
        assert await c.delete_offsets("g", [TP]) == (E.NONE, {TP: E.NONE})
        marker(c, True)
        assert committed(c) is None  # the commit marker finds nothing left to commit
        await c.commit(plain(2))
        await c.txn_commit(txn(6, pid=PID + 1))
        assert await c.delete_group("g") == E.NONE
        assert not c.pending.by_producer
        marker(c, True, pid=PID + 1)
        other = await _reloaded(store, c)
        assert other.fetch("g", None).offsets == {} and not other.pending.by_producer  # the same after a reload
    run(go())


def _answer(c: GroupCoordinator, require_stable: bool = True) -> tuple[bool, int | None]:
    """(unstable, offset carried) of OffsetFetch for TP, as the handler writes it (None: -1, nothing committed)."""
    res = c.fetch("g", [TP], require_stable=require_stable)
    v = res.offsets.get(TP)
    return TP in res.unstable, None if v is None else v.offset


# Bug 7 (docs/reliability.md): a killed ctp worker's transaction kept its offsets pending for a minute; librdkafka,
# whose UNSTABLE_OFFSET_COMMIT answer arrived after a rebalance had changed its assignment, started the partition at
# the offset that answer carried. With -1 that was auto.offset.reset=earliest and 16,401 records were read twice.
# Each row: the commits before the fetch -> (unstable, offset the answer carries).
STEPS = {
    "plain 5": lambda c: c.commit(plain(5)),
    "txn 9": lambda c: c.txn_commit(txn(9)),
    "txn 11 by another producer": lambda c: c.txn_commit(txn(11, pid=PID + 1)),
}


@pytest.mark.parametrize("steps, marker_commit, require_stable, expected", [
    (["txn 9"], None, True, (True, None)),  # nothing committed yet: -1 with the error, the client retries
    (["plain 5", "txn 9"], None, True, (True, 5)),  # the bug-7 case: the last committed offset, never -1
    (["plain 5", "txn 9", "txn 11 by another producer"], None, True, (True, 5)),
    (["plain 5", "txn 9"], None, False, (False, 5)),  # no require_stable: the committed offset, no error
    (["plain 5", "txn 9"], False, True, (False, 5)),  # aborted: stable again at the committed offset
    (["plain 5", "txn 9"], True, True, (False, 9)),  # committed: the transaction's offset
])
def test_an_unstable_partition_is_answered_with_its_last_committed_offset(steps, marker_commit, require_stable,
                                                                         expected):
    async def go():
        c = await loaded()
        for step in steps:
            assert set((await STEPS[step](c)).values()) == {E.NONE}
        if marker_commit is not None:
            marker(c, marker_commit)
        assert _answer(c, require_stable) == expected
    run(go())


def test_an_unstable_partition_keeps_its_committed_offset_after_a_reload():
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        await c.commit(plain(5))
        await c.txn_commit(txn(9))  # open when the coordinator moves (bug 7: through several moves)
        other = await _reloaded(store, c)
        assert _answer(other) == (True, 5)
        marker(other, False)
        assert _answer(other) == (False, 5)
    run(go())
