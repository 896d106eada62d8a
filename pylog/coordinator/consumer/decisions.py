"""The rules of KIP-848 consumer groups, pure: each takes a group and a request and returns an Outcome (the
group after it, the answer, and the effects: timers to set or cancel, records to write).

Kafka's GroupMetadataManager.consumerGroupHeartbeat, in the same three steps: update the member (a
changed subscription, or a change of the subscribed topics' partitions, bumps the group epoch); when the
group epoch is ahead of the target assignment's, run the assignor; then move the member one step towards
its target (reconcile.py). Leaving (-1), a static member's temporary leave (-2, keeping its assignment for
a restart under the same group.instance.id), session expiry and a revocation that outlasts the member's
rebalance timeout are the other rules.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from pylog.coordinator.consumer import records as rec
from pylog.coordinator.consumer import migration
from pylog.coordinator.consumer.assignors import ASSIGNORS
from pylog.coordinator.consumer.model import (
    LEAVE_EPOCH, STATIC_LEAVE_EPOCH, Assignment, ConsumerGroup, Member, MemberState, TopicsView,
)
from pylog.coordinator.consumer.reconcile import next_state
# The classic coordinator's timer effects: both shells set and cancel timers the same way.
from pylog.coordinator.group.effects import CancelTimer, SetTimer  # noqa: F401 (re-exported to the shell)
from pylog.common.errors import ErrorCode
from pylog.coordinator.group.group import Group

E = ErrorCode
# ("session" | "revoke", group id, member id); classic members also "join" (told to rejoin, must within their
# rebalance timeout) and "sync" (joined, must send SyncGroup within it)
TimerKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class ConsumerConfig:
    """The broker's KIP-848 settings (Kafka's group.consumer.* keys and defaults)."""

    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    assignors: tuple[str, ...] = ("uniform", "range")
    max_size: int = 2**31 - 1
    migration_policy: str = "bidirectional"  # group.consumer.migration.policy (Kafka 4.0's default)
    classic_max_size: int = 2**31 - 1  # group.max.size: a downgrade may not make a classic group larger

    @classmethod
    def from_broker(cls, get) -> "ConsumerConfig":
        """The settings from a broker config's `get(key)`."""
        return cls(int(get("group.consumer.session.timeout.ms")), int(get("group.consumer.heartbeat.interval.ms")),
                   tuple(assignor_name(a) for a in get("group.consumer.assignors")),
                   int(get("group.consumer.max.size")), str(get("group.consumer.migration.policy")).lower(),
                   int(get("group.max.size")))

    def upgrade_enabled(self) -> bool:
        """Whether a classic group converts to a consumer group when a consumer-protocol member joins it."""
        return self.migration_policy in ("upgrade", "bidirectional")

    def downgrade_enabled(self) -> bool:
        """Whether a consumer group converts back when its last consumer-protocol member leaves."""
        return self.migration_policy in ("downgrade", "bidirectional")


def assignor_name(configured: str) -> str:
    """`uniform`/`range`, also from Kafka's class names (org.apache.kafka...UniformAssignor)."""
    short = configured.strip().rsplit(".", 1)[-1]
    return short[:-len("Assignor")].lower() if short.endswith("Assignor") else short.lower()


@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    """A ConsumerGroupHeartbeat, version-independent (None: unchanged since the member's last heartbeat)."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_names: tuple[str, ...] | None = None
    subscribed_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""


@dataclass(slots=True)
class HeartbeatResult:
    """A ConsumerGroupHeartbeat answer (assignment None: unchanged, not sent)."""

    error: ErrorCode
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = -1
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


@dataclass(frozen=True, slots=True)
class Write:
    """Append these records to the group's `__consumer_offsets` partition (acks=all) before answering."""

    records: list[rec.Record]


Effect = SetTimer | CancelTimer | Write


