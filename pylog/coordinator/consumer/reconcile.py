"""One member's next state towards its target assignment (Kafka's CurrentAssignmentBuilder).

A member first gives up what the target takes away (UNREVOKED_PARTITIONS, its epoch unchanged), and
only once its heartbeat no longer lists those partitions does it move to the target epoch; a partition
it gains while another member still owns it waits (UNRELEASED_PARTITIONS) until that member lets go.
So no partition is ever owned by two members.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from pylog.coordinator.consumer.model import Assignment, Member, MemberState, clean

S = MemberState


def next_state(member: Member, target_epoch: int, target: Assignment, owners: dict[tuple[uuid.UUID, int], str],
               owned: Assignment | None) -> Member:
    """The member after one reconciliation step; `owned` is what its heartbeat says it holds (None: unchanged)."""
    if member.state == S.UNREVOKED_PARTITIONS:
        if owned is None or _holds_any(owned, member.pending_revocation):
            return member  # still revoking
        return _compute(member, target_epoch, target, owners)
    if member.state == S.UNRELEASED_PARTITIONS or member.member_epoch != target_epoch:
        return _compute(member, target_epoch, target, owners)
    return member


def _compute(member: Member, target_epoch: int, target: Assignment, owners: dict[tuple[uuid.UUID, int], str]
             ) -> Member:
    keep: dict[uuid.UUID, set[int]] = {}
    revoke: dict[uuid.UUID, set[int]] = {}
    gain: dict[uuid.UUID, set[int]] = {}
    unreleased = False
    for tid in set(member.assigned) | set(target):
        have, want = member.assigned.get(tid, frozenset()), target.get(tid, frozenset())
        keep[tid] = set(have & want)
        revoke[tid] = set(have - want)
        for p in want - have:
            if (tid, p) in owners:
                unreleased = True
            else:
                gain.setdefault(tid, set()).add(p)
    if any(revoke.values()):
        return replace(member, state=S.UNREVOKED_PARTITIONS, assigned=clean(keep), pending_revocation=clean(revoke))
    for tid, ps in gain.items():
        keep.setdefault(tid, set()).update(ps)
    return replace(member, state=S.UNRELEASED_PARTITIONS if unreleased else S.STABLE,
                   previous_member_epoch=member.member_epoch, member_epoch=target_epoch,
                   assigned=clean(keep), pending_revocation={})


def _holds_any(owned: Assignment, partitions: Assignment) -> bool:
    return any(owned.get(tid, frozenset()) & ps for tid, ps in partitions.items())
