"""Preferred-leader balance by reordering replicas only (moves no data).

Per topic each broker leads floor(P/n) partitions, plus one on `P mod n` brokers; those extra slots are dealt
to the brokers with the fewest extra leaderships so far (which keeps the overall counts within one as well),
preferring brokers that lead one already so that fewer leaders change. Leadership is then shifted from brokers
above their quota to replicas below it, along augmenting paths (broker -> partition it leads -> another
replica of it) when no direct shift exists.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

__all__ = ["balance_leaders"]


def _leader_extras(topic_parts: Mapping[str, Sequence[int]], replicas: Sequence[list[int]],
                   brokers: Sequence[int]) -> dict[str, set[int]]:
    n = len(brokers)
    target_set = set(brokers)
    running = {b: 0 for b in brokers}
    order = sorted(topic_parts, key=lambda t: (-(len(topic_parts[t]) % n), t))
    result: dict[str, set[int]] = {}
    for topic in order:
        idx = topic_parts[topic]
        base, extra = divmod(len(idx), n)
        if extra == 0:
            result[topic] = set()
            continue
        held: dict[int, int] = {}
        leads: dict[int, int] = {}
        for i in idx:
            reps = replicas[i]
            leads[reps[0]] = leads.get(reps[0], 0) + 1
            for b in reps:
                held[b] = held.get(b, 0) + 1
        eligible = [b for b in (brokers if base else held) if held.get(b, 0) > base and b in target_set]
        eligible.sort(key=lambda b: (running[b], -(leads.get(b, 0) > base), b))
        chosen = set(eligible[:extra])
        if len(chosen) < extra:  # too few brokers hold enough of this topic: best effort
            rest = sorted((b for b in brokers if b not in chosen), key=lambda b: (running[b], b))
            chosen.update(rest[:extra - len(chosen)])
        for b in chosen:
            running[b] += 1
        result[topic] = chosen
    return result


def balance_leaders(topic_parts: Mapping[str, Sequence[int]], replicas: Sequence[list[int]],
                    brokers: Sequence[int], max_path_searches: int = 100_000) -> int:
    """Reorder `replicas` in place so preferred leaders are balanced; returns the units left unbalanced."""
    extras = _leader_extras(topic_parts, replicas, brokers)
    n = len(brokers)
    unbalanced = 0
    searches = 0
    for topic in sorted(topic_parts):
        idx = topic_parts[topic]
        base = len(idx) // n
        chosen = extras[topic]

        def quota(b: int) -> int:
            return base + (b in chosen)

        leads: dict[int, int] = {}
        led_by: dict[int, list[int]] = {}
        for i in idx:
            lead = replicas[i][0]
            leads[lead] = leads.get(lead, 0) + 1
            led_by.setdefault(lead, []).append(i)

        def shift(i: int, to: int) -> None:
            reps = replicas[i]
            frm = reps[0]
            reps.remove(to)
            reps.insert(0, to)
            leads[frm] -= 1
            leads[to] = leads.get(to, 0) + 1
            led_by.setdefault(to, []).append(i)

        over = sorted((b for b in leads if leads[b] > quota(b)), key=lambda b: (quota(b) - leads[b], b))
        for a in over:
            for i in list(led_by.get(a, ())):
                if leads[a] <= quota(a):
                    break
                reps = replicas[i]
                if reps[0] != a:
                    continue
                best = None
                for b in reps[1:]:
                    room = quota(b) - leads.get(b, 0)
                    if room > 0 and (best is None or room > best[0]):
                        best = (room, b)
                if best is not None:
                    shift(i, best[1])
        # Longer augmenting paths for what a direct shift could not fix.
        for a in over:
            while leads[a] > quota(a) and searches < max_path_searches:
                searches += 1
                path = _augmenting_path(a, replicas, led_by, leads, quota)
                if path is None:
                    break
                for i, to in path:
                    shift(i, to)
            unbalanced += max(0, leads[a] - quota(a))
    return unbalanced


def _augmenting_path(start: int, replicas: Sequence[list[int]], led_by: Mapping[int, list[int]],
                     leads: Mapping[int, int], quota) -> list[tuple[int, int]] | None:
    # BFS over brokers: an edge a -> b exists through a partition a leads and b replicates.
    parent: dict[int, tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        a = queue.popleft()
        for i in led_by.get(a, ()):
            reps = replicas[i]
            if reps[0] != a:
                continue
            for b in reps[1:]:
                if b in parent:
                    continue
                parent[b] = (i, a)
                if leads.get(b, 0) < quota(b):
                    path = []
                    node = b
                    while parent[node] is not None:
                        i2, prev = parent[node]
                        path.append((i2, node))
                        node = prev
                    # Apply from the start of the path so each partition's leader is still the expected one.
                    return list(reversed(path))
                queue.append(b)
    return None