@dataclass(slots=True)
class Outcome:
    """A rule's result: the group afterwards (None: it no longer exists), the answer (a HeartbeatResult, or for a
    classic member's request the classic answer), the effects in order; `classic`: the classic group it became."""

    group: ConsumerGroup | None
    reply: Any
    effects: list[Effect] = field(default_factory=list)
    note: str = ""
    classic: Group | None = None


def heartbeat(group: ConsumerGroup | None, req: HeartbeatRequest, topics: TopicsView, cfg: ConsumerConfig,
              new_member_id: str) -> Outcome:
    """A ConsumerGroupHeartbeat: join (epoch 0), heartbeat and acknowledge (epoch > 0), or leave (-1, -2)."""
    bad = _invalid(req, cfg)
    if bad is not None:
        return Outcome(group, HeartbeatResult(bad[0], bad[1], member_epoch=req.member_epoch))
    if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
        return leave(group, req.member_id, req.instance_id, req.member_epoch, cfg)
    if group is None and req.member_epoch != 0:
        return Outcome(None, HeartbeatResult(E.UNKNOWN_MEMBER_ID, f"Group {req.group_id} has no member "
                                             f"{req.member_id}.", member_epoch=req.member_epoch))
    g = copy_group(group) if group is not None else ConsumerGroup(req.group_id)
    records: list[rec.Record] = []
    member, err = _member(g, req, new_member_id, records)
    if err is not None:
        return Outcome(group, HeartbeatResult(err[0], err[1], member_epoch=req.member_epoch))
    if member.member_id not in g.members and len(g.members) >= cfg.max_size:
        return Outcome(group, HeartbeatResult(E.GROUP_MAX_SIZE_REACHED, f"The group has reached its maximum size "
                                              f"({cfg.max_size}).", member_epoch=req.member_epoch))
    before = g.members.get(member.member_id)
    updated = _updated(member, req)
    settled = settle(g, before, updated, topics, cfg, req.owned, records)
    if isinstance(settled, ErrorCode):
        return Outcome(group, HeartbeatResult(settled, f"No assignor in {', '.join(cfg.assignors)} is named "
                                              f"{req.server_assignor}.", member_epoch=req.member_epoch))
    reconciled, bump = settled
    fx: list[Effect] = ([Write(records)] if records else []) + _timers(g.group_id, updated, reconciled, cfg)
    # Kafka sends the assignment on a full request (a join, or one after an error) and when it changed.
    full = req.member_epoch == 0 or (req.rebalance_timeout_ms != -1 and req.subscribed_names is not None
                                     and req.owned is not None)
    changed = before is None or before.assigned != reconciled.assigned
    reply = HeartbeatResult(E.NONE, member_id=reconciled.member_id, member_epoch=reconciled.member_epoch,
                            heartbeat_interval_ms=cfg.heartbeat_interval_ms,
                            assignment=dict(reconciled.assigned) if full or changed else None)
    note = f"Bumped the epoch of consumer group {g.group_id} to {g.group_epoch}" if bump else ""
    return Outcome(g, reply, fx, note)


def settle(g: ConsumerGroup, before: Member | None, updated: Member, topics: TopicsView, cfg: ConsumerConfig,
           owned: Assignment | None, records: list[rec.Record]) -> tuple[Member, bool] | ErrorCode:
    """Kafka's three steps for a member's request (`g` is changed): take its subscription (bumping the group epoch
    when it or the topics changed), compute a new target when the group epoch is ahead, move the member one step
    towards its target. The member afterwards and whether the epoch was bumped; UNSUPPORTED_ASSIGNOR if asked."""
    bump = _subscribe(g, before, updated, topics, records)
    chosen = _assignor(g, cfg)
    if isinstance(chosen, ErrorCode):
        return chosen
    if g.group_epoch > g.assignment_epoch:
        records.extend(_assign(g, chosen))
    reconciled = next_state(updated, g.assignment_epoch, g.target.get(updated.member_id, {}),
                            g.owners(updated.member_id), owned)
    if reconciled != updated or before is None:
        records.append(rec.current_assignment_record(g.group_id, reconciled))
    g.members[reconciled.member_id] = reconciled
    return reconciled, bump


