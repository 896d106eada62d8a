"""The coordinator's rules on an in-memory OffsetsLog: joins, syncs, fencing, static members, commits, loading."""

from __future__ import annotations

import asyncio

import pytest

from pylog.coordinator.group.api import CommitRequest, CoordinatorConfig, JoinRequest
from pylog.coordinator.group.coordinator import GroupCoordinator
from pylog.coordinator.group.records import OffsetValue
from pylog.coordinator.group.state import GroupState
from pylog.coordinator.group.store import StoredRecord
from pylog.protocol.errors import ErrorCode as E


class MemoryLog:
    """An OffsetsLog that leads every partition at `epochs[p]` (default 0) and keeps records in lists."""

    def __init__(self, partitions: int = 3) -> None:
        self.partitions = partitions
        self.epochs: dict[int, int | None] = {}
        self.records: dict[int, list] = {p: [] for p in range(partitions)}
        self.fail: E = E.NONE

    def num_partitions(self) -> int:
        return self.partitions

    def leader_epoch(self, p: int) -> int | None:
        return self.epochs.get(p, 0)

    async def append(self, p: int, recs: list) -> E:
        return (await self.append_records(p, recs))[0]

    async def append_records(self, p: int, recs: list, producer=None) -> tuple[E, int]:
        if self.fail != E.NONE:
            return self.fail, -1
        base = len(self.records[p])  # one record per offset: a batch's base is its first record's index
        pid = producer[0] if producer else -1
        self.records[p].extend(StoredRecord(k, v, base, pid, producer is not None) for k, v in recs)
        return E.NONE, base

    def marker(self, p: int, producer_id: int, commit: bool) -> int:
        offset = len(self.records[p])
        self.records[p].append(StoredRecord(None, None, offset, producer_id, True, commit))
        return offset

    async def read(self, p: int):
        for r in list(self.records[p]):
            yield r


def cfg(**kw) -> CoordinatorConfig:
    return CoordinatorConfig(**{"initial_rebalance_delay_ms": 0, **kw})


def join_req(member_id: str = "", *, group: str = "g", instance: str | None = None, v4: bool = True,
             protocols=(("range", b"meta"),), session: int = 10000, rebalance: int = 2000) -> JoinRequest:
    return JoinRequest(group, member_id, instance, "consumer", list(protocols), session, rebalance, "client",
                       "/127.0.0.1", v4)


async def loaded(store: MemoryLog | None = None, **kw) -> GroupCoordinator:
    c = GroupCoordinator(store or MemoryLog(), cfg(**kw))
    for p in range(c.store.num_partitions()):
        c.check_partition(p)
    await asyncio.sleep(0.01)
    return c


async def join_one(c: GroupCoordinator, **kw):
    first = await c.join(join_req(**kw))
    assert first.error == E.MEMBER_ID_REQUIRED and first.member_id.startswith("client-")
    return await c.join(join_req(first.member_id, **kw))


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_member_id_required_then_join_sync_heartbeat():
    async def go():
        c = await loaded()
        r = await join_one(c)
        assert (r.error, r.generation, r.leader_id, r.protocol_name) == (E.NONE, 1, r.member_id, "range")
        assert r.members == [(r.member_id, None, b"meta")]
        s = await c.sync("g", 1, r.member_id, None, "consumer", "range", {r.member_id: b"asg"})
        assert (s.error, s.assignment) == (E.NONE, b"asg")
        assert c.groups["g"].state == GroupState.STABLE
        assert c.heartbeat("g", 1, r.member_id, None) == E.NONE
        assert c.heartbeat("g", 0, r.member_id, None) == E.ILLEGAL_GENERATION
        assert c.heartbeat("g", 1, "nobody", None) == E.UNKNOWN_MEMBER_ID
        assert len(c.store.records[c.partition_of("g")]) == 1  # the GroupMetadata record of generation 1
    run(go())


def test_old_join_versions_get_a_member_id_without_a_second_round_trip():
    async def go():
        c = await loaded()
        r = await c.join(join_req(v4=False))
        assert r.error == E.NONE and r.member_id
    run(go())


