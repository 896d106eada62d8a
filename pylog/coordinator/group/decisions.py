"""The classic group protocol's decisions: from a group and a request to the answer and the effects.

Each function takes the group (plain data, changed in place), the request and the time, and returns
a `Decision`: the answer, or None when the request parks until the join phase or the assignment
completes, and the effects (effects.py) the shell (coordinator.py) carries out in order: park a request,
answer parked ones, set or cancel a timer, write the group's metadata, log a line. No futures,
timers, clocks or I/O here, so tests/unit/coordinator/test_group_decisions.py drives every rule
through tables. The timers come back as decisions too (`timer_fired`).

A JoinGroup parks until the join phase completes: when every known member has rejoined and no
KIP-394 member id is pending, or when the group's rebalance timeout (the initial-rebalance delay for
a group leaving Empty) fires. Then the generation moves on, the leader alone gets the member list,
and followers' SyncGroups park until the leader's SyncGroup brings the assignment, which is stored
(acks=all) before anyone gets it (`assignment_stored`).
"""

from __future__ import annotations

from pylog.coordinator.group.api import (
    CommitRequest, CoordinatorConfig, JoinRequest, JoinResult, SyncResult, TopicPartition, TxnCommitRequest,
)
from pylog.coordinator.group.effects import (
    CancelTimer, Decision, Effect, Note, ParkJoin, ParkSync, Persist, ReplyJoin, ReplySync, SetTimer, TimerKey,
    session_timer,
)
from pylog.coordinator.group.group import Group, Member
from pylog.coordinator.group.records import OffsetValue
from pylog.coordinator.group.state import GroupState
from pylog.protocol.errors import ErrorCode

S = GroupState
E = ErrorCode


def _reply_join(fx: list[Effect], m: Member, result: JoinResult | ErrorCode) -> None:
    if m.joining:
        m.joining = False
        fx.append(ReplyJoin(m.member_id, result))


def _reply_sync(fx: list[Effect], m: Member, result: SyncResult) -> None:
    if m.syncing:
        m.syncing = False
        fx.append(ReplySync(m.member_id, result))


# -- JoinGroup ----------------------------------------------------------------------------------


def join(group: Group | None, req: JoinRequest, new_id: str, cfg: CoordinatorConfig, now: int) -> Decision:
    """A JoinGroup; `new_id` is the member id to hand out if the request brings none."""
    if not cfg.min_session_timeout_ms <= req.session_timeout_ms <= cfg.max_session_timeout_ms:
        return Decision(JoinResult(E.INVALID_SESSION_TIMEOUT, member_id=req.member_id))
    d = Decision()
    if group is None:
        if req.member_id:
            return Decision(JoinResult(E.UNKNOWN_MEMBER_ID, member_id=req.member_id))
        group = d.created = Group(req.group_id, state_timestamp_ms=now)
    if group.state == S.DEAD:
        d.reply = JoinResult(E.COORDINATOR_NOT_AVAILABLE if not req.member_id else E.UNKNOWN_MEMBER_ID,
                             member_id=req.member_id)
    elif not group.supports(req.protocol_type, req.protocols):
        d.reply = JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=req.member_id)
    elif not req.member_id:
        d.reply = _join_new(d.effects, group, req, new_id, cfg, now)
    else:
        d.reply = _join_known(d.effects, group, req, cfg, now)
    return d


def _join_new(fx: list[Effect], group: Group, req: JoinRequest, member_id: str, cfg: CoordinatorConfig,
              now: int) -> JoinResult | None:
    if req.instance_id and req.instance_id in group.static_members:
        return _rejoin_static(fx, group, req, group.static_members[req.instance_id], member_id, cfg, now)
    if len(group.members) + len(group.pending_members) >= cfg.max_size:
        return JoinResult(E.GROUP_MAX_SIZE_REACHED, member_id="")
    if not req.instance_id and req.require_known_member_id:
        group.pending_members.add(member_id)
        fx.append(SetTimer(("pending", group.group_id, member_id), req.session_timeout_ms))
        return JoinResult(E.MEMBER_ID_REQUIRED, member_id=member_id)
    _add_and_rebalance(fx, group, req, member_id, cfg, now)
    return None