def session_ms(m: Member, cfg: ConsumerConfig) -> int:
    """A member's session timeout: the broker's, or the one a classic member's JoinGroup asked for."""
    return m.classic.session_timeout_ms if m.classic is not None else cfg.session_timeout_ms


def _subscribe(g: ConsumerGroup, before: Member | None, updated: Member, topics: TopicsView,
               records: list[rec.Record]) -> bool:
    """Put the updated member in; True (and the group epoch bumped) when its subscription, or the partitions
    of the topics the group subscribes to, changed."""
    bump = before is None or _subscription(before) != _subscription(updated)
    if before is None or _metadata(before) != _metadata(updated):
        records.append(rec.member_metadata_record(g.group_id, updated))
    g.members[updated.member_id] = updated
    subscribed = resolve(g, topics)
    if subscribed != g.subscribed_topics:
        g.subscribed_topics = subscribed
        records.append(rec.partition_metadata_record(g))
        bump = True
    if bump:
        g.group_epoch += 1
        records.append(rec.group_epoch_record(g))
    return bump


def _timers(gid: str, updated: Member, reconciled: Member, cfg: ConsumerConfig) -> list[Effect]:
    """The member's session restarts; a revocation that starts gets the member's rebalance timeout."""
    fx: list[Effect] = [SetTimer(("session", gid, reconciled.member_id), session_ms(reconciled, cfg))]
    revoke_key = ("revoke", gid, reconciled.member_id)
    if reconciled.state == MemberState.UNREVOKED_PARTITIONS:
        if updated.state != MemberState.UNREVOKED_PARTITIONS:
            fx.append(SetTimer(revoke_key, reconciled.rebalance_timeout_ms))
    elif updated.state == MemberState.UNREVOKED_PARTITIONS:
        fx.append(CancelTimer(revoke_key))
    return fx


def leave(group: ConsumerGroup | None, member_id: str, instance_id: str | None, epoch: int,
          cfg: ConsumerConfig | None = None) -> Outcome:
    """A member leaves (-1), or a static member leaves for now (-2: it keeps its partitions for its restart)."""
    member = group.members.get(member_id) if group is not None else None
    if member is None and group is not None and instance_id is not None:
        member = group.static_member(instance_id)
    if group is None or member is None:
        return Outcome(group, HeartbeatResult(E.UNKNOWN_MEMBER_ID, f"Unknown member {member_id}.",
                                              member_epoch=epoch))
    reply = HeartbeatResult(E.NONE, member_id=member_id, member_epoch=epoch)
    if epoch == STATIC_LEAVE_EPOCH and member.instance_id is not None:
        g = copy_group(group)
        left = replace(member, member_epoch=STATIC_LEAVE_EPOCH, previous_member_epoch=member.member_epoch)
        g.members[member.member_id] = left
        return Outcome(g, reply, [Write([rec.current_assignment_record(g.group_id, left)]),
                                  CancelTimer(("revoke", g.group_id, member.member_id))],
                       f"Static member {member.instance_id} left consumer group {g.group_id} for now")
    out = remove(group, member.member_id, cfg=cfg)
    out.reply = reply
    return out


