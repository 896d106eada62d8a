"""The group coordinator's pure decisions, as tables: a group, a request, the answer and the effects."""

from __future__ import annotations

import pytest

from pylog.coordinator.group import decisions as d
from pylog.coordinator.group.api import CommitRequest, CoordinatorConfig, JoinRequest, JoinResult, SyncResult
from pylog.coordinator.group.effects import (
    CancelTimer, ParkJoin, ParkSync, Persist, ReplyJoin, ReplySync, SetTimer,
)
from pylog.coordinator.group.group import Group, Member
from pylog.coordinator.group.records import OffsetValue
from pylog.coordinator.group.state import GroupState as S
from pylog.protocol.errors import ErrorCode as E

CFG = CoordinatorConfig(initial_rebalance_delay_ms=3000)
NOW = 1000
TP = ("t", 0)


def member(mid: str, *, instance: str | None = None, joining: bool = False, syncing: bool = False,
           protocols=(("range", b"m"),)) -> Member:
    return Member(mid, instance, "client", "/h", 2000, 10000, "consumer", list(protocols), joining=joining,
                  syncing=syncing)


def group(state: S = S.STABLE, *members: Member, generation: int = 1, leader: str | None = None) -> Group:
    g = Group("g", state=state, generation=generation, protocol_type="consumer", protocol_name="range")
    for m in members:
        g.members[m.member_id] = m
        if m.instance_id:
            g.static_members[m.instance_id] = m.member_id
    g.leader_id = leader if leader is not None else next(iter(g.members), None)
    return g


def join_req(member_id: str = "", *, instance: str | None = None, v4: bool = True, session: int = 10000,
             protocols=(("range", b"m"),)) -> JoinRequest:
    return JoinRequest("g", member_id, instance, "consumer", list(protocols), session, 2000, "client", "/h", v4)


def kinds(effects) -> list[str]:
    return [type(e).__name__ for e in effects if type(e).__name__ != "Note"]


# -- JoinGroup ----------------------------------------------------------------------------------

@pytest.mark.parametrize("req, existing, error", [
    (join_req(session=10), None, E.INVALID_SESSION_TIMEOUT),
    (join_req("m-1"), None, E.UNKNOWN_MEMBER_ID),  # a member id for a group we don't know
    (join_req(), "dead", E.COORDINATOR_NOT_AVAILABLE),
    (join_req("m-1"), "dead", E.UNKNOWN_MEMBER_ID),
    (join_req(protocols=(("other", b""),)), "stable", E.INCONSISTENT_GROUP_PROTOCOL),
    (join_req("m-9"), "stable", E.UNKNOWN_MEMBER_ID),
    (join_req("m-1", instance="i-2"), "static", E.FENCED_INSTANCE_ID),  # i-2 belongs to m-2
    (join_req(), "new-id", E.MEMBER_ID_REQUIRED),  # KIP-394: v4 gets a member id first
])
def test_join_refusals(req, existing, error):
    g = {None: None, "dead": group(S.DEAD), "stable": group(S.STABLE, member("m-1")),
         "static": group(S.STABLE, member("m-1"), member("m-2", instance="i-2")),
         "new-id": group(S.EMPTY)}[existing]
    out = d.join(g, req, "client-new", CFG, NOW)
    assert isinstance(out.reply, JoinResult) and out.reply.error == error
    assert not any(isinstance(e, ParkJoin) for e in out.effects)
    if error == E.MEMBER_ID_REQUIRED:
        assert out.reply.member_id == "client-new" and g.pending_members == {"client-new"}
        assert out.effects == [SetTimer(("pending", "g", "client-new"), 10000)]


def test_first_join_creates_the_group_parks_and_starts_the_initial_delay():
    out = d.join(None, join_req(v4=False), "client-1", CFG, NOW)
    g = out.created
    assert out.reply is None and g is not None and g.state == S.PREPARING_REBALANCE
    assert kinds(out.effects) == ["ParkJoin", "SetTimer", "SetTimer"]
    assert out.effects[2] == SetTimer(("join", "g"), 2000)  # min(initial delay, rebalance timeout)
    assert g.initial_delay == (2000, 0) and g.members["client-1"].joining


