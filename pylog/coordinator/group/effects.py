"""What the group coordinator's decisions ask the shell to do, in order (decisions.py returns them).

Timers are named by key: ("hb", group, member) a member's session, ("join", group) the join phase,
("pending", group, member) a KIP-394 member id handed out but not yet used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from pylog.coordinator.group.api import JoinResult, SyncResult
from pylog.coordinator.group.group import Group, Member
from pylog.protocol.errors import ErrorCode

TimerKey = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ParkJoin:
    """The member's JoinGroup waits for the end of the join phase."""

    member_id: str


@dataclass(frozen=True, slots=True)
class ParkSync:
    """The member's SyncGroup waits for the leader's assignment."""

    member_id: str


@dataclass(frozen=True, slots=True)
class ReplyJoin:
    """Answer the member's parked JoinGroup (an ErrorCode alone: the error with the requester's member id)."""

    member_id: str
    result: JoinResult | ErrorCode


@dataclass(frozen=True, slots=True)
class ReplySync:
    """Answer the member's parked SyncGroup."""

    member_id: str
    result: SyncResult


@dataclass(frozen=True, slots=True)
class SetTimer:
    """(Re)start the timer under `key`; when it fires the shell asks `timer_fired`."""

    key: TimerKey
    delay_ms: int


@dataclass(frozen=True, slots=True)
class CancelTimer:
    """Stop the timer under `key` if it is set."""

    key: TimerKey


@dataclass(frozen=True, slots=True)
class Persist:
    """Write the group's metadata record; `assignment`: report the outcome through `assignment_stored`."""

    generation: int
    assignment: bool = False


@dataclass(frozen=True, slots=True)
class Note:
    """A line for the coordinator's log; `rebalance`: the line says a rebalance completed (a metric counts it)."""

    text: str
    rebalance: bool = False


Effect = Union[ParkJoin, ParkSync, ReplyJoin, ReplySync, SetTimer, CancelTimer, Persist, Note]


@dataclass(slots=True)
class Decision:
    """The answer (None: the request parked) and the effects, in order; `created`: a new group to keep."""

    reply: Any = None
    effects: list[Effect] = field(default_factory=list)
    created: Group | None = None


def session_timer(group: Group, m: Member) -> SetTimer:
    """(Re)start a member's session timer."""
    return SetTimer(("hb", group.group_id, m.member_id), m.session_timeout_ms)