def remove(group: ConsumerGroup, member_id: str, why: str = "left", cfg: ConsumerConfig | None = None) -> Outcome:
    """Remove a member (left, session expired, or too slow to revoke): its partitions are free, the group epoch
    goes up so the next heartbeat computes a new target. When only classic members would be left and the migration
    policy allows a downgrade, the group becomes a classic group instead (Kafka's convertToClassicGroup)."""
    if cfg is not None and _may_downgrade(group, member_id, cfg):
        classic = migration.to_classic(group, member_id)
        records = [r for mid in group.members for r in rec.member_tombstones(group.group_id, mid)]
        records += rec.group_tombstones(group.group_id)
        return Outcome(None, HeartbeatResult(E.NONE), [Write(records)],
                       f"Member {member_id} {why} consumer group {group.group_id}: only classic members are left, "
                       f"so it is a classic group again (generation {classic.generation})", classic)
    g = copy_group(group)
    g.members.pop(member_id, None)
    g.target.pop(member_id, None)
    g.group_epoch += 1
    records = rec.member_tombstones(g.group_id, member_id) + [rec.group_epoch_record(g)]
    fx: list[Effect] = [Write(records), CancelTimer(("session", g.group_id, member_id)),
                        CancelTimer(("revoke", g.group_id, member_id))]
    return Outcome(g, HeartbeatResult(E.NONE), fx,
                   f"Member {member_id} {why} consumer group {g.group_id}; epoch now {g.group_epoch}")


def timer_fired(group: ConsumerGroup, key: TimerKey, cfg: ConsumerConfig | None = None) -> Outcome | None:
    """A session expired (the member is removed) or a revocation took longer than the rebalance timeout
    (the member is fenced: removed too); None when the timer no longer applies."""
    kind, _, member_id = key
    member = group.members.get(member_id)
    if member is None:
        return None
    if kind == "session":
        return remove(group, member_id, "expired from (session timeout)", cfg)
    if kind in ("join", "sync"):
        return remove(group, member_id, f"was fenced (no {'JoinGroup' if kind == 'join' else 'SyncGroup'} "
                      "within its rebalance timeout) from", cfg)
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        return remove(group, member_id, "was fenced (rebalance timeout) from", cfg)
    return None


def _may_downgrade(group: ConsumerGroup, leaving: str, cfg: ConsumerConfig) -> bool:
    """Kafka's validateOnlineDowngradeWithFencedMember: others remain, all classic, policy and size allow it."""
    others = [m for mid, m in group.members.items() if mid != leaving]
    if not others or any(m.classic is None for m in others):
        return False
    shared = set.intersection(*({name for name, _ in m.classic.protocols} for m in others if m.classic))
    return bool(shared) and cfg.downgrade_enabled() and len(others) <= cfg.classic_max_size


def check_commit(group: ConsumerGroup | None, member_id: str, epoch: int, instance_id: str | None = None,
                 transactional: bool = False) -> ErrorCode:
    """OffsetCommit v9 or TxnOffsetCommit against a consumer group (Kafka 4.0's ConsumerGroup.validateOffsetCommit)."""
    # A commit that is not a member's (assign() consumers, admin tools) is taken while nobody consumes, whatever
    # member id it carries: librdkafka 2.16 under group.protocol=consumer always sends the id it made (KIP-1082).
    if epoch < 0 and (group is None or not group.members):
        return E.NONE
    # TxnOffsetCommit before v3 has no member fields: nothing to fence (KIP-447).
    if transactional and epoch == -1 and not member_id and instance_id is None:
        return E.NONE
    member = group.members.get(member_id) if group is not None else None
    if member is None:
        return E.UNKNOWN_MEMBER_ID
    if epoch != member.member_epoch:  # TxnOffsetCommit's and a classic member's generation is the member epoch
        return E.ILLEGAL_GENERATION if transactional or member.classic is not None else E.STALE_MEMBER_EPOCH
    return E.NONE


def check_fetch(group: ConsumerGroup | None, member_id: str, epoch: int) -> ErrorCode:
    """OffsetFetch v9's member id and epoch against a consumer group."""
    if group is None:
        return E.NONE if epoch < 0 and not member_id else E.UNKNOWN_MEMBER_ID
    if epoch < 0 and not member_id:  # an admin fetch: only when nobody consumes
        return E.NONE if not group.members else E.UNKNOWN_MEMBER_ID
    member = group.members.get(member_id)
    if member is None:
        return E.UNKNOWN_MEMBER_ID
    if epoch == member.member_epoch:
        return E.NONE
    return E.ILLEGAL_GENERATION if member.classic is not None else E.STALE_MEMBER_EPOCH