def _join_known(fx: list[Effect], group: Group, req: JoinRequest, cfg: CoordinatorConfig,
                now: int) -> JoinResult | None:
    mid = req.member_id
    if req.instance_id:
        known = group.static_members.get(req.instance_id)
        if known is not None and known != mid:
            return JoinResult(E.FENCED_INSTANCE_ID, member_id=mid)
    if mid in group.pending_members:
        if len(group.members) >= cfg.max_size:
            group.pending_members.discard(mid)
            return JoinResult(E.GROUP_MAX_SIZE_REACHED, member_id=mid)
        fx.append(CancelTimer(("pending", group.group_id, mid)))
        _add_and_rebalance(fx, group, req, mid, cfg, now)
        return None
    m = group.members.get(mid)
    if m is None or group.state in (S.EMPTY, S.DEAD):
        return JoinResult(E.UNKNOWN_MEMBER_ID, member_id=mid)
    if group.state == S.PREPARING_REBALANCE:
        _update_member(fx, group, m, req)
        _try_complete_join(fx, group, cfg, now)
        return None
    if group.state == S.COMPLETING_REBALANCE and m.matches(req.protocols):
        return _current(fx, group, m)  # a resend of the join whose answer was lost
    if group.state == S.STABLE and mid != group.leader_id and m.matches(req.protocols):
        return _current(fx, group, m)
    _update_member(fx, group, m, req)
    _prepare_rebalance(fx, group, f"member {mid} rejoined with new metadata or as the leader", cfg, now)
    return None


def _rejoin_static(fx: list[Effect], group: Group, req: JoinRequest, old_id: str, new_id: str,
                   cfg: CoordinatorConfig, now: int) -> JoinResult | None:
    """KIP-345: a known group.instance.id joins without its member id (a restart)."""
    old = group.members[old_id]
    _reply_join(fx, old, E.FENCED_INSTANCE_ID)
    _reply_sync(fx, old, SyncResult(E.FENCED_INSTANCE_ID))
    fx.append(CancelTimer(("hb", group.group_id, old_id)))
    proto = group.protocol_name
    unchanged = proto is not None and dict(req.protocols).get(proto) == dict(old.protocols).get(proto)
    m = group.replace_static(req.instance_id or "", old_id, new_id)
    m.client_id, m.client_host = req.client_id, req.client_host
    m.session_timeout_ms, m.rebalance_timeout_ms = req.session_timeout_ms, req.rebalance_timeout_ms
    fx.append(Note(f"Static member {req.instance_id} of group {group.group_id} rejoined as {new_id} (was {old_id})"))
    if group.state == S.STABLE and unchanged:
        m.protocols = list(req.protocols)
        return _current(fx, group, m)  # no rebalance: the member keeps its assignment
    _update_member(fx, group, m, req)
    if group.state == S.PREPARING_REBALANCE:
        _try_complete_join(fx, group, cfg, now)
    else:
        _prepare_rebalance(fx, group, f"static member {req.instance_id} rejoined", cfg, now)
    return None


def _current(fx: list[Effect], group: Group, m: Member) -> JoinResult:
    """The answer of the current generation, again."""
    fx.append(session_timer(group, m))
    members = _member_list(group) if m.member_id == group.leader_id else []
    return JoinResult(E.NONE, group.generation, group.protocol_type, group.protocol_name,
                      group.leader_id or "", m.member_id, members)


def _member_list(group: Group) -> list[tuple[str, str | None, bytes]]:
    name = group.protocol_name or ""
    return [(x.member_id, x.instance_id, x.metadata_for(name)) for x in group.members.values()
            if name in {n for n, _ in x.protocols}]


