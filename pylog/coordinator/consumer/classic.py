"""Classic members of a consumer group, pure (Kafka's classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup).

During a rolling upgrade or downgrade a consumer group holds members that still speak JoinGroup/SyncGroup/
Heartbeat. They are members like the others: their JoinGroup brings the subscription (the embedded consumer
protocol) and the partitions they own, runs the same three steps as a ConsumerGroupHeartbeat (decisions.settle)
and answers at once with the member's epoch as the generation and no leader; their SyncGroup gets the member's
current partitions; their Heartbeat says REBALANCE_IN_PROGRESS when the group moved on, when they must give up
partitions, or when partitions they wait for are free, so they rejoin and reconcile one step further.
"""

from __future__ import annotations

from dataclasses import replace

from pylog.coordinator.consumer import records as rec
from pylog.coordinator.consumer.decisions import (
    CancelTimer, ConsumerConfig, Effect, Outcome, SetTimer, Write, copy_group, replace_static, settle,
)
from pylog.coordinator.consumer.embedded import EmbeddedProtocolError, read_subscription
from pylog.coordinator.consumer.migration import PROTOCOL_TYPE, assignment_bytes, by_id
from pylog.coordinator.consumer.model import ClassicMeta, ConsumerGroup, Member, MemberState, TopicsView
from pylog.coordinator.group.api import JoinRequest, JoinResult, SyncResult
from pylog.common.errors import ErrorCode

E = ErrorCode


def supports(group: ConsumerGroup, protocol_type: str, names: set[str]) -> bool:
    """Kafka's supportsClassicProtocols: type `consumer`, and a protocol every classic member lists."""
    if protocol_type != PROTOCOL_TYPE or not names:
        return False
    classic = [m.classic for m in group.members.values() if m.classic is not None]
    return any(all(n in {p for p, _ in c.protocols} for c in classic) for n in names)


def join(group: ConsumerGroup, req: JoinRequest, topics: TopicsView, cfg: ConsumerConfig, new_id: str,
         known_id_required: bool) -> Outcome:
    """A classic member's JoinGroup to a non-empty consumer group; answered at once (JoinResult)."""
    mid = req.member_id or new_id
    fail = lambda err: Outcome(group, JoinResult(err, member_id=req.member_id))  # noqa: E731
    if mid not in group.members and len(group.members) >= cfg.max_size:
        return fail(E.GROUP_MAX_SIZE_REACHED)
    if not supports(group, req.protocol_type, {n for n, _ in req.protocols}):
        return fail(E.INCONSISTENT_GROUP_PROTOCOL)
    if known_id_required:  # JoinGroup v4+ without an id: the member gets one and comes back (KIP-394)
        return Outcome(group, JoinResult(E.MEMBER_ID_REQUIRED, member_id=mid))
    try:
        sub = read_subscription(req.protocols[0][1])
    except EmbeddedProtocolError:
        return fail(E.INCONSISTENT_GROUP_PROTOCOL)
    g = copy_group(group)
    records: list[rec.Record] = []
    member = _member(g, req, mid, records)
    if isinstance(member, ErrorCode):
        return fail(member)
    before = g.members.get(member.member_id)
    updated = replace(
        member, instance_id=req.instance_id or member.instance_id, rack_id=sub.rack_id or member.rack_id,
        rebalance_timeout_ms=req.rebalance_timeout_ms, subscribed_names=tuple(sorted(sub.topics)),
        subscribed_regex=None, client_id=req.client_id, client_host=req.client_host,
        classic=ClassicMeta(req.session_timeout_ms, tuple(req.protocols)))
    owned = by_id(_grouped(sub.owned), topics)
    settled = settle(g, before, updated, topics, cfg, owned, records)
    if isinstance(settled, ErrorCode):
        return fail(settled)
    m, bump = settled
    fx: list[Effect] = [Write(records)] if records else []
    fx += [CancelTimer(("join", g.group_id, m.member_id)),
           SetTimer(("session", g.group_id, m.member_id), req.session_timeout_ms),
           SetTimer(("sync", g.group_id, m.member_id), req.rebalance_timeout_ms)]
    fx += _revoke_timer(g.group_id, before, m)
    reply = JoinResult(E.NONE, m.member_epoch, PROTOCOL_TYPE, req.protocols[0][0], "", m.member_id, [])
    note = f"Bumped the epoch of consumer group {g.group_id} to {g.group_epoch} (classic member {m.member_id} " \
           "joined)" if bump else ""
    return Outcome(g, reply, fx, note)


