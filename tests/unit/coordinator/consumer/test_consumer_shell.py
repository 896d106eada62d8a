"""The KIP-848 shell inside the group coordinator, on an in-memory OffsetsLog: heartbeats store Kafka's records,
a new coordinator replays them, and commits and fetches check member epochs."""

from __future__ import annotations

import asyncio
import uuid

from pylog.coordinator.consumer.decisions import ConsumerConfig, HeartbeatRequest
from pylog.coordinator.group.api import CommitRequest, CoordinatorConfig, JoinRequest, TxnCommitRequest
from pylog.coordinator.group.coordinator import GroupCoordinator
from pylog.coordinator.group.records import OffsetValue
from pylog.protocol.errors import ErrorCode as E

from unit.coordinator.test_group_coordinator import MemoryLog

T = uuid.UUID(int=7)
TOPICS = {"t": (T, 3)}


async def coordinator(store: MemoryLog) -> GroupCoordinator:
    c = GroupCoordinator(store, CoordinatorConfig(initial_rebalance_delay_ms=0), consumer_config=ConsumerConfig(),
                         topics=lambda: TOPICS)
    for p in range(store.num_partitions()):
        c.check_partition(p)
    await asyncio.sleep(0.01)
    return c


def test_heartbeats_are_stored_and_a_new_coordinator_replays_the_group():
    async def go():
        store = MemoryLog()
        c = await coordinator(store)
        joined = await c.consumer_heartbeat(HeartbeatRequest("g", "m1", 0, rebalance_timeout_ms=1000,
                                                             subscribed_names=("t",)))
        assert (joined.error, joined.member_epoch, joined.assignment) == (E.NONE, 1, {T: frozenset({0, 1, 2})})
        err = await c.commit(CommitRequest("g", 1, "m1", None, {("t", 0): OffsetValue(5, -1, "")}))
        assert err == {("t", 0): E.NONE}
        stale = await c.commit(CommitRequest("g", 0, "m1", None, {("t", 0): OffsetValue(6, -1, "")}))
        assert stale == {("t", 0): E.STALE_MEMBER_EPOCH}
        assert (await c.commit(CommitRequest("g", 1, "zz", None, {("t", 0): OffsetValue(6, -1, "")}))) == {
            ("t", 0): E.UNKNOWN_MEMBER_ID}
        assert c.fetch("g", [("t", 0)], member=("m1", 0)).error == E.STALE_MEMBER_EPOCH
        assert c.fetch("g", [("t", 0)], member=("m1", 1)).offsets[("t", 0)].offset == 5
        classic = await c.join(JoinRequest("g", "", None, "consumer", [("range", b"")], 10000, 1000, "x", "/h", False))
        assert classic.error == E.INCONSISTENT_GROUP_PROTOCOL
        assert c.list_consumer_groups() == [("g", "Stable")]

        again = await coordinator(store)  # the partition's next leader
        group = again.consumer.groups["g"]
        assert (group.group_epoch, group.assignment_epoch, group.members["m1"].member_epoch) == (1, 1, 1)
        hb = await again.consumer_heartbeat(HeartbeatRequest("g", "m1", 1))
        assert (hb.error, hb.member_epoch) == (E.NONE, 1)
        assert again.fetch("g", [("t", 0)], member=("m1", 1)).offsets[("t", 0)].offset == 5
        left = await again.consumer_heartbeat(HeartbeatRequest("g", "m1", -1))
        assert (left.error, left.member_epoch) == (E.NONE, -1)
        assert await again.delete_group("g") == E.NONE
        assert "g" not in (await coordinator(store)).consumer.groups
    asyncio.run(asyncio.wait_for(go(), 10))


def test_offsets_of_unsubscribed_topics_expire_with_a_tombstone():
    async def go():
        store = MemoryLog()
        c = GroupCoordinator(store, CoordinatorConfig(initial_rebalance_delay_ms=0, retention_ms=0),
                             topics=lambda: {**TOPICS, "old": (uuid.UUID(int=8), 1)})
        for p in range(store.num_partitions()):
            c.check_partition(p)
        await asyncio.sleep(0.01)
        await c.consumer_heartbeat(HeartbeatRequest("g", "m1", 0, rebalance_timeout_ms=1000, subscribed_names=("t",)))
        offsets = {("t", 0): OffsetValue(5, -1, "", 1), ("old", 0): OffsetValue(9, -1, "", 1)}
        assert set((await c.commit(CommitRequest("g", 1, "m1", None, offsets))).values()) == {E.NONE}
        assert await c.expire_offsets() == 1
        assert set(c.fetch("g", None).offsets) == {("t", 0)}
        assert set((await coordinator(store)).fetch("g", None).offsets) == {("t", 0)}  # the tombstone replays
    asyncio.run(asyncio.wait_for(go(), 10))


def test_a_members_transactional_commit_and_a_non_members_commit_once_the_group_is_empty():
    async def go():
        store = MemoryLog()
        c = await coordinator(store)
        await c.consumer_heartbeat(HeartbeatRequest("g", "m1", 0, rebalance_timeout_ms=1000, subscribed_names=("t",)))
        tp = ("t", 0)

        def txn(offset: int, epoch: int, member: str) -> TxnCommitRequest:
            return TxnCommitRequest("g", 4000, 0, epoch, member, None, {tp: OffsetValue(offset, -1, "")})
        # send_offsets_to_transaction: TxnOffsetCommit v3 with the member's id and epoch as the generation
        assert await c.txn_commit(txn(7, 1, "m1")) == {tp: E.NONE}
        assert await c.txn_commit(txn(8, 0, "m1")) == {tp: E.ILLEGAL_GENERATION}
        assert await c.txn_commit(txn(8, 1, "zz")) == {tp: E.UNKNOWN_MEMBER_ID}
        assert "g" not in c.groups  # no classic group appeared beside the consumer group
        p = c.partition_of("g")
        c.on_txn_marker(p, 4000, True, store.marker(p, 4000, True))
        assert c.fetch("g", [tp], member=("m1", 1)).offsets[tp].offset == 7
        # librdkafka's assign() consumer: its own member id, epoch -1; refused while m1 consumes, taken after
        own = CommitRequest("g", -1, "lib-own-id", None, {tp: OffsetValue(9, -1, "")})
        assert await c.commit(own) == {tp: E.UNKNOWN_MEMBER_ID}
        await c.consumer_heartbeat(HeartbeatRequest("g", "m1", -1))
        assert await c.commit(own) == {tp: E.NONE}
        assert c.fetch("g", [tp]).offsets[tp].offset == 9
        # and on a group nobody ever joined (a simple group), as Kafka's handleCommitOffsets
        assert await c.commit(CommitRequest("new", -1, "lib-own-id", None, {tp: OffsetValue(3, -1, "")})) == {
            tp: E.NONE}
        assert c.fetch("new", [tp]).offsets[tp].offset == 3
    asyncio.run(asyncio.wait_for(go(), 10))