def _add_and_rebalance(fx: list[Effect], group: Group, req: JoinRequest, member_id: str, cfg: CoordinatorConfig,
                       now: int) -> None:
    m = Member(member_id, req.instance_id, req.client_id, req.client_host, req.rebalance_timeout_ms,
               req.session_timeout_ms, req.protocol_type, list(req.protocols), is_new=True, joining=True)
    fx.append(ParkJoin(member_id))
    group.add(m)
    group.new_member_added = True
    fx.append(session_timer(group, m))
    if group.state == S.PREPARING_REBALANCE:
        _try_complete_join(fx, group, cfg, now)
    else:
        _prepare_rebalance(fx, group, f"adding new member {member_id}", cfg, now)


def _update_member(fx: list[Effect], group: Group, m: Member, req: JoinRequest) -> None:
    """A known member's JoinGroup parks, replacing (and failing) an older parked one."""
    _reply_join(fx, m, E.REBALANCE_IN_PROGRESS)
    m.protocols = list(req.protocols)
    m.session_timeout_ms, m.rebalance_timeout_ms = req.session_timeout_ms, req.rebalance_timeout_ms
    m.joining = True
    fx.append(ParkJoin(m.member_id))
    fx.append(session_timer(group, m))


# -- the join phase -----------------------------------------------------------------------------


def _prepare_rebalance(fx: list[Effect], group: Group, reason: str, cfg: CoordinatorConfig, now: int) -> None:
    """Start a join phase: parked syncs fail, the join timer starts."""
    if group.state == S.COMPLETING_REBALANCE:
        for m in group.members.values():
            m.assignment = b""
            _reply_sync(fx, m, SyncResult(E.REBALANCE_IN_PROGRESS))
    timeout = group.rebalance_timeout_ms()
    if group.state == S.EMPTY:
        delay = min(cfg.initial_rebalance_delay_ms, timeout)
        group.new_member_added = False
        group.initial_delay = (delay, max(timeout - delay, 0))
        fx.append(SetTimer(("join", group.group_id), delay))
    else:
        fx.append(SetTimer(("join", group.group_id), timeout))
    fx.append(Note(f"Preparing to rebalance group {group.group_id} in state {group.state.value} with old "
                   f"generation {group.generation} (reason: {reason})"))
    group.to(S.PREPARING_REBALANCE, now)
    _try_complete_join(fx, group, cfg, now)  # e.g. the last member left: nothing to wait for


def rebalance(group: Group, reason: str, cfg: CoordinatorConfig, now: int) -> Decision:
    """Start a join phase now (a group that was a consumer group until its last consumer-protocol member left)."""
    d = Decision()
    _prepare_rebalance(d.effects, group, reason, cfg, now)
    return d


def _try_complete_join(fx: list[Effect], group: Group, cfg: CoordinatorConfig, now: int) -> None:
    """Finish the join phase early once everybody is in (not during the initial delay)."""
    if group.state != S.PREPARING_REBALANCE or not group.has_all_joined():
        return
    if group.initial_delay is not None:
        return  # Kafka never ends the initial-rebalance delay early: more members may be coming
    _complete_join(fx, group, now)


def _complete_join(fx: list[Effect], group: Group, now: int) -> None:
    """End the join phase: drop dynamic members that did not rejoin, move to the next generation."""
    if group.state != S.PREPARING_REBALANCE:
        return
    fx.append(CancelTimer(("join", group.group_id)))
    group.initial_delay = None
    for m in [m for m in group.members.values() if not m.joining and not m.instance_id]:
        fx.append(Note(f"Removing member {m.member_id} of group {group.group_id}: it did not rejoin in time"))
        fx.append(CancelTimer(("hb", group.group_id, m.member_id)))
        group.remove(m.member_id)
    if group.members and not any(m.joining for m in group.members.values()):
        # Only static members that have not rejoined are left: wait another round for them.
        fx.append(SetTimer(("join", group.group_id), group.rebalance_timeout_ms()))
        return
    group.next_generation(now)
    fx.append(Note(f"Group {group.group_id} moved to generation {group.generation} ({group.state.value}) with "
                   f"{len(group.members)} members", rebalance=True))
    if group.state == S.EMPTY:
        fx.append(Persist(group.generation))
        return
    if group.leader_id not in group.members or not group.members[group.leader_id].joining:
        group.leader_id = next(m.member_id for m in group.members.values() if m.joining)
    members = _member_list(group)
    for m in group.members.values():
        m.is_new = False
        _reply_join(fx, m, JoinResult(E.NONE, group.generation, group.protocol_type, group.protocol_name,
                                      group.leader_id, m.member_id, members if m.member_id == group.leader_id else []))
        fx.append(session_timer(group, m))


