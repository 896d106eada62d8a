"""A state machine as data (each state's legal previous states) plus one checked transition.

The coordinators' machines (classic groups, transactions) raise on a transition their table refuses: it is a
bug in the coordinator, never a client error. The controller's partition and replica machines have another
shape on purpose (controller/states.py): they move many items at once and log a refused item instead of
raising, as Kafka's controller does; they can ask `allows` for the same rule.
"""

from __future__ import annotations

from typing import Callable, Generic, Hashable, Mapping, TypeVar

S = TypeVar("S", bound=Hashable)


class IllegalStateTransition(Exception):
    """A transition the state table does not allow: a coordinator bug, never a client error."""


class StateTable(Generic[S]):
    """Which states each state may be entered from, for one kind of thing (`subject`, as messages name it)."""

    def __init__(self, subject: str, previous: Mapping[S, frozenset[S]], name: Callable[[S], str]) -> None:
        self.subject, self.previous, self.name = subject, previous, name

    def allows(self, current: S, target: S) -> bool:
        """Whether `target` may be entered from `current`."""
        return current in self.previous[target]

    def transition(self, current: S, target: S) -> S:
        """`target` if the table allows coming to it from `current`; raises IllegalStateTransition otherwise."""
        if not self.allows(current, target):
            raise IllegalStateTransition(
                f"{self.subject} cannot transition to {self.name(target)} from {self.name(current)}")
        return target