def test_the_initial_delay_ends_the_join_phase_and_answers_the_leader_with_the_members():
    out = d.join(None, join_req(v4=False), "client-1", CFG, NOW)
    g = out.created
    fired = d.timer_fired(g, ("join", "g"), CFG, NOW + 2000)
    assert g.state == S.COMPLETING_REBALANCE and g.generation == 1 and g.initial_delay is None
    (reply,) = [e for e in fired.effects if isinstance(e, ReplyJoin)]
    assert reply.member_id == "client-1" and reply.result.leader_id == "client-1"
    assert reply.result.members == [("client-1", None, b"m")] and not g.members["client-1"].joining


def test_a_join_during_the_initial_delay_extends_it_by_a_step():
    cfg = CoordinatorConfig(initial_rebalance_delay_ms=500)
    g = d.join(None, join_req(v4=False), "a", cfg, NOW).created
    d.join(g, join_req(v4=False), "b", cfg, NOW)  # everyone is in, but the delay is never cut short
    assert g.state == S.PREPARING_REBALANCE and g.initial_delay == (500, 1500)
    step = d.timer_fired(g, ("join", "g"), cfg, NOW + 500)
    assert step.effects == [SetTimer(("join", "g"), 500)] and g.initial_delay == (500, 1000)
    d.timer_fired(g, ("join", "g"), cfg, NOW + 1000)  # nobody new: the phase ends
    assert g.state == S.COMPLETING_REBALANCE and set(g.members) == {"a", "b"}


def test_rejoin_with_the_same_metadata_in_stable_answers_the_current_generation():
    g = group(S.STABLE, member("m-1"), member("m-2"))
    out = d.join(g, join_req("m-2"), "unused", CFG, NOW)
    assert out.reply.error == E.NONE and out.reply.generation == 1 and out.reply.members == []
    assert out.effects == [SetTimer(("hb", "g", "m-2"), 10000)] and g.state == S.STABLE


def test_a_rejoin_with_new_metadata_rebalances_and_fails_parked_syncs():
    g = group(S.COMPLETING_REBALANCE, member("m-1", syncing=True), member("m-2"), generation=3)
    out = d.join(g, join_req("m-2", protocols=(("range", b"new"),)), "unused", CFG, NOW)
    assert out.reply is None and g.state == S.PREPARING_REBALANCE
    assert ReplySync("m-1", SyncResult(E.REBALANCE_IN_PROGRESS)) in out.effects
    assert ParkJoin("m-2") in out.effects and SetTimer(("join", "g"), 2000) in out.effects


def test_the_last_member_to_rejoin_completes_the_join_phase_and_drops_who_did_not():
    g = group(S.PREPARING_REBALANCE, member("m-1", joining=True), member("m-2"), generation=2)
    out = d.timer_fired(g, ("join", "g"), CFG, NOW)  # the rebalance timeout
    assert set(g.members) == {"m-1"} and g.generation == 3 and g.state == S.COMPLETING_REBALANCE
    assert CancelTimer(("hb", "g", "m-2")) in out.effects
    assert [e.member_id for e in out.effects if isinstance(e, ReplyJoin)] == ["m-1"]


def test_a_static_member_restart_keeps_its_assignment_and_fences_the_old_id():
    old = member("old", instance="i-1", joining=True)
    old.assignment = b"a"
    g = group(S.STABLE, old, member("m-2"))
    out = d.join(g, join_req(instance="i-1"), "new", CFG, NOW)
    assert out.reply.error == E.NONE and out.reply.member_id == "new" and g.state == S.STABLE
    assert g.static_members == {"i-1": "new"} and g.members["new"].assignment == b"a"
    assert out.effects[0] == ReplyJoin("old", E.FENCED_INSTANCE_ID)
    assert CancelTimer(("hb", "g", "old")) in out.effects


# -- SyncGroup ----------------------------------------------------------------------------------

@pytest.mark.parametrize("state, gen, mid, error", [
    (S.STABLE, 1, "m-9", E.UNKNOWN_MEMBER_ID),
    (S.STABLE, 0, "m-1", E.ILLEGAL_GENERATION),
    (S.PREPARING_REBALANCE, 1, "m-1", E.REBALANCE_IN_PROGRESS),
    (S.DEAD, 1, "m-1", E.UNKNOWN_MEMBER_ID),
    (S.STABLE, 1, "m-1", E.NONE),
])
def test_sync_table(state, gen, mid, error):
    g = group(state, member("m-1"))
    out = d.sync(g, gen, mid, None, "consumer", "range", {})
    assert out.reply.error == error