def test_second_member_rebalances_the_group_and_only_the_leader_gets_members():
    async def go():
        c = await loaded()
        a = await join_one(c)
        await c.sync("g", 1, a.member_id, None, None, None, {a.member_id: b"all"})
        second = await c.join(join_req())
        b_task = asyncio.ensure_future(c.join(join_req(second.member_id)))
        await asyncio.sleep(0.01)
        assert c.heartbeat("g", 1, a.member_id, None) == E.REBALANCE_IN_PROGRESS
        a2 = await c.join(join_req(a.member_id))
        b = await b_task
        assert a2.generation == b.generation == 2
        assert a2.leader_id == b.leader_id == a.member_id
        assert {m for m, _, _ in a2.members} == {a.member_id, b.member_id} and b.members == []
        follower = asyncio.ensure_future(c.sync("g", 2, b.member_id, None, None, None, {}))
        await asyncio.sleep(0.01)
        assert not follower.done()  # parked until the leader's assignment arrives
        leader = await c.sync("g", 2, a.member_id, None, None, None, {a.member_id: b"x", b.member_id: b"y"})
        assert leader.assignment == b"x" and (await follower).assignment == b"y"
    run(go())


def test_session_timeout_removes_a_silent_member():
    async def go():
        c = await loaded(min_session_timeout_ms=10)
        r = await join_one(c, session=50)
        await c.sync("g", 1, r.member_id, None, None, None, {})
        await asyncio.sleep(0.2)
        assert c.groups["g"].state == GroupState.EMPTY and not c.groups["g"].members
        assert c.heartbeat("g", 1, r.member_id, None) == E.UNKNOWN_MEMBER_ID
    run(go())


@pytest.mark.parametrize("session,err", [(5999, E.INVALID_SESSION_TIMEOUT), (1800001, E.INVALID_SESSION_TIMEOUT)])
def test_session_timeout_bounds(session, err):
    async def go():
        c = GroupCoordinator(MemoryLog(), CoordinatorConfig())
        await asyncio.sleep(0)
        c.check("g")
        await asyncio.sleep(0.01)
        return (await c.join(join_req(session=session))).error
    assert run(go()) == err


def test_group_max_size():
    async def go():
        c = await loaded(max_size=1)
        await join_one(c)
        return (await c.join(join_req())).error
    assert run(go()) == E.GROUP_MAX_SIZE_REACHED


def test_inconsistent_protocols_are_refused():
    async def go():
        c = await loaded()
        await join_one(c)
        return (await c.join(join_req(v4=False, protocols=(("roundrobin", b""),)))).error
    assert run(go()) == E.INCONSISTENT_GROUP_PROTOCOL


def test_static_member_restart_keeps_the_generation_and_fences_the_old_id():
    async def go():
        c = await loaded()
        r = await c.join(join_req(instance="i-1"))
        assert r.error == E.NONE and r.member_id.startswith("i-1-")  # no MEMBER_ID_REQUIRED for static members
        await c.sync("g", 1, r.member_id, "i-1", None, None, {r.member_id: b"mine"})
        again = await c.join(join_req(instance="i-1"))
        assert (again.error, again.generation) == (E.NONE, 1) and again.member_id != r.member_id
        assert c.groups["g"].state == GroupState.STABLE
        assert c.heartbeat("g", 1, r.member_id, "i-1") == E.FENCED_INSTANCE_ID
        assert (await c.join(join_req(r.member_id, instance="i-1"))).error == E.FENCED_INSTANCE_ID
        s = await c.sync("g", 1, again.member_id, "i-1", None, None, {})
        assert s.assignment == b"mine"
    run(go())


def test_leave_batch_with_static_and_unknown_members():
    async def go():
        c = await loaded()
        r = await c.join(join_req(instance="i-1"))
        err, per = c.leave("g", [("", "i-1"), ("ghost", None), ("", "i-2")])
        assert (err, per) == (E.NONE, [E.NONE, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID])
        assert c.groups["g"].state == GroupState.EMPTY
        assert c.leave("nogroup", [(r.member_id, None)]) == (E.UNKNOWN_MEMBER_ID, [])
    run(go())