def expired_offsets(group: ConsumerGroup, committed: dict[tuple[str, int], int], now: int, retention_ms: int
                    ) -> list[tuple[str, int]]:
    """offsets.retention.minutes for a consumer group (Kafka's rule): an offset of a topic no member subscribes to
    any more expires that long after it was committed. `committed` maps partitions to commit timestamps."""
    subscribed = {name for name, _ in group.subscribed_topics.values()}
    return sorted(tp for tp, at in committed.items()
                  if tp[0] not in subscribed and at >= 0 and now - at >= retention_ms)


def resolve(group: ConsumerGroup, topics: TopicsView) -> dict[uuid.UUID, tuple[str, int]]:
    """The topics the members subscribe to, by name or by regular expression, that exist now."""
    out: dict[uuid.UUID, tuple[str, int]] = {}
    for name in subscribed_names(group, topics):
        tid, n = topics[name]
        out[tid] = (name, n)
    return out


def subscribed_names(group: ConsumerGroup, topics: TopicsView, member: Member | None = None) -> set[str]:
    """Existing topic names the group (or one member) subscribes to. A regex must match the whole name
    (Kafka's RE2J matches()); Python's re is the dialect, and internal topics never match."""
    names: set[str] = set()
    for m in [member] if member is not None else group.members.values():
        names.update(n for n in m.subscribed_names if n in topics)
        if m.subscribed_regex:
            pattern = re.compile(m.subscribed_regex)
            names.update(n for n in topics if not n.startswith("__") and pattern.fullmatch(n))
    return names


def _assign(g: ConsumerGroup, assignor: str) -> list[rec.Record]:
    tid_of = {name: tid for tid, (name, _) in g.subscribed_topics.items()}
    view = {name: (tid, n) for tid, (name, n) in g.subscribed_topics.items()}
    subs = {mid: frozenset(tid_of[n] for n in subscribed_names(g, view, m))
            for mid, m in g.members.items()}
    partitions = {tid: n for tid, (_, n) in g.subscribed_topics.items()}
    target = ASSIGNORS[assignor](subs, partitions, g.target)
    out = [rec.target_member_record(g.group_id, mid, a) for mid, a in target.items() if g.target.get(mid) != a]
    g.target, g.assignment_epoch, g.assignor = target, g.group_epoch, assignor
    return out + [rec.target_epoch_record(g)]


def _assignor(g: ConsumerGroup, cfg: ConsumerConfig) -> str | ErrorCode:
    """The members' most asked-for server assignor, else the first configured one (Kafka's rule)."""
    asked: dict[str, int] = {}
    for m in g.members.values():
        if m.server_assignor:
            asked[m.server_assignor] = asked.get(m.server_assignor, 0) + 1
    if any(a not in cfg.assignors or a not in ASSIGNORS for a in asked):
        return E.UNSUPPORTED_ASSIGNOR
    return max(asked, key=lambda a: (asked[a], a)) if asked else cfg.assignors[0]


def _invalid(req: HeartbeatRequest, cfg: ConsumerConfig) -> tuple[ErrorCode, str] | None:
    if not req.group_id:
        return E.INVALID_REQUEST, "GroupId can't be empty."
    if req.member_epoch < STATIC_LEAVE_EPOCH:
        return E.INVALID_REQUEST, f"MemberEpoch {req.member_epoch} is invalid."
    if req.member_epoch == 0 and req.rebalance_timeout_ms == -1:
        return E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."
    if req.member_epoch == 0 and req.subscribed_names is None and req.subscribed_regex is None:
        return E.INVALID_REQUEST, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
    if req.member_epoch > 0 and not req.member_id:
        return E.INVALID_REQUEST, "MemberId can't be empty."
    if req.server_assignor is not None and req.server_assignor not in cfg.assignors:
        return E.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {req.server_assignor} is not supported."
    if req.subscribed_regex:
        try:
            re.compile(req.subscribed_regex)
        except re.error as e:
            return E.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex {req.subscribed_regex} is invalid: {e}"
    return None