def _join_timer_fired(fx: list[Effect], group: Group, now: int) -> None:
    """The join phase's timer: the next step of the initial-rebalance delay, or the end of the phase."""
    if group.initial_delay is not None:
        step, left = group.initial_delay
        if group.new_member_added and left > 0:
            group.new_member_added = False
            group.initial_delay = (step, left - min(step, left))
            fx.append(SetTimer(("join", group.group_id), min(step, left)))
            return
        group.initial_delay = None
    _complete_join(fx, group, now)


# -- member requests ----------------------------------------------------------------------------


def validate_member(group: Group | None, member_id: str, instance_id: str | None,
                    generation: int | None) -> tuple[ErrorCode, Member | None]:
    """The fencing every member request goes through (static id, member id, generation)."""
    if group is None or group.state == S.DEAD:
        return E.UNKNOWN_MEMBER_ID, None
    if instance_id:
        known = group.static_members.get(instance_id)
        if known is not None and known != member_id:
            return E.FENCED_INSTANCE_ID, None
    m = group.members.get(member_id)
    if m is None:
        return E.UNKNOWN_MEMBER_ID, None
    if generation is not None and generation != group.generation:
        return E.ILLEGAL_GENERATION, m
    return E.NONE, m


def sync(group: Group | None, generation: int, member_id: str, instance_id: str | None, protocol_type: str | None,
         protocol_name: str | None, assignments: dict[str, bytes]) -> Decision:
    """A SyncGroup: the leader brings the assignment (to be stored), everyone gets theirs."""
    err, m = validate_member(group, member_id, instance_id, generation)
    if err != E.NONE or m is None or group is None:
        return Decision(SyncResult(err))
    if (protocol_type and protocol_type != group.protocol_type) or \
            (protocol_name and protocol_name != group.protocol_name):
        return Decision(SyncResult(E.INCONSISTENT_GROUP_PROTOCOL))
    if group.state == S.PREPARING_REBALANCE:
        return Decision(SyncResult(E.REBALANCE_IN_PROGRESS))
    fx: list[Effect] = [session_timer(group, m)]
    if group.state == S.STABLE:
        return Decision(SyncResult(E.NONE, group.protocol_type, group.protocol_name, m.assignment), fx)
    if group.state != S.COMPLETING_REBALANCE:
        return Decision(SyncResult(E.UNKNOWN_MEMBER_ID), fx)
    _reply_sync(fx, m, SyncResult(E.REBALANCE_IN_PROGRESS))
    m.syncing = True
    fx.append(ParkSync(member_id))
    if member_id == group.leader_id:
        for mid, x in group.members.items():
            x.assignment = assignments.get(mid, b"")
        fx.append(Persist(group.generation, assignment=True))
    return Decision(None, fx)


def assignment_stored(group: Group, generation: int, err: ErrorCode, cfg: CoordinatorConfig, now: int) -> Decision:
    """The leader's assignment was written (or not): parked syncs get theirs, or the group rebalances."""
    fx: list[Effect] = []
    if group.generation != generation or group.state != S.COMPLETING_REBALANCE:
        return Decision(None, fx)  # the group moved on while we wrote; its waiters were answered by that change
    if err != E.NONE:
        for m in group.members.values():
            m.assignment = b""
            _reply_sync(fx, m, SyncResult(err))
        _prepare_rebalance(fx, group, f"storing the assignment failed with {err.name}", cfg, now)
        return Decision(None, fx)
    group.to(S.STABLE, now)
    for m in group.members.values():
        _reply_sync(fx, m, SyncResult(E.NONE, group.protocol_type, group.protocol_name, m.assignment))
    return Decision(None, fx)