def _commit(c, group="g", generation=-1, member="", offset=10):
    return c.commit(CommitRequest(group, generation, member, None, {("t", 0): OffsetValue(offset, -1, "", 1)}))


def test_commit_validation():
    async def go():
        c = await loaded()
        assert await _commit(c, group="simple") == {("t", 0): E.NONE}  # assign() consumers, admin tools
        assert await _commit(c, group="unknown", generation=3, member="m") == {("t", 0): E.ILLEGAL_GENERATION}
        r = await join_one(c)
        assert await _commit(c) == {("t", 0): E.UNKNOWN_MEMBER_ID}  # the group has members now
        assert await _commit(c, generation=1, member=r.member_id) == {("t", 0): E.REBALANCE_IN_PROGRESS}
        await c.sync("g", 1, r.member_id, None, None, None, {})
        assert await _commit(c, generation=0, member=r.member_id) == {("t", 0): E.ILLEGAL_GENERATION}
        assert await _commit(c, generation=1, member="other") == {("t", 0): E.UNKNOWN_MEMBER_ID}
        assert await _commit(c, generation=1, member=r.member_id, offset=42) == {("t", 0): E.NONE}
        assert c.fetch("g", [("t", 0), ("t", 1)]).offsets == {("t", 0): OffsetValue(42, -1, "", 1)}
        c.store.fail = E.NOT_ENOUGH_REPLICAS
        assert await _commit(c, generation=1, member=r.member_id, offset=50) == {("t", 0): E.COORDINATOR_NOT_AVAILABLE}
        assert c.fetch("g", None).offsets[("t", 0)].offset == 42  # a failed write is never visible
    run(go())


def test_new_leader_loads_groups_and_offsets_and_the_old_one_says_not_coordinator():
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        r = await join_one(c)
        await c.sync("g", 1, r.member_id, None, None, None, {r.member_id: b"a"})
        await _commit(c, generation=1, member=r.member_id, offset=7)
        p = c.partition_of("g")
        store.epochs[p] = None
        assert c.heartbeat("g", 1, r.member_id, None) == E.NOT_COORDINATOR
        assert "g" not in c.groups
        store.epochs[p] = 1
        other = GroupCoordinator(store, cfg())
        assert other.fetch("g", None).error == E.COORDINATOR_LOAD_IN_PROGRESS
        await asyncio.sleep(0.01)
        assert other.fetch("g", None).offsets == {("t", 0): OffsetValue(7, -1, "", 1)}
        g = other.groups["g"]
        assert (g.state, g.generation, g.leader_id) == (GroupState.STABLE, 1, r.member_id)
        assert other.heartbeat("g", 1, r.member_id, None) == E.NONE
    run(go())


def test_a_sync_parked_when_the_coordinator_moves_is_answered_not_coordinator():
    # Found by scripts/chaos --nemesis pause,partition --workload queue --faults 2 --seed 5: the coordinator's
    # broker paused past its session lost __consumer_offsets' leadership while a follower's SyncGroup waited;
    # unload() answered it with a bare error code and the handler failed on `.error` (connection closed).
    async def go():
        store = MemoryLog()
        c = await loaded(store)
        a = await join_one(c)
        await c.sync("g", 1, a.member_id, None, None, None, {a.member_id: b"all"})
        second = await c.join(join_req())
        b_task = asyncio.ensure_future(c.join(join_req(second.member_id)))
        await asyncio.sleep(0.01)
        await c.join(join_req(a.member_id))
        b = await b_task
        follower = asyncio.ensure_future(c.sync("g", b.generation, b.member_id, None, None, None, {}))
        await asyncio.sleep(0.01)
        assert not follower.done()
        p = c.partition_of("g")
        store.epochs[p] = None  # the broker lost the partition's leadership
        c.on_leadership_change(p)
        parked = await follower
        assert parked.error == E.NOT_COORDINATOR and parked.assignment == b""
    run(go())


