"""KIP-848's pure rules as tables: reconciliation (revoke before assign), the assignors, heartbeat, leave,
expiry, offset checks, and the records' round trip through replay."""

from __future__ import annotations

import uuid

import pytest

from pylog.common.errors import ErrorCode as E
from pylog.coordinator.consumer import records as rec
from pylog.coordinator.consumer.assignors import range_, uniform
from pylog.coordinator.consumer.decisions import (
    CancelTimer, ConsumerConfig, HeartbeatRequest, SetTimer, Write, check_commit, check_fetch, expired_offsets, heartbeat, leave,
    timer_fired,
)
from pylog.coordinator.consumer.model import ConsumerGroup, Member, MemberState as S
from pylog.coordinator.consumer.reconcile import next_state
from pylog.coordinator.consumer.records import ConsumerReplay

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)
TOPICS = {"t1": (T1, 4), "t2": (T2, 2)}
CFG = ConsumerConfig(session_timeout_ms=45000, heartbeat_interval_ms=5000)


def a(**parts) -> dict:
    """An assignment from t1=[..], t2=[..]."""
    ids = {"t1": T1, "t2": T2}
    return {ids[t]: frozenset(ps) for t, ps in parts.items() if ps}


# -- reconciliation ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("member, target, owners, owned, want_state, want_epoch, want_assigned, want_revoking", [
    # a new member gets its free target at once
    (Member("m", member_epoch=0), a(t1=[0, 1]), {}, None, S.STABLE, 5, a(t1=[0, 1]), {}),
    # a partition another member still owns waits
    (Member("m", member_epoch=0), a(t1=[0, 1]), {(T1, 1): "x"}, None, S.UNRELEASED_PARTITIONS, 5, a(t1=[0]), {}),
    # losing a partition: revoke first, keep the epoch
    (Member("m", member_epoch=4, assigned=a(t1=[0, 1, 2])), a(t1=[0, 3]), {}, None,
     S.UNREVOKED_PARTITIONS, 4, a(t1=[0]), a(t1=[1, 2])),
    # at the target epoch and stable: nothing to do
    (Member("m", member_epoch=5, assigned=a(t1=[0])), a(t1=[0]), {}, a(t1=[0]), S.STABLE, 5, a(t1=[0]), {}),
])
def test_reconciliation(member, target, owners, owned, want_state, want_epoch, want_assigned, want_revoking):
    out = next_state(member, 5, target, owners, owned)
    assert (out.state, out.member_epoch, out.assigned, out.pending_revocation) == (
        want_state, want_epoch, want_assigned, want_revoking)


def test_revoking_member_moves_on_only_once_its_heartbeat_no_longer_lists_the_partitions():
    revoking = Member("m", member_epoch=4, state=S.UNREVOKED_PARTITIONS, assigned=a(t1=[0]),
                      pending_revocation=a(t1=[1]))
    assert next_state(revoking, 5, a(t1=[0, 3]), {}, a(t1=[0, 1])) is revoking
    assert next_state(revoking, 5, a(t1=[0, 3]), {}, None) is revoking
    done = next_state(revoking, 5, a(t1=[0, 3]), {}, a(t1=[0]))
    assert (done.state, done.member_epoch, done.previous_member_epoch, done.assigned) == (S.STABLE, 5, 4, a(t1=[0, 3]))


# -- assignors -----------------------------------------------------------------------------------------------

def _sizes(out):
    return sorted(sum(len(ps) for ps in x.values()) for x in out.values())


def test_uniform_is_balanced_and_moves_only_what_a_join_needs():
    t = uuid.UUID(int=9)
    subs = {f"m{i}": frozenset([t]) for i in range(8)}
    first = uniform(subs, {t: 64}, {})
    assert _sizes(first) == [8] * 8
    subs["m8"] = frozenset([t])
    second = uniform(subs, {t: 64}, first)
    assert _sizes(second) == [7] * 8 + [8]
    moved = sum(len(second[m].get(t, frozenset()) - first.get(m, {}).get(t, frozenset())) for m in second)
    assert moved == 7  # the newcomer's share, nothing more
    every = sorted(p for x in second.values() for p in x[t])
    assert every == list(range(64))