def heartbeat(group: Group | None, generation: int, member_id: str, instance_id: str | None) -> Decision:
    """A Heartbeat: keep the member's session alive, tell it about a rebalance."""
    if group is not None and group.state == S.EMPTY:
        return Decision(E.UNKNOWN_MEMBER_ID)
    err, m = validate_member(group, member_id, instance_id, generation)
    fx: list[Effect] = []
    if m is not None and group is not None and err in (E.NONE, E.ILLEGAL_GENERATION):
        fx.append(session_timer(group, m))
    if err != E.NONE or group is None:
        return Decision(err, fx)
    return Decision(E.REBALANCE_IN_PROGRESS if group.state == S.PREPARING_REBALANCE else E.NONE, fx)


def leave(group: Group | None, members: list[tuple[str, str | None]], cfg: CoordinatorConfig, now: int) -> Decision:
    """A LeaveGroup (batched since v3): reply (group error, [error per member])."""
    if group is None or group.state == S.DEAD:
        return Decision((E.UNKNOWN_MEMBER_ID, []))
    fx: list[Effect] = []
    out = []
    for member_id, instance_id in members:
        if instance_id:
            known = group.static_members.get(instance_id)
            if known is None:
                out.append(E.UNKNOWN_MEMBER_ID)
                continue
            if member_id and member_id != known:
                out.append(E.FENCED_INSTANCE_ID)
                continue
            member_id = known
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            fx.append(CancelTimer(("pending", group.group_id, member_id)))
            _try_complete_join(fx, group, cfg, now)
            out.append(E.NONE)
        elif member_id in group.members:
            _remove_member(fx, group, member_id, "the consumer left the group", cfg, now)
            out.append(E.NONE)
        else:
            out.append(E.UNKNOWN_MEMBER_ID)
    return Decision((E.NONE, out), fx)


def _remove_member(fx: list[Effect], group: Group, member_id: str, reason: str, cfg: CoordinatorConfig,
                   now: int) -> None:
    """Drop a member and let the group rebalance without it."""
    m = group.members.get(member_id)
    if m is None:
        return
    fx.append(CancelTimer(("hb", group.group_id, member_id)))
    _reply_join(fx, m, E.UNKNOWN_MEMBER_ID)
    _reply_sync(fx, m, SyncResult(E.UNKNOWN_MEMBER_ID))
    group.remove(member_id)
    fx.append(Note(f"Member {member_id} left group {group.group_id} ({reason})"))
    if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
        _prepare_rebalance(fx, group, f"removing member {member_id}: {reason}", cfg, now)
    elif group.state == S.PREPARING_REBALANCE:
        _try_complete_join(fx, group, cfg, now)


# -- expiry: the timers -------------------------------------------------------------------------


def timer_fired(group: Group, key: TimerKey, cfg: CoordinatorConfig, now: int) -> Decision:
    """A timer of the group went off: a member's session, a pending member id, or the join phase."""
    fx: list[Effect] = []
    kind = key[0]
    if kind == "join":
        _join_timer_fired(fx, group, now)
    elif kind == "hb":
        _session_expired(fx, group, key[2], cfg, now)
    elif kind == "pending" and key[2] in group.pending_members:
        group.pending_members.discard(key[2])
        fx.append(Note(f"Pending member {key[2]} of group {group.group_id} never joined; dropped"))
        _try_complete_join(fx, group, cfg, now)
    return Decision(None, fx)


