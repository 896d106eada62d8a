"""The broker-side assignors of KIP-848 (`group.consumer.assignors`): `uniform` (Kafka's default) and `range`.

Both take the members' subscriptions (topic ids each member may get) and the partition counts, and
return every member's target. `uniform` spreads partitions evenly and keeps each member's previous
target where that stays balanced, so a join or a leave moves only what it must; `range` gives each
member a contiguous range of every topic it subscribes to (members in id order), as the classic
RangeAssignor does, so co-partitioned topics line up.
"""

from __future__ import annotations

import uuid
from typing import Callable

from pylog.coordinator.consumer.model import Assignment, clean

Subscriptions = dict[str, frozenset[uuid.UUID]]  # member id -> the topic ids it subscribes to
Partitions = dict[uuid.UUID, int]  # topic id -> partition count
Assignor = Callable[[Subscriptions, Partitions, dict[str, Assignment]], dict[str, Assignment]]


def uniform(subs: Subscriptions, partitions: Partitions, previous: dict[str, Assignment]) -> dict[str, Assignment]:
    """Balanced and sticky: a member keeps its previous partitions up to its fair share (rounded down), then
    up to one more while such extra slots remain; the rest go to the eligible member with the fewest."""
    out: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in subs}
    load = dict.fromkeys(subs, 0)
    eligible = {t: sorted(m for m, ts in subs.items() if t in ts) for t in partitions}
    floor = _floors(subs, eligible, partitions)
    extras = sum(n for t, n in partitions.items() if eligible[t]) - sum(floor.values())
    prev_owner = {(t, p): m for m, a in previous.items() if m in subs for t, ps in a.items() for p in ps}
    todo = [(t, p) for t in sorted(partitions, key=str) for p in range(partitions[t])]

    def give(m: str, t: uuid.UUID, p: int) -> None:
        out[m].setdefault(t, set()).add(p)
        load[m] += 1

    rest = []
    for t, p in todo:
        m = prev_owner.get((t, p))
        if m is not None and t in subs[m] and load[m] < floor[m]:
            give(m, t, p)
        else:
            rest.append((t, p))
    later = []
    for t, p in rest:  # one extra partition each, for previous owners, while extra slots last
        m = prev_owner.get((t, p))
        if m is not None and t in subs[m] and load[m] == floor[m] and extras > 0:
            give(m, t, p)
            extras -= 1
        else:
            later.append((t, p))
    for t, p in later:
        if eligible[t]:
            give(min(eligible[t], key=lambda x: (load[x] - floor[x], load[x], x)), t, p)
    return {m: clean(a) for m, a in out.items()}


def _floors(subs: Subscriptions, eligible: dict[uuid.UUID, list[str]], partitions: Partitions) -> dict[str, int]:
    """Each member's fair share rounded down: its part of every topic it subscribes to (exact when all
    members subscribe to the same topics)."""
    share = dict.fromkeys(subs, 0.0)
    for t, ms in eligible.items():
        for m in ms:
            share[m] += partitions[t] / len(ms)
    return {m: int(s + 1e-9) for m, s in share.items()}


def range_(subs: Subscriptions, partitions: Partitions, previous: dict[str, Assignment]) -> dict[str, Assignment]:
    """Per topic, the subscribed members in id order each get a contiguous range (the first ones one more)."""
    out: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in subs}
    for t in sorted(partitions, key=str):
        ms = sorted(m for m, ts in subs.items() if t in ts)
        if not ms:
            continue
        n = partitions[t]
        per, extra = divmod(n, len(ms))
        start = 0
        for i, m in enumerate(ms):
            size = per + (1 if i < extra else 0)
            if size:
                out[m][t] = set(range(start, start + size))
            start += size
    return {m: clean(a) for m, a in out.items()}


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
