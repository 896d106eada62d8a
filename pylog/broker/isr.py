"""The leader's ISR decision as one pure function: who fell out of sync, who caught up, the new ISR.

A follower falls out of the ISR when it has not caught up to the leader's log end within
replica.lag.time.max.ms (Kafka's lastCaughtUpTimeMs rule); an assigned follower outside it comes back
once its log end reached the high watermark and the start of this leader epoch, and it is in sync by
that same lag rule. The last part matters for a follower that stopped fetching (a kill -9'd broker): its
last fetched offset stays at the high watermark while nothing is written, and Kafka only ever weighs the
follower that is fetching right now; without it the leader put a dead follower back into the ISR at the
next fetch of a live one, right after shrinking it out. The replica manager
asks with `shrink=True` on its periodic check and with `shrink=False` after a follower's fetch (Kafka's
maybeShrinkIsr and maybeExpandIsr); it writes the answer to ZooKeeper and adopts it only if accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class FollowerState:
    """What the leader knows of one follower replica."""

    leo: int = UNKNOWN_OFFSET
    last_fetch_ms: int = 0
    last_fetch_leader_leo: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    log_start_offset: int = UNKNOWN_OFFSET  # from its fetches (v5+); DeleteRecords waits on it


@dataclass(frozen=True)
class IsrChange:
    """A new ISR and why: the members that lag (removed) and the followers that caught up (added)."""

    isr: tuple[int, ...]
    lagging: tuple[int, ...]
    caught_up: tuple[int, ...]


def out_of_sync(leader: int, isr: Sequence[int], followers: Mapping[int, FollowerState], now_ms: int,
                max_lag_ms: int) -> list[int]:
    """ISR followers that have not caught up within `max_lag_ms` (or never fetched from this leader)."""
    out = []
    for r in isr:
        if r == leader:
            continue
        st = followers.get(r)
        if st is None or now_ms - st.last_caught_up_ms > max_lag_ms:
            out.append(r)
    return out


def caught_up(leader: int, isr: Sequence[int], replicas: Sequence[int], followers: Mapping[int, FollowerState],
              high_watermark: int, epoch_start_offset: int, now_ms: int, max_lag_ms: int) -> list[int]:
    """Assigned followers outside the ISR whose log end reached the high watermark and this epoch's start, and
    that caught up to the leader's log end within `max_lag_ms` (so the next shrink would not drop them again)."""
    out = []
    for r in replicas:
        if r == leader or r in isr:
            continue
        st = followers.get(r)
        if (st is not None and st.leo >= high_watermark and st.leo >= epoch_start_offset
                and now_ms - st.last_caught_up_ms <= max_lag_ms):
            out.append(r)
    return out


def decide_isr(leader: int, isr: Sequence[int], replicas: Sequence[int], followers: Mapping[int, FollowerState],
               high_watermark: int, epoch_start_offset: int, now_ms: int, max_lag_ms: int,
               shrink: bool = True) -> IsrChange | None:
    """The ISR the leader should propose, or None when it stays as it is; `shrink=False` only adds."""
    lagging = out_of_sync(leader, isr, followers, now_ms, max_lag_ms) if shrink else []
    joining = caught_up(leader, isr, replicas, followers, high_watermark, epoch_start_offset, now_ms, max_lag_ms)
    if not lagging and not joining:
        return None
    kept = [r for r in isr if r not in lagging]
    return IsrChange(tuple(kept + joining), tuple(lagging), tuple(joining))
