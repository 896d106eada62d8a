"""Online migration between the classic and the consumer protocol (KIP-848, `group.consumer.migration.policy`).

Upgrade: a non-empty classic group whose members use the embedded consumer protocol becomes a consumer group when
a consumer-protocol member joins it (Kafka's ConsumerGroup.fromClassicGroup): the group epoch and every member's
epoch take the classic generation, each member keeps the partitions of its last SyncGroup as both its current and
target assignment, and keeps being served through JoinGroup/SyncGroup/Heartbeat (classic.py). Downgrade: when
the last consumer-protocol member leaves and only classic members remain, the group becomes a classic group again
(Kafka's ClassicGroup.fromConsumerGroup): Stable at the group epoch, each member holding its target assignment,
and a rebalance starts so the classic members rejoin and their leader assigns.
"""

from __future__ import annotations

import uuid

from pylog.coordinator.consumer import records as rec
from pylog.coordinator.consumer.embedded import read_assignment, read_subscription, version_of, write_assignment
from pylog.coordinator.consumer.model import Assignment, ClassicMeta, ConsumerGroup, Member, MemberState, TopicsView
from pylog.coordinator.group.group import Group, Member as ClassicMember
from pylog.coordinator.group.state import GroupState

PROTOCOL_TYPE = "consumer"


def upgradable(group: Group, max_size: int) -> str | None:
    """Why this classic group can't become a consumer group (None: it can), the policy aside."""
    if group.protocol_type != PROTOCOL_TYPE or not group.protocol_name:
        return f"Group {group.group_id} does not use the consumer embedded protocol"
    if len(group.members) > max_size:
        return f"Group {group.group_id} has more members than group.consumer.max.size"
    return None


def from_classic(group: Group, topics: TopicsView) -> ConsumerGroup:
    """The consumer group a classic group becomes (raises EmbeddedProtocolError for unreadable subscriptions)."""
    cg = ConsumerGroup(group.group_id, group_epoch=group.generation, assignment_epoch=group.generation)
    for m in group.members.values():
        # a member that joined a rebalance in progress may not list the last generation's protocol
        sub = read_subscription(dict(m.protocols).get(group.protocol_name or "") or m.protocols[0][1])
        assigned = by_id(read_assignment(m.assignment), topics)
        cg.members[m.member_id] = Member(
            m.member_id, instance_id=m.instance_id, rack_id=sub.rack_id, client_id=m.client_id,
            client_host=m.client_host, subscribed_names=tuple(sorted(sub.topics)),
            rebalance_timeout_ms=m.rebalance_timeout_ms, member_epoch=group.generation,
            previous_member_epoch=group.generation, state=MemberState.STABLE, assigned=assigned,
            classic=ClassicMeta(m.session_timeout_ms, tuple(m.protocols)))
        cg.target[m.member_id] = assigned
    names = {n for m in cg.members.values() for n in m.subscribed_names}
    cg.subscribed_topics = {topics[n][0]: (n, topics[n][1]) for n in names if n in topics}
    return cg


def consumer_records(cg: ConsumerGroup) -> list[rec.Record]:
    """Every record of a consumer group made by an upgrade (Kafka's createConsumerGroupRecords)."""
    out = [rec.member_metadata_record(cg.group_id, m) for m in cg.members.values()]
    out += [rec.group_epoch_record(cg), rec.partition_metadata_record(cg)]
    out += [rec.target_member_record(cg.group_id, mid, a) for mid, a in cg.target.items()]
    out.append(rec.target_epoch_record(cg))
    return out + [rec.current_assignment_record(cg.group_id, m) for m in cg.members.values()]


def to_classic(cg: ConsumerGroup, leaving: str) -> Group:
    """The classic group a consumer group of classic members becomes once `leaving` is gone (Stable, to rebalance)."""
    g = Group(cg.group_id, state=GroupState.STABLE, generation=cg.group_epoch, protocol_type=PROTOCOL_TYPE)
    for mid, m in cg.members.items():
        if mid == leaving or m.classic is None:
            continue
        protocols = list(m.classic.protocols)
        g.add(ClassicMember(mid, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                            m.classic.session_timeout_ms, PROTOCOL_TYPE, protocols))
    g.protocol_name = g.select_protocol()
    for mid, cm in g.members.items():
        cm.assignment = assignment_bytes(cg, cg.target.get(mid, {}), cm.protocols)
    return g


def by_id(partitions: dict[str, list[int]], topics: TopicsView) -> Assignment:
    """Partitions by topic name to partitions by topic id (topics that no longer exist are left out)."""
    out: dict[uuid.UUID, frozenset[int]] = {}
    for name, ps in partitions.items():
        if name in topics and ps:
            out[topics[name][0]] = frozenset(ps)
    return out


def assignment_bytes(cg: ConsumerGroup, a: Assignment, protocols: list[tuple[str, bytes]] | tuple) -> bytes:
    """A member's partitions as the ConsumerProtocolAssignment its first protocol's version reads."""
    names = {tid: name for tid, (name, _) in cg.subscribed_topics.items()}
    version = version_of(protocols[0][1]) if protocols else 0
    return write_assignment({names[t]: sorted(ps) for t, ps in a.items() if t in names}, version)
