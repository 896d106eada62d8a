"""Kafka's classic group states as data (the states each may follow) plus one transition function.

  Empty               -> PreparingRebalance   a member joins
  PreparingRebalance  -> CompletingRebalance  every expected member joined (or the join timer fired)
  PreparingRebalance  -> Empty                the join phase ended with no members left
  CompletingRebalance -> Stable               the leader's SyncGroup brought the assignment
  CompletingRebalance -> PreparingRebalance   a join with new metadata, a leave or a failed member
  Stable              -> PreparingRebalance   a member joins, leaves, changes metadata or expires
  any                 -> Dead                 the group was deleted or its partition unloaded
"""

from __future__ import annotations

import enum

# IllegalStateTransition is named from here too: the one class, whose transition raised it.
from pylog.common.states import IllegalStateTransition, StateTable  # noqa: F401


class GroupState(enum.Enum):
    """A classic group's state; the value is Kafka's name (DescribeGroups, ListGroups)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = GroupState

PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    S.EMPTY: frozenset({S.PREPARING_REBALANCE}),
    S.PREPARING_REBALANCE: frozenset({S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY}),
    S.COMPLETING_REBALANCE: frozenset({S.PREPARING_REBALANCE}),
    S.STABLE: frozenset({S.COMPLETING_REBALANCE}),
    S.DEAD: frozenset(GroupState),
}


TABLE = StateTable("Group", PREVIOUS, lambda s: s.value)
# `target` if the table allows coming to it from `current`; raises IllegalStateTransition otherwise.
transition = TABLE.transition


def parse_state(name: str) -> GroupState | None:
    """A state from its Kafka name, case-insensitively (ListGroups' states filter); None if unknown."""
    for s in GroupState:
        if s.value.lower() == name.lower():
            return s
    return None