def test_uniform_gives_a_topic_only_to_its_subscribers():
    out = uniform({"a": frozenset([T1]), "b": frozenset([T1, T2])}, {T1: 4, T2: 2}, {})
    assert T2 not in out["a"] and out["b"][T2] == frozenset({0, 1})
    assert sorted(out["a"][T1] | out["b"].get(T1, frozenset())) == [0, 1, 2, 3]


def test_range_gives_contiguous_ranges_per_topic_in_member_order():
    out = range_({"b": frozenset([T1, T2]), "a": frozenset([T1, T2])}, {T1: 5, T2: 2}, {})
    assert out["a"] == {T1: frozenset({0, 1, 2}), T2: frozenset({0})}
    assert out["b"] == {T1: frozenset({3, 4}), T2: frozenset({1})}


# -- heartbeat rules -----------------------------------------------------------------------------------------

def join(group, mid, topics=("t1",), epoch=0, **kw):
    req = HeartbeatRequest("g", mid, epoch, rebalance_timeout_ms=30000, subscribed_names=tuple(topics), **kw)
    return heartbeat(group, req, TOPICS, CFG, "generated")


def test_first_member_joins_gets_everything_and_the_records_say_so():
    out = join(None, "m1")
    assert out.reply.error == E.NONE and out.reply.member_epoch == 1 and out.reply.heartbeat_interval_ms == 5000
    assert out.reply.assignment == a(t1=[0, 1, 2, 3])
    writes = [fx for fx in out.effects if isinstance(fx, Write)]
    assert len(writes) == 1
    kinds = [rec.key_version(k) for k, _ in writes[0].records]
    assert kinds == [rec.MEMBER_METADATA, rec.PARTITION_METADATA, rec.GROUP_METADATA, rec.TARGET_MEMBER,
                     rec.TARGET_METADATA, rec.CURRENT_ASSIGNMENT]
    assert SetTimer(("session", "g", "m1"), 45000) in out.effects


def test_second_member_joins_the_first_revokes_before_the_second_gets_anything():
    g = join(None, "m1").group
    two = join(g, "m2")
    assert two.reply.member_epoch == 2 and two.reply.assignment == {}  # m1 still owns them all
    g = two.group
    assert g.members["m2"].state == S.UNRELEASED_PARTITIONS
    hb = heartbeat(g, HeartbeatRequest("g", "m1", 1, owned=a(t1=[0, 1, 2, 3])), TOPICS, CFG, "x")
    assert hb.reply.member_epoch == 1 and hb.group.members["m1"].state == S.UNREVOKED_PARTITIONS
    kept = hb.reply.assignment
    assert len(kept[T1]) == 2
    assert SetTimer(("revoke", "g", "m1"), 30000) in hb.effects
    hb = heartbeat(hb.group, HeartbeatRequest("g", "m1", 1, owned=kept), TOPICS, CFG, "x")
    assert hb.reply.member_epoch == 2 and CancelTimer(("revoke", "g", "m1")) in hb.effects
    hb2 = heartbeat(hb.group, HeartbeatRequest("g", "m2", 2, owned={}), TOPICS, CFG, "x")
    assert hb2.reply.assignment[T1] == frozenset({0, 1, 2, 3}) - kept[T1]
    assert hb2.group.state() == "Stable"


@pytest.mark.parametrize("epoch, owned, error", [
    (7, None, E.FENCED_MEMBER_EPOCH),  # ahead of the coordinator
    (1, None, E.NONE),  # its own epoch
])
def test_member_epoch_checks(epoch, owned, error):
    g = join(None, "m1").group
    out = heartbeat(g, HeartbeatRequest("g", "m1", epoch, owned=owned), TOPICS, CFG, "x")
    assert out.reply.error == error


def test_unknown_member_and_invalid_requests():
    g = join(None, "m1").group
    assert heartbeat(g, HeartbeatRequest("g", "nobody", 3), TOPICS, CFG, "x").reply.error == E.UNKNOWN_MEMBER_ID
    assert heartbeat(None, HeartbeatRequest("g", "m", 3), TOPICS, CFG, "x").reply.error == E.UNKNOWN_MEMBER_ID
    assert heartbeat(None, HeartbeatRequest("g", "m", 0, subscribed_names=("t1",)), TOPICS, CFG,
                     "x").reply.error == E.INVALID_REQUEST  # no rebalance timeout on join
    assert join(None, "m", server_assignor="sticky").reply.error == E.UNSUPPORTED_ASSIGNOR
    assert heartbeat(None, HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=1, subscribed_regex="(x"),
                     TOPICS, CFG, "x").reply.error == E.INVALID_REGULAR_EXPRESSION


