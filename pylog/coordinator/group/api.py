"""The typed seam the broker's handlers use: what they pass to the coordinator and get back."""

from __future__ import annotations

from dataclasses import dataclass, field

from pylog.coordinator.group.records import OffsetValue
from pylog.protocol.errors import ErrorCode

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class CoordinatorConfig:
    """The broker's group coordinator settings (Kafka's keys and defaults)."""

    initial_rebalance_delay_ms: int = 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    max_size: int = 2**31 - 1
    metadata_max_bytes: int = 4096
    retention_ms: int = 10080 * 60000

    @classmethod
    def from_broker(cls, get) -> "CoordinatorConfig":
        """The settings from a broker config's `get(key)`."""
        return cls(int(get("group.initial.rebalance.delay.ms")), int(get("group.min.session.timeout.ms")),
                   int(get("group.max.session.timeout.ms")), int(get("group.max.size")),
                   int(get("offset.metadata.max.bytes")), int(get("offsets.retention.minutes")) * 60000)


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """A JoinGroup, version-independent."""

    group_id: str
    member_id: str
    instance_id: str | None
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    client_id: str
    client_host: str
    require_known_member_id: bool  # JoinGroup v4+ (KIP-394)


@dataclass(slots=True)
class JoinResult:
    """A JoinGroup answer; `members` (id, instance id, metadata) only for the leader."""

    error: ErrorCode
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    member_id: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


@dataclass(slots=True)
class SyncResult:
    """A SyncGroup answer."""

    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True, slots=True)
class MemberSummary:
    """One member in DescribeGroups."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(slots=True)
class GroupSummary:
    """DescribeGroups' view of one group."""

    group_id: str
    error: ErrorCode
    state: str = "Dead"
    protocol_type: str = ""
    protocol_name: str = ""
    members: list[MemberSummary] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CommitRequest:
    """An OffsetCommit, version-independent (generation -1 and no member: a simple/admin commit)."""

    group_id: str
    generation: int
    member_id: str
    instance_id: str | None
    offsets: dict[TopicPartition, OffsetValue]


@dataclass(slots=True)
class FetchResult:
    """OffsetFetch for one group: a group-level error or an offset per partition (-1 when none)."""

    error: ErrorCode
    offsets: dict[TopicPartition, OffsetValue] = field(default_factory=dict)
    # UNSTABLE_OFFSET_COMMIT (require_stable): a commit is pending; `offsets` still holds the last committed one
    unstable: set[TopicPartition] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class TxnCommitRequest:
    """A TxnOffsetCommit, version-independent (generation -1 and no member before v3: no fencing)."""

    group_id: str
    producer_id: int
    producer_epoch: int
    generation: int
    member_id: str
    instance_id: str | None
    offsets: dict[TopicPartition, OffsetValue]
