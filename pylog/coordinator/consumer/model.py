"""A KIP-848 consumer group as plain data: Kafka's ConsumerGroup and ConsumerGroupMember, without behaviour."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

Assignment = dict[uuid.UUID, frozenset[int]]  # topic id -> partitions
TopicsView = dict[str, tuple[uuid.UUID, int]]  # topic name -> (id, partition count), from the broker's metadata

LEAVE_EPOCH = -1  # MemberEpoch of a member that leaves
STATIC_LEAVE_EPOCH = -2  # MemberEpoch of a static member that leaves and will come back (keeps its assignment)


class MemberState(enum.IntEnum):
    """Kafka's MemberState (the State of ConsumerGroupCurrentMemberAssignmentValue)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1  # must give up `pending_revocation` before it moves to the new epoch
    UNRELEASED_PARTITIONS = 2  # at the target epoch, waiting for partitions other members still own
    UNKNOWN = 127


@dataclass(frozen=True, slots=True)
class ClassicMeta:
    """A member served through JoinGroup/SyncGroup (a classic consumer in a consumer group, during an upgrade or a
    downgrade): its session timeout and the protocols (name, subscription bytes) its JoinGroup listed."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]


@dataclass(slots=True)
class Member:
    """One consumer of the group, as the coordinator knows it."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_names: tuple[str, ...] = ()
    subscribed_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = 300000
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    classic: ClassicMeta | None = None  # None: it speaks ConsumerGroupHeartbeat


@dataclass(slots=True)
class ConsumerGroup:
    """The group: its epoch (bumped when membership or subscriptions change), the target assignment and the
    epoch it was computed at, and the members."""

    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = ""
    members: dict[str, Member] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)  # member id -> its target partitions
    subscribed_topics: dict[uuid.UUID, tuple[str, int]] = field(default_factory=dict)  # id -> (name, partitions)

    def state(self) -> str:
        """Kafka's ConsumerGroupState name."""
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(m.member_epoch != self.assignment_epoch or m.state != MemberState.STABLE
               for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def static_member(self, instance_id: str) -> Member | None:
        """The member holding this group.instance.id, if any."""
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def owners(self, excluding: str) -> dict[tuple[uuid.UUID, int], str]:
        """Which member still owns each partition (assigned or pending revocation), other members only."""
        out: dict[tuple[uuid.UUID, int], str] = {}
        for m in self.members.values():
            if m.member_id == excluding:
                continue
            for parts in (m.assigned, m.pending_revocation):
                for tid, ps in parts.items():
                    for p in ps:
                        out[(tid, p)] = m.member_id
        return out


def count(a: Assignment) -> int:
    """How many partitions an assignment holds."""
    return sum(len(ps) for ps in a.values())


def clean(a: dict[uuid.UUID, set[int] | frozenset[int]]) -> Assignment:
    """An assignment without empty topics, frozen."""
    return {t: frozenset(ps) for t, ps in a.items() if ps}