def test_the_leaders_sync_stores_the_assignment_then_everyone_gets_theirs():
    g = group(S.COMPLETING_REBALANCE, member("m-1"), member("m-2"), generation=4)
    follower = d.sync(g, 4, "m-2", None, None, None, {})
    assert follower.reply is None and ParkSync("m-2") in follower.effects
    leader = d.sync(g, 4, "m-1", None, None, None, {"m-1": b"a1", "m-2": b"a2"})
    assert leader.reply is None and leader.effects[-1] == Persist(4, assignment=True)
    assert g.state == S.COMPLETING_REBALANCE  # nobody is answered before the write
    stored = d.assignment_stored(g, 4, E.NONE, CFG, NOW)
    assert g.state == S.STABLE
    assert {e.member_id: e.result.assignment for e in stored.effects} == {"m-1": b"a1", "m-2": b"a2"}


def test_a_failed_assignment_write_fails_the_syncs_and_rebalances():
    g = group(S.COMPLETING_REBALANCE, member("m-1", syncing=True), generation=4)
    out = d.assignment_stored(g, 4, E.COORDINATOR_NOT_AVAILABLE, CFG, NOW)
    assert out.effects[0] == ReplySync("m-1", SyncResult(E.COORDINATOR_NOT_AVAILABLE))
    assert g.state == S.PREPARING_REBALANCE
    assert d.assignment_stored(g, 3, E.NONE, CFG, NOW).effects == []  # an older generation's write: ignored


# -- Heartbeat, LeaveGroup, expiry ----------------------------------------------------------------

@pytest.mark.parametrize("state, gen, mid, instance, error, renews", [
    (S.STABLE, 1, "m-1", None, E.NONE, True),
    (S.PREPARING_REBALANCE, 1, "m-1", None, E.REBALANCE_IN_PROGRESS, True),
    (S.STABLE, 7, "m-1", None, E.ILLEGAL_GENERATION, True),  # still alive: its session is renewed
    (S.STABLE, 1, "m-9", None, E.UNKNOWN_MEMBER_ID, False),
    (S.STABLE, 1, "m-1", "i-other", E.NONE, True),
    (S.EMPTY, 1, "m-1", None, E.UNKNOWN_MEMBER_ID, False),
])
def test_heartbeat_table(state, gen, mid, instance, error, renews):
    g = group(state, member("m-1"))
    out = d.heartbeat(g, gen, mid, instance)
    assert out.reply == error
    assert (out.effects == [SetTimer(("hb", "g", "m-1"), 10000)]) == renews


def test_heartbeat_of_a_fenced_static_member():
    g = group(S.STABLE, member("m-1", instance="i-1"), member("m-2"))
    assert d.heartbeat(g, 1, "m-2", "i-1").reply == E.FENCED_INSTANCE_ID


def test_leave_table_and_the_rebalance_it_starts():
    g = group(S.STABLE, member("m-1"), member("m-2", instance="i-2"), member("m-3"))
    g.pending_members.add("p-1")
    out = d.leave(g, [("m-1", None), ("", "i-2"), ("x", "i-2"), ("m-9", None), ("p-1", None), ("", "i-9")], CFG, NOW)
    assert out.reply == (E.NONE, [E.NONE, E.NONE, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID, E.NONE,
                                  E.UNKNOWN_MEMBER_ID])
    assert set(g.members) == {"m-3"} and not g.pending_members and g.state == S.PREPARING_REBALANCE
    assert CancelTimer(("pending", "g", "p-1")) in out.effects
    assert d.leave(None, [("m-1", None)], CFG, NOW).reply == (E.UNKNOWN_MEMBER_ID, [])


def test_leave_of_a_wrong_member_id_for_a_static_instance_is_fenced():
    g = group(S.STABLE, member("m-1", instance="i-1"))
    assert d.leave(g, [("other", "i-1")], CFG, NOW).reply == (E.NONE, [E.FENCED_INSTANCE_ID])


