"""A classic group's membership and metadata as plain data, with the pure rules over them.

No clocks and no I/O: the coordinator's shell owns the timers and the parked requests; a member only
records whether a JoinGroup or SyncGroup of it is parked (`joining`, `syncing`), which the rules read.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field

from pylog.coordinator.group.state import GroupState, transition


@dataclass(slots=True)
class Member:
    """One member of a classic group."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    is_new: bool = False
    joining: bool = False  # a JoinGroup of this member is parked until the join phase ends
    syncing: bool = False  # a SyncGroup of this member is parked until the leader's assignment is stored

    def metadata_for(self, protocol: str) -> bytes:
        """This member's subscription metadata for one protocol."""
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise KeyError(protocol)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        """Whether a rejoin brings the same protocols (same order, same metadata)."""
        return list(self.protocols) == list(protocols)


def new_member_id(client_id: str, instance_id: str | None) -> str:
    """Kafka's member id: `<group.instance.id or client.id>-<uuid>`."""
    return f"{instance_id if instance_id else client_id}-{uuid.uuid4()}"


@dataclass(slots=True)
class Group:
    """A classic group (or a simple group that only commits offsets)."""

    group_id: str
    state: GroupState = GroupState.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_members: set[str] = field(default_factory=set)  # KIP-394: ids handed out, not yet joined
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    state_timestamp_ms: int = -1
    new_member_added: bool = False  # during the initial-rebalance delay window
    initial_delay: tuple[int, int] | None = None  # (step, ms left) while in the initial-rebalance delay

    def to(self, target: GroupState, now_ms: int) -> None:
        """Move to `target` through the state table (raises on an illegal transition)."""
        self.state = transition(self.state, target)
        self.state_timestamp_ms = now_ms

    def add(self, m: Member) -> None:
        """Add a member; the first one leads."""
        if not self.members:
            self.protocol_type = m.protocol_type
        self.members[m.member_id] = m
        if m.instance_id:
            self.static_members[m.instance_id] = m.member_id
        if self.leader_id is None:
            self.leader_id = m.member_id
        self.pending_members.discard(m.member_id)

    def remove(self, member_id: str) -> Member | None:
        """Drop a member; leadership passes to any remaining member."""
        m = self.members.pop(member_id, None)
        self.pending_members.discard(member_id)
        if m is not None and m.instance_id and self.static_members.get(m.instance_id) == member_id:
            del self.static_members[m.instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return m

    def replace_static(self, instance_id: str, old_id: str, new_id: str) -> Member:
        """KIP-345: a static member rejoined with a fresh id; the old id is fenced from now on."""
        m = self.members.pop(old_id)
        m.member_id = new_id
        self.members[new_id] = m
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        return m

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """A joiner fits if the group is empty, or it shares the type and at least one protocol with all."""
        if not self.members:
            return bool(protocol_type) and bool(protocols)
        names = {n for n, _ in protocols}
        return protocol_type == self.protocol_type and bool(names & self.candidate_protocols())

    def candidate_protocols(self) -> set[str]:
        """Protocols every member supports."""
        sets = [{n for n, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        """Kafka's vote: each member votes for its first candidate it lists; most votes wins."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = next(n for n, _ in m.protocols if n in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        order = [n for n, _ in next(iter(self.members.values())).protocols]
        return max(votes, key=lambda n: (votes[n], -order.index(n) if n in order else 0))

    def has_all_joined(self) -> bool:
        """Every member has a parked JoinGroup and no member id is still pending."""
        return not self.pending_members and all(m.joining for m in self.members.values())

    def next_generation(self, now_ms: int) -> None:
        """Close the join phase: bump the generation; CompletingRebalance, or Empty when nobody is left."""
        self.generation += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.to(GroupState.EMPTY, now_ms)
        for m in self.members.values():
            m.assignment = b""

    def rebalance_timeout_ms(self) -> int:
        """The longest rebalance timeout of the members (how long a join phase may last)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def subscribed_topics(self) -> set[str] | None:
        """The topics the members subscribe to (consumer protocol), or None when that can't be told."""
        if self.protocol_type != "consumer" or not self.protocol_name:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            parsed = consumer_subscription(m.metadata_for(self.protocol_name)) if any(
                n == self.protocol_name for n, _ in m.protocols) else None
            if parsed is None:
                return None
            topics |= parsed
        return topics


def consumer_subscription(data: bytes) -> set[str] | None:
    """The topics of a ConsumerProtocolSubscription (int16 version, then an array of strings)."""
    try:
        pos = 2
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out = set()
        for _ in range(count):
            (n,) = struct.unpack_from(">h", data, pos)
            pos += 2
            if n < 0 or pos + n > len(data):
                return None
            out.add(data[pos:pos + n].decode())
            pos += n
        return out
    except (struct.error, UnicodeDecodeError):
        return None


def consumer_assignment(data: bytes) -> list[tuple[str, int]]:
    """The partitions of a ConsumerProtocolAssignment (int16 version, [topic, [partition]]); [] if unreadable."""
    try:
        pos = 2
        (topics,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out = []
        for _ in range(max(topics, 0)):
            (n,) = struct.unpack_from(">h", data, pos)
            topic = data[pos + 2:pos + 2 + n].decode()
            pos += 2 + n
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            parts = struct.unpack_from(f">{max(count, 0)}i", data, pos)
            pos += 4 * max(count, 0)
            out += [(topic, p) for p in parts]
        return out
    except (struct.error, UnicodeDecodeError):
        return []
