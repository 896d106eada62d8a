"""Online migration between the protocols on an in-memory OffsetsLog: a classic group upgrades when a
consumer-protocol member joins, its classic members are served through JoinGroup/SyncGroup/Heartbeat with the
consumer group's assignment, the records replay on a new coordinator, and the group goes back to classic when the
last consumer-protocol member leaves, each step as the migration policy allows."""

from __future__ import annotations

import asyncio
import struct
import uuid

import pytest

from pylog.coordinator.consumer.decisions import ConsumerConfig, HeartbeatRequest
from pylog.coordinator.consumer.embedded import read_assignment, read_subscription, write_assignment
from pylog.coordinator.group.api import CommitRequest, CoordinatorConfig, JoinRequest
from pylog.coordinator.group.coordinator import GroupCoordinator
from pylog.coordinator.group.records import OffsetValue
from pylog.coordinator.group.state import GroupState
from pylog.protocol.errors import ErrorCode as E

from unit.coordinator.test_group_coordinator import MemoryLog

T = uuid.UUID(int=7)
TOPICS = {"t": (T, 4)}


def subscription(topics: list[str], owned: dict[str, list[int]] | None = None) -> bytes:
    """ConsumerProtocolSubscription v1 (topics, no user data, owned partitions)."""
    out = struct.pack(">hi", 1, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    out += struct.pack(">ii", -1, len(owned or {}))
    for t, ps in (owned or {}).items():
        out += struct.pack(">h", len(t)) + t.encode() + struct.pack(f">i{len(ps)}i", len(ps), *ps)
    return out


def join(mid: str = "", owned: dict | None = None, protocol_type: str = "consumer") -> JoinRequest:
    return JoinRequest("g", mid, None, protocol_type, [("range", subscription(["t"], owned))], 10000, 5000, "cl",
                       "/h", False)


async def coordinator(store: MemoryLog, policy: str = "bidirectional") -> GroupCoordinator:
    c = GroupCoordinator(store, CoordinatorConfig(initial_rebalance_delay_ms=0),
                         consumer_config=ConsumerConfig(migration_policy=policy), topics=lambda: TOPICS)
    for p in range(store.num_partitions()):
        c.check_partition(p)
    await asyncio.sleep(0.01)
    return c


async def classic_group(c: GroupCoordinator) -> str:
    """One classic member owning all four partitions (generation 1); its member id."""
    joined = await c.join(join())
    assert (joined.error, joined.generation, joined.leader_id) == (E.NONE, 1, joined.member_id)
    synced = await c.sync("g", 1, joined.member_id, None, "consumer", "range",
                          {joined.member_id: write_assignment({"t": [0, 1, 2, 3]}, 1)})
    assert synced.error == E.NONE
    return joined.member_id


def consumer_join(c: GroupCoordinator, mid: str = "new") -> asyncio.Future:
    return c.consumer_heartbeat(HeartbeatRequest("g", mid, 0, rebalance_timeout_ms=5000, subscribed_names=("t",)))


def test_embedded_protocol_round_trip():
    sub = read_subscription(subscription(["t", "u"], {"t": [1, 2]}))
    assert (sub.version, sub.topics, sub.owned) == (1, ("t", "u"), (("t", 1), ("t", 2)))
    assert read_assignment(write_assignment({"t": [2, 0], "u": [1]}, 3)) == {"t": [0, 2], "u": [1]}


def test_upgrade_classic_members_rejoin_sync_and_replay():
    async def go():
        store = MemoryLog()
        c = await coordinator(store)
        old = await classic_group(c)
        first = await consumer_join(c)
        assert first.error == E.NONE and first.assignment == {}  # all four still owned by the classic member
        assert "g" not in c.groups and c.list_groups(None)[1] == []
        assert c.describe("g").state == "Dead"  # not a classic group any more (DescribeGroups below v6)
        assert c.list_consumer_groups() == [("g", "Reconciling")]
        # the classic member is told to rejoin; its JoinGroup gives up two partitions and answers at once
        assert c.heartbeat("g", 1, old, None) == E.REBALANCE_IN_PROGRESS
        assert c.heartbeat("g", 0, old, None) == E.ILLEGAL_GENERATION
        rejoined = await c.join(join(old, owned={"t": [0, 1, 2, 3]}))
        assert (rejoined.error, rejoined.member_id, rejoined.leader_id, rejoined.members) == (E.NONE, old, "", [])
        synced = await c.sync("g", rejoined.generation, old, None, "consumer", "range", {})
        kept = read_assignment(synced.assignment)["t"]
        assert synced.error == E.NONE and len(kept) == 2
        # after revoking, it rejoins once more and reaches the group's epoch; the new member gets the rest
        assert c.heartbeat("g", rejoined.generation, old, None) == E.REBALANCE_IN_PROGRESS
        done = await c.join(join(old, owned={"t": kept}))
        assert done.generation == c.consumer.groups["g"].group_epoch
        assert c.heartbeat("g", done.generation, old, None) == E.NONE
        got = await c.consumer_heartbeat(HeartbeatRequest("g", "new", first.member_epoch, owned={}))
        assert sorted(got.assignment[T]) == sorted({0, 1, 2, 3} - set(kept))
        # a classic member commits with its member epoch as the generation
        tp = ("t", kept[0])
        assert await c.commit(CommitRequest("g", done.generation, old, None, {tp: OffsetValue(3, -1, "")})) == {
            tp: E.NONE}
        assert await c.commit(CommitRequest("g", 1, old, None, {tp: OffsetValue(4, -1, "")})) == {
            tp: E.ILLEGAL_GENERATION}
        # the consumer-protocol member is no classic member
        assert c.heartbeat("g", got.member_epoch, "new", None) == E.UNKNOWN_MEMBER_ID
        again = await coordinator(store)  # the records (with the classic member's metadata) replay
        member = again.consumer.groups["g"].members[old]
        assert member.classic is not None and member.classic.session_timeout_ms == 10000
        assert "g" not in again.groups or again.groups["g"].state == GroupState.EMPTY
    asyncio.run(asyncio.wait_for(go(), 10))


@pytest.mark.parametrize("policy, protocol_type, upgraded", [
    ("bidirectional", "consumer", True), ("upgrade", "consumer", True),
    ("downgrade", "consumer", False), ("disabled", "consumer", False), ("bidirectional", "connect", False),
])
def test_the_policy_and_the_protocol_type_decide_the_upgrade(policy, protocol_type, upgraded):
    async def go():
        c = await coordinator(MemoryLog(), policy)
        req = join(protocol_type=protocol_type)
        joined = await c.join(req)
        await c.sync("g", 1, joined.member_id, None, protocol_type, "range", {joined.member_id: b""})
        res = await consumer_join(c)
        assert res.error == (E.NONE if upgraded else E.GROUP_ID_NOT_FOUND)
        assert ("g" in c.consumer.groups) == upgraded
    asyncio.run(asyncio.wait_for(go(), 10))


@pytest.mark.parametrize("policy, downgraded", [("bidirectional", True), ("downgrade", True), ("upgrade", False)])
def test_the_last_consumer_protocol_member_leaving_downgrades_as_the_policy_allows(policy, downgraded):
    async def go():
        c = await coordinator(MemoryLog(), "bidirectional")
        old = await classic_group(c)
        first = await consumer_join(c)
        c.consumer.config = ConsumerConfig(migration_policy=policy)
        left = await c.consumer_heartbeat(HeartbeatRequest("g", first.member_id, -1))
        assert left.error == E.NONE
        assert ("g" in c.consumer.groups) != downgraded
        if downgraded:  # a classic group again, rebalancing so its member rejoins and leads
            group = c.groups["g"]
            assert (group.state, list(group.members), group.protocol_name) == (
                GroupState.PREPARING_REBALANCE, [old], "range")
            assert c.heartbeat("g", group.generation, old, None) == E.REBALANCE_IN_PROGRESS
            rejoined = await c.join(join(old))
            assert (rejoined.error, rejoined.leader_id) == (E.NONE, old)
        else:
            assert c.consumer.groups["g"].members.keys() == {old}
    asyncio.run(asyncio.wait_for(go(), 10))


def test_a_classic_join_gives_an_empty_consumer_group_way_and_leave_removes_classic_members():
    async def go():
        c = await coordinator(MemoryLog())
        first = await consumer_join(c)
        joined = await c.join(join())  # a classic member beside a consumer-protocol one
        assert joined.error == E.NONE and joined.generation > 0
        err, per = c.leave("g", [(joined.member_id, None), (first.member_id, None)])
        assert (err, per) == (E.NONE, [E.NONE, E.UNKNOWN_MEMBER_ID])  # LeaveGroup is for classic members only
        await c.consumer_heartbeat(HeartbeatRequest("g", first.member_id, -1))
        assert c.consumer.groups["g"].members == {}
        again = await c.join(join())  # an empty consumer group gives way to a classic group
        assert again.error == E.NONE and "g" not in c.consumer.groups and "g" in c.groups
    asyncio.run(asyncio.wait_for(go(), 10))


def _member(mid: str, epoch: int, state=None, assigned=None, protocols=(("range", b""),)):
    from pylog.coordinator.consumer.model import ClassicMeta, Member, MemberState
    return Member(mid, member_epoch=epoch, state=state or MemberState.STABLE, assigned=assigned or {},
                  classic=ClassicMeta(10000, tuple(protocols)) if protocols is not None else None)


@pytest.mark.parametrize("member_epoch, state, target, others, want", [
    (5, "STABLE", {0}, {}, E.NONE),  # reconciled at the group epoch
    (4, "STABLE", {0}, {}, E.REBALANCE_IN_PROGRESS),  # the group moved on
    (5, "UNREVOKED_PARTITIONS", {0}, {}, E.REBALANCE_IN_PROGRESS),  # must give partitions up and rejoin
    (5, "UNRELEASED_PARTITIONS", {0, 1}, {1}, E.NONE),  # still waiting: partition 1 is someone else's
    (5, "UNRELEASED_PARTITIONS", {0, 1}, set(), E.REBALANCE_IN_PROGRESS),  # partition 1 is free: rejoin for it
])
def test_a_classic_members_heartbeat_says_when_to_rejoin(member_epoch, state, target, others, want):
    from pylog.coordinator.consumer import classic
    from pylog.coordinator.consumer.model import ConsumerGroup, MemberState

    g = ConsumerGroup("g", group_epoch=5, assignment_epoch=5)
    g.members["m"] = _member("m", member_epoch, MemberState[state], {T: frozenset({0})})
    g.members["o"] = _member("o", 5, assigned={T: frozenset(others)} if others else {}, protocols=None)
    g.target["m"] = {T: frozenset(target)}
    assert classic.heartbeat(g, member_epoch, "m", None).reply == want
    assert classic.heartbeat(g, member_epoch, "o", None).reply == E.UNKNOWN_MEMBER_ID  # not a classic member


@pytest.mark.parametrize("protocols, policy, want", [
    ((("range", b""),), "bidirectional", True),
    ((("roundrobin", b""),), "bidirectional", False),  # no protocol all the classic members share
    ((("range", b""),), "upgrade", False),
])
def test_a_downgrade_needs_a_shared_protocol_and_the_policy(protocols, policy, want):
    from pylog.coordinator.consumer.decisions import remove
    from pylog.coordinator.consumer.model import ConsumerGroup

    g = ConsumerGroup("g", group_epoch=3, assignment_epoch=3)
    g.members = {"a": _member("a", 3), "b": _member("b", 3, protocols=protocols), "c": _member("c", 3, protocols=None)}
    out = remove(g, "c", cfg=ConsumerConfig(migration_policy=policy))
    assert (out.classic is not None) == want and (out.group is None) == want
    if want:
        assert (out.classic.generation, sorted(out.classic.members), out.classic.protocol_name) == (3, ["a", "b"],
                                                                                                  "range")


def test_a_static_classic_member_restarts_in_a_consumer_group_under_a_new_id():
    async def go():
        c = await coordinator(MemoryLog())
        await consumer_join(c)
        static = JoinRequest("g", "", "inst-1", "consumer", [("range", subscription(["t"]))], 10000, 5000, "cl",
                             "/h", True)  # v4+: a static member needs no MEMBER_ID_REQUIRED round trip
        first = await c.join(static)
        assert first.error == E.NONE
        impostor = await c.join(JoinRequest(**{**_fields(static), "member_id": "someone-else"}))
        assert impostor.error == E.FENCED_INSTANCE_ID
        restarted = await c.join(static)  # a restart: no member id, same group.instance.id
        members = c.consumer.groups["g"].members
        assert restarted.error == E.NONE and restarted.member_id != first.member_id
        assert first.member_id not in members and members[restarted.member_id].instance_id == "inst-1"
    asyncio.run(asyncio.wait_for(go(), 10))


def _fields(req: JoinRequest) -> dict:
    return {f: getattr(req, f) for f in JoinRequest.__dataclass_fields__}