def test_delete_groups_and_offsets():
    async def go():
        c = await loaded()
        await _commit(c)
        r = await join_one(c, group="busy")
        assert await c.delete_group("busy") == E.NON_EMPTY_GROUP
        assert await c.delete_group("missing") == E.GROUP_ID_NOT_FOUND
        assert await c.delete_offsets("g", [("t", 0)]) == (E.NONE, {("t", 0): E.NONE})
        assert c.fetch("g", None).offsets == {}
        assert await c.delete_group("g") == E.NONE
        assert c.describe("g").state == "Dead"
        assert r.error == E.NONE
    run(go())


def test_initial_rebalance_delay_gathers_members_into_one_generation():
    async def go():
        c = await loaded(initial_rebalance_delay_ms=100)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        a = asyncio.ensure_future(c.join(join_req(v4=False)))
        await asyncio.sleep(0.03)
        b = asyncio.ensure_future(c.join(join_req(v4=False)))
        ra, rb = await a, await b
        assert ra.generation == rb.generation == 1
        assert len(ra.members or rb.members) == 2
        assert loop.time() - t0 >= 0.1  # never completed before the delay, even with everybody in
    run(go())


def test_offsets_of_a_group_empty_longer_than_retention_expire():
    async def go():
        clock = [1_000_000]
        c = GroupCoordinator(MemoryLog(), cfg(retention_ms=1000), now_ms=lambda: clock[0])
        for p in range(3):
            c.check_partition(p)
        await asyncio.sleep(0.01)
        value = {("t", 0): OffsetValue(1, -1, "", clock[0])}
        assert await c.commit(CommitRequest("old", -1, "", None, value)) == {("t", 0): E.NONE}
        r = await join_one(c, group="active")
        await c.sync("active", 1, r.member_id, None, None, None, {})
        assert await c.commit(CommitRequest("active", 1, r.member_id, None, value)) == {("t", 0): E.NONE}
        clock[0] += 999
        assert await c.expire_offsets() == 0
        clock[0] += 2
        assert await c.expire_offsets() == 1  # "old" (simple group, last commit 1001 ms ago); "active" has members
        assert c.fetch("old", None).offsets == {} and c.fetch("active", None).offsets
        tombstones = [r for recs in c.store.records.values() for r in recs if r[1] is None]
        assert len(tombstones) == 1
    run(go())


def test_deleting_a_topic_removes_its_offsets_from_every_group_with_tombstones():
    async def go():
        c = await loaded()
        both = {("gone", 0): OffsetValue(5, -1, "", 1), ("gone", 1): OffsetValue(6, -1, "", 1),
                ("kept", 0): OffsetValue(7, -1, "", 1)}
        assert await c.commit(CommitRequest("mixed", -1, "", None, both)) == {tp: E.NONE for tp in both}
        only = {("gone", 0): OffsetValue(1, -1, "", 1)}
        assert await c.commit(CommitRequest("only", -1, "", None, only)) == {("gone", 0): E.NONE}
        r = await join_one(c, group="live")
        await c.sync("live", 1, r.member_id, None, None, None, {})
        assert await c.commit(CommitRequest("live", 1, r.member_id, None, only)) == {("gone", 0): E.NONE}
        before = {p: len(recs) for p, recs in c.store.records.items()}
        assert await c.partitions_deleted([("gone", 0), ("gone", 1), ("other", 0)]) == 5
        assert c.fetch("mixed", None).offsets == {("kept", 0): OffsetValue(7, -1, "", 1)}
        assert c.fetch("live", None).offsets == {} and c.describe("live").state == "Stable"
        assert c.describe("only").state == "Dead" and "only" not in c.groups  # Empty, generation 0, nothing left
        new = [rec for p, recs in c.store.records.items() for rec in recs[before[p]:]]
        assert len(new) == 5 and all(r.value is None for r in new)
        reloaded = GroupCoordinator(c.store, cfg())  # what a new coordinator reads back from the log
        for p in range(3):
            reloaded.check_partition(p)
        await asyncio.sleep(0.01)
        assert reloaded.fetch("mixed", None).offsets == {("kept", 0): OffsetValue(7, -1, "", 1)}
        assert reloaded.fetch("only", None).offsets == {} and reloaded.fetch("live", None).offsets == {}
    run(go())