def sync(group: ConsumerGroup, generation: int, member_id: str, instance_id: str | None,
         protocol_type: str | None, protocol_name: str | None) -> Outcome:
    """A classic member's SyncGroup: its current partitions, unless it must rejoin first."""
    m = _known(group, member_id, instance_id)
    if isinstance(m, ErrorCode):
        return Outcome(group, SyncResult(m))
    if generation != m.member_epoch:
        return Outcome(group, SyncResult(E.ILLEGAL_GENERATION))
    assert m.classic is not None
    first = m.classic.protocols[0][0]
    if (protocol_type and protocol_type != PROTOCOL_TYPE) or (protocol_name and protocol_name != first):
        return Outcome(group, SyncResult(E.INCONSISTENT_GROUP_PROTOCOL))
    gid = group.group_id
    if group.group_epoch > m.member_epoch and m.state != MemberState.UNREVOKED_PARTITIONS:
        return Outcome(group, SyncResult(E.REBALANCE_IN_PROGRESS),
                       [SetTimer(("join", gid, m.member_id), m.rebalance_timeout_ms)])
    fx: list[Effect] = [CancelTimer(("sync", gid, m.member_id)),
                        SetTimer(("session", gid, m.member_id), m.classic.session_timeout_ms)]
    data = assignment_bytes(group, m.assigned, m.classic.protocols)
    return Outcome(group, SyncResult(E.NONE, protocol_type or PROTOCOL_TYPE, protocol_name or first, data), fx)


def heartbeat(group: ConsumerGroup, generation: int, member_id: str, instance_id: str | None) -> Outcome:
    """A classic member's Heartbeat: REBALANCE_IN_PROGRESS when it must rejoin to move towards its target."""
    m = _known(group, member_id, instance_id)
    if isinstance(m, ErrorCode):
        return Outcome(group, m)
    if generation != m.member_epoch:
        return Outcome(group, E.ILLEGAL_GENERATION)
    assert m.classic is not None
    gid = group.group_id
    fx: list[Effect] = [SetTimer(("session", gid, m.member_id), m.classic.session_timeout_ms)]
    if (m.member_epoch < group.group_epoch or m.state == MemberState.UNREVOKED_PARTITIONS
            or (m.state == MemberState.UNRELEASED_PARTITIONS and not waiting_on_unreleased(group, m))):
        return Outcome(group, E.REBALANCE_IN_PROGRESS, fx + [SetTimer(("join", gid, m.member_id),
                                                                        m.rebalance_timeout_ms)])
    return Outcome(group, E.NONE, fx)


def leave(group: ConsumerGroup, members: list[tuple[str, str | None]]) -> Outcome:
    """A LeaveGroup for classic members of a consumer group: reply (NONE, [error per member])."""
    g = copy_group(group)
    errors: list[ErrorCode] = []
    records: list[rec.Record] = []
    fx: list[Effect] = []
    for member_id, instance_id in members:
        m = _known(g, member_id, instance_id, admin=True)
        if isinstance(m, ErrorCode):
            errors.append(m)
            continue
        del g.members[m.member_id]
        g.target.pop(m.member_id, None)
        records += rec.member_tombstones(g.group_id, m.member_id)
        fx += [CancelTimer((kind, g.group_id, m.member_id)) for kind in ("session", "revoke", "join", "sync")]
        errors.append(E.NONE)
    if not records:
        return Outcome(group, (E.NONE, errors))
    g.group_epoch += 1
    records.append(rec.group_epoch_record(g))
    return Outcome(g, (E.NONE, errors), [Write(records)] + fx,
                   f"{errors.count(E.NONE)} classic member(s) left consumer group {g.group_id}; "
                   f"epoch now {g.group_epoch}")


def waiting_on_unreleased(group: ConsumerGroup, m: Member) -> bool:
    """Whether a partition of the member's target that it lacks is still owned by another member."""
    owners = group.owners(m.member_id)
    return any((tid, p) in owners for tid, ps in group.target.get(m.member_id, {}).items()
               for p in ps - m.assigned.get(tid, frozenset()))


def _member(g: ConsumerGroup, req: JoinRequest, mid: str, records: list[rec.Record]) -> Member | ErrorCode:
    """The joining member: new, known, or a static member restarting under a new id (it takes the old one's place)."""
    if req.instance_id is None:
        return g.members.get(mid) or Member(mid)
    static = g.static_member(req.instance_id)
    if static is None:
        return Member(mid, instance_id=req.instance_id) if not req.member_id or mid in g.members \
            else E.UNKNOWN_MEMBER_ID
    if not req.member_id:
        return replace_static(g, static, mid, records)
    return static if static.member_id == mid else E.FENCED_INSTANCE_ID


def _known(group: ConsumerGroup, member_id: str, instance_id: str | None, admin: bool = False) -> Member | ErrorCode:
    """Kafka's validateConsumerGroupMember, then that the member speaks the classic protocol (else unknown)."""
    if instance_id is None:
        m = group.members.get(member_id)
    else:
        m = group.static_member(instance_id)
        if m is not None and m.member_id != member_id and not (admin and not member_id):
            return E.FENCED_INSTANCE_ID
    if m is None or m.classic is None:
        return E.UNKNOWN_MEMBER_ID
    return m


def _revoke_timer(gid: str, before: Member | None, m: Member) -> list[Effect]:
    key = ("revoke", gid, m.member_id)
    was = before is not None and before.state == MemberState.UNREVOKED_PARTITIONS
    if m.state == MemberState.UNREVOKED_PARTITIONS and not was:
        return [SetTimer(key, m.rebalance_timeout_ms)]
    return [CancelTimer(key)] if was and m.state != MemberState.UNREVOKED_PARTITIONS else []


def _grouped(owned: tuple[tuple[str, int], ...]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, p in owned:
        out.setdefault(topic, []).append(p)
    return out