def _member(g: ConsumerGroup, req: HeartbeatRequest, new_id: str, records: list[rec.Record]
            ) -> tuple[Member, tuple[ErrorCode, str] | None]:
    mid = req.member_id or new_id
    if req.member_epoch == 0:
        static = g.static_member(req.instance_id) if req.instance_id is not None else None
        if static is not None and static.member_id != mid:
            if static.member_epoch != STATIC_LEAVE_EPOCH:
                return static, (E.UNRELEASED_INSTANCE_ID, f"Static member {static.member_id} with instance id "
                                f"{req.instance_id} is still alive in group {g.group_id}.")
            return replace_static(g, static, mid, records), None
        existing = g.members.get(mid)
        if existing is not None:  # it rejoins: whatever it held, it let go of
            return replace(existing, member_epoch=0, previous_member_epoch=0, state=MemberState.STABLE,
                           assigned={}, pending_revocation={}), None
        return Member(mid, instance_id=req.instance_id), None
    member = g.members.get(mid)
    if member is None:
        return Member(mid), (E.UNKNOWN_MEMBER_ID, f"Member {mid} is not a member of group {g.group_id}.")
    if req.member_epoch > member.member_epoch or (
            req.member_epoch < member.member_epoch and (req.member_epoch != member.previous_member_epoch
                                                        or not _subset(req.owned, member.assigned))):
        return member, (E.FENCED_MEMBER_EPOCH, f"The member epoch {req.member_epoch} does not match the "
                        f"coordinator's ({member.member_epoch}): the member must abandon its partitions and rejoin.")
    return member, None


def replace_static(g: ConsumerGroup, old: Member, mid: str, records: list[rec.Record]) -> Member:
    """A static member's restart: the new member id takes over the old one's partitions and target (no epoch
    bump, so nobody else moves)."""
    g.members.pop(old.member_id)
    target = g.target.pop(old.member_id, {})
    g.target[mid] = target
    new = g.members[mid] = replace(old, member_id=mid, member_epoch=0, previous_member_epoch=0)
    records.extend(rec.member_tombstones(g.group_id, old.member_id))
    records += [rec.member_metadata_record(g.group_id, new), rec.target_member_record(g.group_id, mid, target)]
    return new


def _updated(m: Member, req: HeartbeatRequest) -> Member:
    return replace(
        m, instance_id=req.instance_id if req.instance_id is not None else m.instance_id,
        rack_id=req.rack_id if req.rack_id is not None else m.rack_id,
        rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1 else m.rebalance_timeout_ms,
        server_assignor=req.server_assignor if req.server_assignor is not None else m.server_assignor,
        subscribed_names=tuple(sorted(req.subscribed_names)) if req.subscribed_names is not None
        else m.subscribed_names,
        subscribed_regex=(req.subscribed_regex or None) if req.subscribed_regex is not None else m.subscribed_regex,
        client_id=req.client_id or m.client_id, client_host=req.client_host or m.client_host)


def _subscription(m: Member) -> tuple:
    return m.subscribed_names, m.subscribed_regex, m.server_assignor


def _metadata(m: Member) -> tuple:
    return (m.instance_id, m.rack_id, m.client_id, m.client_host, m.subscribed_names, m.subscribed_regex,
            m.rebalance_timeout_ms, m.server_assignor, m.classic)


def _subset(owned: Assignment | None, assigned: Assignment) -> bool:
    return owned is None or all(ps <= assigned.get(t, frozenset()) for t, ps in owned.items())


def copy_group(g: ConsumerGroup) -> ConsumerGroup:
    """A copy the rules may change (members are replaced, never changed in place)."""
    return replace(g, members=dict(g.members), target=dict(g.target), subscribed_topics=dict(g.subscribed_topics))