def test_a_member_without_id_gets_one():
    assert join(None, "").reply.member_id == "generated"


def test_leave_frees_the_partitions_and_bumps_the_epoch():
    g = join(join(None, "m1").group, "m2").group
    out = leave(g, "m2", None, -1)
    assert out.reply.member_epoch == -1 and "m2" not in out.group.members
    assert out.group.group_epoch == g.group_epoch + 1
    assert [rec.key_version(k) for k, v in out.effects[0].records if v is None] == [
        rec.CURRENT_ASSIGNMENT, rec.TARGET_MEMBER, rec.MEMBER_METADATA]
    hb = heartbeat(out.group, HeartbeatRequest("g", "m1", 1, owned=a(t1=[0, 1, 2, 3])), TOPICS, CFG, "x")
    assert hb.reply.member_epoch == out.group.group_epoch and hb.group.members["m1"].assigned == a(t1=[0, 1, 2, 3])


def test_static_member_leaves_for_now_and_its_successor_takes_its_partitions_without_a_rebalance():
    g = join(None, "m1", instance_id="i1").group
    g = join(g, "m2", instance_id="i2").group
    assert join(g, "m3", instance_id="i1").reply.error == E.UNRELEASED_INSTANCE_ID
    g = heartbeat(g, HeartbeatRequest("g", "m1", 1, owned=a(t1=[0, 1, 2, 3])), TOPICS, CFG, "x").group
    g = heartbeat(g, HeartbeatRequest("g", "m1", 1, owned=g.members["m1"].assigned), TOPICS, CFG, "x").group
    held = g.members["m1"].assigned
    gone = leave(g, "m1", "i1", -2)
    assert gone.group.members["m1"].member_epoch == -2 and gone.group.group_epoch == g.group_epoch
    back = join(gone.group, "m9", instance_id="i1")
    assert back.reply.error == E.NONE and back.reply.assignment == held
    assert back.group.group_epoch == g.group_epoch and "m1" not in back.group.members


def test_session_expiry_removes_the_member():
    g = join(join(None, "m1").group, "m2").group
    out = timer_fired(g, ("session", "g", "m2"))
    assert "m2" not in out.group.members and out.group.group_epoch == g.group_epoch + 1
    assert timer_fired(out.group, ("session", "g", "m2")) is None


def test_regex_subscription_follows_topics_created_later():
    g = heartbeat(None, HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=1, subscribed_names=(),
                                         subscribed_regex="t.*"), {"t1": (T1, 4), "__consumer_offsets": (T2, 3)},
                  CFG, "x")
    assert g.reply.assignment == a(t1=[0, 1, 2, 3])
    later = heartbeat(g.group, HeartbeatRequest("g", "m", 1), TOPICS, CFG, "x")
    assert later.reply.member_epoch == 2 and later.reply.assignment == a(t1=[0, 1, 2, 3], t2=[0, 1])


@pytest.mark.parametrize("members, member, epoch, instance, txn, error", [
    # OffsetCommit v9 (Kafka 4.0's ConsumerGroup.validateOffsetCommit)
    (["m1"], "m1", 1, None, False, E.NONE),
    (["m1"], "m1", 0, None, False, E.STALE_MEMBER_EPOCH),
    (["m1"], "zz", 1, None, False, E.UNKNOWN_MEMBER_ID),
    (["m1"], "", -1, None, False, E.UNKNOWN_MEMBER_ID),  # not a member while others consume
    (["m1"], "lib-own-id", -1, None, False, E.UNKNOWN_MEMBER_ID),
    ([], "", -1, None, False, E.NONE),  # an admin tool on an empty group
    ([], "lib-own-id", -1, None, False, E.NONE),  # librdkafka's assign() consumer: its own id, epoch -1
    ([], "lib-own-id", 3, None, False, E.UNKNOWN_MEMBER_ID),
    (None, "lib-own-id", -1, None, False, E.NONE),
    (None, "m1", 1, None, False, E.UNKNOWN_MEMBER_ID),
    # TxnOffsetCommit: the generation field carries the member epoch; a stale one is ILLEGAL_GENERATION
    (["m1"], "m1", 1, None, True, E.NONE),
    (["m1"], "m1", 0, None, True, E.ILLEGAL_GENERATION),
    (["m1"], "zz", 1, None, True, E.UNKNOWN_MEMBER_ID),
    (["m1"], "", -1, None, True, E.NONE),  # v0-2 carry no member: nothing to fence
    (["m1"], "", -1, "i", True, E.UNKNOWN_MEMBER_ID),
    (["m1"], "zz", -1, None, True, E.UNKNOWN_MEMBER_ID),
    ([], "zz", -1, None, True, E.NONE),
])
def test_offset_commit_member_checks(members, member, epoch, instance, txn, error):
    g = None if members is None else _with_members(members)
    assert check_commit(g, member, epoch, instance, txn) == error


