"""Leader election strategies: pure functions from (assignment, ISR, live brokers) to a decision.

No I/O, no logging, no clocks: the controller applies the result and says what happened.
Each function walks replicas in assignment order, so the preferred replica (the first one) wins
whenever it is eligible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Sequence


@dataclass(frozen=True, slots=True)
class Election:
    """An elected leader with the ISR that goes with it; `unclean` when it came from outside the ISR."""

    leader: int
    isr: tuple[int, ...]
    unclean: bool = False


def offline_leader(assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int],
                   unclean_enabled: bool) -> Election | None:
    """The leader lost (or never had one): the first live ISR member, else unclean if allowed."""
    for r in assignment:
        if r in live and r in isr:
            return Election(r, tuple(x for x in isr if x in live))
    if unclean_enabled:
        for r in assignment:
            if r in live:
                return Election(r, (r,), unclean=True)
    return None


def reassignment_leader(target: Sequence[int], isr: Sequence[int], live: AbstractSet[int]) -> Election | None:
    """During a reassignment: the first live ISR member of the target replica set."""
    for r in target:
        if r in live and r in isr:
            return Election(r, tuple(isr))
    return None


def preferred_leader(assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int]) -> Election | None:
    """The first assigned replica, if it is live and in the ISR."""
    if assignment and assignment[0] in live and assignment[0] in isr:
        return Election(assignment[0], tuple(isr))
    return None


def controlled_shutdown_leader(assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int],
                               shutting_down: AbstractSet[int]) -> Election | None:
    """Move leadership off shutting-down brokers, to the first live ISR member that stays."""
    for r in assignment:
        if r in live and r in isr and r not in shutting_down:
            return Election(r, tuple(x for x in isr if x not in shutting_down))
    return None


def remove_from_isr(leader: int, isr: Sequence[int], replica: int) -> tuple[int, tuple[int, ...]]:
    """A replica went offline: drop it from the ISR, and the leadership if it held it.

    The ISR never becomes empty: the last member stays, so an unclean election can later tell
    which replica had the committed data (Kafka keeps it the same way).
    """
    new_isr = tuple(isr) if len(isr) <= 1 else tuple(r for r in isr if r != replica)
    return (-1 if leader == replica else leader), new_isr