def _session_expired(fx: list[Effect], group: Group, member_id: str, cfg: CoordinatorConfig, now: int) -> None:
    """No heartbeat within the session timeout: the member is gone, unless it waits in a join or sync."""
    m = group.members.get(member_id)
    if m is None:
        return
    if m.joining or m.syncing:
        fx.append(session_timer(group, m))  # a parked JoinGroup or SyncGroup keeps its member alive (as Kafka)
        return
    _remove_member(fx, group, member_id, f"its session timed out after {m.session_timeout_ms} ms", cfg, now)


def offsets_expire_at(group: Group, offsets: dict[TopicPartition, OffsetValue], now: int) -> int | None:
    """Since when the group's offsets count as unused (offsets.retention.minutes runs from there); None: in use."""
    if group.state != S.EMPTY or not offsets:
        return None
    base = group.state_timestamp_ms if group.protocol_type else max(
        (v.commit_timestamp for v in offsets.values()), default=now)
    return None if base < 0 else base


# -- offset commits -----------------------------------------------------------------------------


def commit(group: Group | None, req: CommitRequest, cfg: CoordinatorConfig, now: int) -> Decision:
    """An OffsetCommit (Kafka's ClassicGroup.validateOffsetCommit): reply (group error, {partition: error} of
    the partitions refused alone); the others are to be written."""
    d = Decision()
    if group is None:
        if req.generation >= 0:
            d.reply = (E.ILLEGAL_GENERATION, {})
            return d
        # A simple group (assign() consumers, admin tools), whatever member id came with generation -1 (Kafka's
        # handleCommitOffsets): librdkafka under group.protocol=consumer sends the id it made for itself.
        group = d.created = Group(req.group_id, state_timestamp_ms=now)
    err = _validate_commit(d.effects, group, req)
    if err != E.NONE:
        d.reply = (err, {})
        return d
    d.reply = (E.NONE, too_large(req, cfg))
    return d


def too_large(req: CommitRequest | TxnCommitRequest, cfg: CoordinatorConfig) -> dict[TopicPartition, ErrorCode]:
    """The partitions whose commit metadata is over offset.metadata.max.bytes."""
    limit = cfg.metadata_max_bytes
    # (UTF-8 takes at most 4 bytes a character: most metadata needs no encoding to be found short enough)
    return {tp: E.OFFSET_METADATA_TOO_LARGE for tp, v in req.offsets.items()
            if len(v.metadata) * 4 > limit and len(v.metadata.encode()) > limit}


def _validate_commit(fx: list[Effect], group: Group, req: CommitRequest) -> ErrorCode:
    if group.state == S.DEAD:
        return E.COORDINATOR_NOT_AVAILABLE
    if req.generation < 0 and group.state == S.EMPTY:
        return E.NONE
    if req.member_id or req.instance_id or req.generation >= 0:
        err, m = validate_member(group, req.member_id, req.instance_id, req.generation)
        if err != E.NONE:
            return err
        if m is not None:
            fx.append(session_timer(group, m))
    elif group.state != S.EMPTY:
        return E.UNKNOWN_MEMBER_ID
    if group.state == S.COMPLETING_REBALANCE:
        return E.REBALANCE_IN_PROGRESS
    return E.NONE


def txn_commit(group: Group | None, req: TxnCommitRequest, cfg: CoordinatorConfig, now: int) -> Decision:
    """A TxnOffsetCommit (KIP-447: only fencing, no group-state rule); reply as `commit`'s. As Kafka, it
    creates an Empty group."""
    d = Decision()
    if group is None:
        group = d.created = Group(req.group_id, state_timestamp_ms=now)
    if group.state == S.DEAD:
        err = E.COORDINATOR_NOT_AVAILABLE
    elif req.generation >= 0 or req.member_id or req.instance_id:
        err, _ = validate_member(group, req.member_id, req.instance_id, req.generation)
    else:
        err = E.NONE
    d.reply = (err, {} if err != E.NONE else {
        tp: E.OFFSET_METADATA_TOO_LARGE for tp, v in req.offsets.items()
        if len(v.metadata.encode()) > cfg.metadata_max_bytes})
    return d