@pytest.mark.parametrize("members, member, epoch, error", [
    (["m1"], "m1", 1, E.NONE), (["m1"], "m1", 0, E.STALE_MEMBER_EPOCH), (["m1"], "zz", 1, E.UNKNOWN_MEMBER_ID),
    (["m1"], "", -1, E.UNKNOWN_MEMBER_ID), ([], "", -1, E.NONE), (None, "", -1, E.NONE),
])
def test_offset_fetch_member_checks(members, member, epoch, error):
    g = None if members is None else _with_members(members)
    assert check_fetch(g, member, epoch) == error


def _with_members(mids: list[str]) -> ConsumerGroup:
    """A group whose members are at epoch 1 (none: a group every member left)."""
    return ConsumerGroup("g", group_epoch=2, members={mid: Member(mid, member_epoch=1) for mid in mids})


def test_records_replay_to_the_same_group():
    g = join(None, "m1", instance_id="i").group
    g = join(g, "m2", topics=("t1", "t2")).group
    records = [r for fx in join(None, "m1", instance_id="i").effects if isinstance(fx, Write) for r in fx.records]
    records += [r for fx in join(join(None, "m1", instance_id="i").group, "m2", topics=("t1", "t2")).effects
                if isinstance(fx, Write) for r in fx.records]
    replay = ConsumerReplay()
    for k, v in records:
        replay.apply(k, v)
    back = replay.groups["g"]
    assert (back.group_epoch, back.assignment_epoch, back.target, back.subscribed_topics) == (
        g.group_epoch, g.assignment_epoch, g.target, g.subscribed_topics)
    for mid, m in g.members.items():
        r = back.members[mid]
        assert (r.instance_id, r.subscribed_names, r.member_epoch, r.state, r.assigned, r.pending_revocation) == (
            m.instance_id, m.subscribed_names, m.member_epoch, m.state, m.assigned, m.pending_revocation)
    for k, v in rec.member_tombstones("g", "m2"):
        replay.apply(k, v)
    assert "m2" not in replay.groups["g"].members


def test_group_states():
    assert ConsumerGroup("g").state() == "Empty"
    g = join(join(None, "m1").group, "m2").group
    assert g.state() == "Reconciling"


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced():
    g = join(join(None, "m1").group, "m2").group
    g = heartbeat(g, HeartbeatRequest("g", "m1", 1, owned=a(t1=[0, 1, 2, 3])), TOPICS, CFG, "x").group
    assert g.members["m1"].state == S.UNREVOKED_PARTITIONS
    out = timer_fired(g, ("revoke", "g", "m1"))
    assert "m1" not in out.group.members and out.group.group_epoch == g.group_epoch + 1
    settled = heartbeat(g, HeartbeatRequest("g", "m1", 1, owned=g.members["m1"].assigned), TOPICS, CFG, "x").group
    assert timer_fired(settled, ("revoke", "g", "m1")) is None  # revoked in time: the timer no longer applies


def test_offsets_of_topics_nobody_subscribes_to_expire_after_the_retention():
    g = join(None, "m1").group  # subscribes to t1
    committed = {("t1", 0): 1000, ("t2", 0): 1000, ("t2", 1): 5000, ("gone", 0): -1}
    assert expired_offsets(g, committed, now=11000, retention_ms=10000) == [("t2", 0)]
    assert expired_offsets(g, committed, now=20000, retention_ms=10000) == [("t2", 0), ("t2", 1)]