@pytest.mark.parametrize("joining, syncing, removed", [(False, False, True), (True, False, False),
                                                       (False, True, False)])
def test_session_expiry_spares_a_member_with_a_parked_request(joining, syncing, removed):
    g = group(S.STABLE, member("m-1", joining=joining, syncing=syncing), member("m-2"))
    out = d.timer_fired(g, ("hb", "g", "m-1"), CFG, NOW)
    assert ("m-1" not in g.members) == removed
    assert (g.state == S.PREPARING_REBALANCE) == removed
    if not removed:
        assert out.effects == [SetTimer(("hb", "g", "m-1"), 10000)]


def test_an_expired_member_id_request_is_dropped():
    g = group(S.EMPTY)
    g.pending_members.add("p-1")
    d.timer_fired(g, ("pending", "g", "p-1"), CFG, NOW)
    assert not g.pending_members


# -- offset commits -----------------------------------------------------------------------------

def commit_req(gen: int = -1, mid: str = "", instance: str | None = None, metadata: str = "") -> CommitRequest:
    return CommitRequest("g", gen, mid, instance, {TP: OffsetValue(5, -1, metadata, NOW)})


@pytest.mark.parametrize("state, req, error", [
    (None, commit_req(), E.NONE),  # a simple group (assign() consumers, admin tools) is created
    (None, commit_req(gen=1), E.ILLEGAL_GENERATION),
    (None, commit_req(mid="m-1"), E.NONE),  # generation -1: a simple group whatever the member id (librdkafka)
    (S.EMPTY, commit_req(), E.NONE),
    (S.DEAD, commit_req(), E.COORDINATOR_NOT_AVAILABLE),
    (S.STABLE, commit_req(), E.UNKNOWN_MEMBER_ID),  # no member id on an active group
    (S.STABLE, commit_req(1, "m-1"), E.NONE),
    (S.STABLE, commit_req(0, "m-1"), E.ILLEGAL_GENERATION),
    (S.STABLE, commit_req(1, "m-1", "i-x"), E.NONE),
    (S.COMPLETING_REBALANCE, commit_req(1, "m-1"), E.REBALANCE_IN_PROGRESS),
    (S.PREPARING_REBALANCE, commit_req(1, "m-1"), E.NONE),
])
def test_commit_table(state, req, error):
    g = None if state is None else group(state, member("m-1"))
    out = d.commit(g, req, CFG, NOW)
    assert out.reply == (error, {})
    assert (out.created is not None) == (state is None and error == E.NONE)


def test_commit_refuses_oversized_metadata_per_partition():
    out = d.commit(None, commit_req(metadata="x" * 5000), CFG, NOW)
    assert out.reply == (E.NONE, {TP: E.OFFSET_METADATA_TOO_LARGE})


def test_a_members_commit_renews_its_session():
    g = group(S.STABLE, member("m-1"))
    assert d.commit(g, commit_req(1, "m-1"), CFG, NOW).effects == [SetTimer(("hb", "g", "m-1"), 10000)]


@pytest.mark.parametrize("gen, mid, error", [(-1, "", E.NONE), (1, "m-1", E.NONE), (0, "m-1", E.ILLEGAL_GENERATION),
                                             (1, "zombie", E.UNKNOWN_MEMBER_ID)])
def test_txn_commit_fences_only_by_member_and_generation(gen, mid, error):
    from pylog.coordinator.group.api import TxnCommitRequest
    g = group(S.COMPLETING_REBALANCE, member("m-1"))  # no group-state rule for transactional commits (KIP-447)
    req = TxnCommitRequest("g", 7, 0, gen, mid, None, {TP: OffsetValue(5, -1, "", NOW)})
    assert d.txn_commit(g, req, CFG, NOW).reply == (error, {})


def test_offsets_expire_only_for_an_empty_group():
    offsets = {TP: OffsetValue(5, -1, "", 400)}
    g = group(S.EMPTY)
    g.state_timestamp_ms = 300
    assert d.offsets_expire_at(g, offsets, NOW) == 300  # a consumer group: since it became Empty
    g.protocol_type = None
    assert d.offsets_expire_at(g, offsets, NOW) == 400  # a simple group: since its last commit
    assert d.offsets_expire_at(group(S.STABLE, member("m-1")), offsets, NOW) is None
