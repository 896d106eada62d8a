"""Preferred-leader balance by reordering replicas only (moves no data).

Per topic each broker leads floor(P/n) or ceil(P/n) of its P partitions (exactly P mod n brokers the ceil), and
overall floor or ceil of all partitions over the n brokers. Topics are assigned largest first: each partition
keeps its leader while that broker has room in the topic and overall, else takes the replica with the fewest
leaderships overall; a partition whose replicas are all full in its topic gets one through an augmenting path
inside the topic. Then brokers above the overall ceil (or below the floor) hand leaderships along paths
broker -> partition it leads -> another replica, each step moving a topic's ceil slot from one broker to another,
so every topic stays within one. Where a topic or the whole cannot be balanced, the counts say how far off.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["LeaderResult", "balance_leaders"]


@dataclass(slots=True)
class LeaderResult:
    """What could not be balanced."""

    overall_left: int = 0                              # leaderships beyond the overall floor/ceil bounds
    topics_unbalanced: list[str] = field(default_factory=list)  # topics whose replicas allow no within-one spread


class _Topic:
    __slots__ = ("lo", "r", "at_hi", "cnt", "loose")

    def __init__(self, n_parts: int, n: int) -> None:
        self.lo, self.r = divmod(n_parts, n)
        self.at_hi = 0
        self.cnt: dict[int, int] = {}
        self.loose = False  # within one is impossible: any shift that does not widen the spread is allowed

    def room(self, b: int) -> bool:
        """May b lead one more (up to the ceil; brokers left below the floor are filled afterwards)?"""
        return self.cnt.get(b, 0) < self.lo + (self.r > 0)

    def add(self, b: int, delta: int) -> None:
        c = self.cnt.get(b, 0)
        if delta > 0 and c == self.lo:
            self.at_hi += 1
        elif delta < 0 and c == self.lo + 1:
            self.at_hi -= 1
        self.cnt[b] = c + delta

    def may_shift(self, a: int, c: int) -> bool:
        """May one leadership move from a to c keeping the topic within one (or not wider, when loose)?"""
        ca, cc = self.cnt.get(a, 0), self.cnt.get(c, 0)
        if self.loose:
            return ca > cc + 1
        return self.r > 0 and ca == self.lo + 1 and cc == self.lo


def balance_leaders(topic_parts: Mapping[str, Sequence[int]], replicas: Sequence[list[int]],
                    brokers: Sequence[int]) -> LeaderResult:
    """Reorder `replicas` in place so preferred leaders are balanced per topic and overall."""
    n = len(brokers)
    targets = set(brokers)
    total = sum(len(idx) for idx in topic_parts.values())
    floor, extra = divmod(total, n)
    cap = floor + (extra > 0)
    overall = {b: 0 for b in brokers}
    topic_of: dict[int, str] = {}
    state: dict[str, _Topic] = {}
    led_by: dict[int, list[int]] = {b: [] for b in brokers}   # filled after the topic phase, then lazily
    result = LeaderResult()
    base = {i: list(replicas[i]) for idx in topic_parts.values() for i in idx}  # order to keep for followers

    def lead(i: int, b: int) -> None:
        reps = replicas[i]
        if reps[0] != b:
            reps[:] = [b] + [x for x in base[i] if x != b]
        overall[b] += 1
        state[topic_of[i]].add(b, 1)

    def unlead(i: int) -> None:
        b = replicas[i][0]
        overall[b] -= 1
        state[topic_of[i]].add(b, -1)

    # Most constrained first: a broker's need (leaderships it still lacks for the ceil) over the partitions
    # it still could lead; brokers holding few replicas (new ones) get their share before the others fill up.
    avail = {b: 0 for b in brokers}
    for idx in topic_parts.values():
        for i in idx:
            for b in replicas[i]:
                if b in avail:
                    avail[b] += 1
    for topic in sorted(topic_parts, key=lambda t: (-len(topic_parts[t]), t)):
        idx = topic_parts[topic]
        ts = state[topic] = _Topic(len(idx), n)
        led: dict[int, list[int]] = {}   # this topic's partitions per leader
        stuck = []
        cnt = ts.cnt
        hi = ts.lo + (ts.r > 0)
        for i in idx:
            topic_of[i] = topic
            reps = replicas[i]
            best = None
            best_key = None
            for pos, b in enumerate(reps):
                left = avail.get(b)
                if left is None:
                    continue  # not a target broker
                avail[b] = left - 1
                if cnt.get(b, 0) < hi:
                    key = ((cap - overall[b]) / left, pos == 0, -pos)
                    if best_key is None or key > best_key:
                        best, best_key = b, key
            if best is None:
                if any(b in targets for b in reps):
                    stuck.append(i)
                continue
            lead(i, best)
            led.setdefault(best, []).append(i)
        for i in stuck:
            path = _topic_path(i, replicas, ts, led, targets)
            if path is None:
                ts.loose = True
                b = min((b for b in replicas[i] if b in targets), key=lambda b: (ts.cnt.get(b, 0), overall[b], b))
                lead(i, b)
                led.setdefault(b, []).append(i)
                continue
            for j, b in path:  # each step frees its broker for the next; the last one is i itself
                if j != i:
                    led[replicas[j][0]].remove(j)
                    unlead(j)
                lead(j, b)
                led.setdefault(b, []).append(j)
        # Brokers below the floor take a leadership from a broker at the ceil, along a path in the topic.
        for d in brokers if ts.lo else ():
            while not ts.loose and ts.cnt.get(d, 0) < ts.lo:
                path = _fill_path(d, replicas, ts, led, targets)
                if path is None:
                    ts.loose = True
                    break
                for j, b in path:
                    led[replicas[j][0]].remove(j)
                    unlead(j)
                    lead(j, b)
                    led.setdefault(b, []).append(j)
        for b, lst in led.items():
            if b in led_by:
                led_by[b].extend(lst)
        if ts.loose:
            result.topics_unbalanced.append(topic)

    # Overall: brokers above the ceil give leaderships away, then brokers below the floor take some.
    for phase in (0, 1):
        while True:
            if phase == 0:
                sources = [b for b in brokers if overall[b] > cap]
                sinks = {b for b in brokers if overall[b] < cap}
            else:
                sinks = {b for b in brokers if overall[b] < floor}
                sources = [b for b in brokers if overall[b] >= cap and overall[b] > floor] if sinks else []
            if not sources or not sinks:
                break
            path = _overall_path(sources, sinks, replicas, state, led_by, topic_of)
            if path is None:
                break
            for j, b in path:
                unlead(j)
                lead(j, b)
                led_by[b].append(j)
    # Fewer leader changes: give a partition its leader back where the counts allow it, directly or by
    # swapping with a partition of the same topic its old leader now leads and the new leader replicates
    # (counts unchanged).
    by_pair: dict[tuple[str, int, int], list[int]] = {}
    for topic, idx in topic_parts.items():
        for q in idx:
            reps = replicas[q]
            if reps[0] != base[q][0]:  # only partitions whose leader changed may be swapped at no cost
                for f in reps[1:]:
                    by_pair.setdefault((topic, reps[0], f), []).append(q)
    for topic, idx in topic_parts.items():
        ts = state[topic]
        for i in idx:
            a, b = base[i][0], replicas[i][0]
            if a == b or a not in led_by or a not in replicas[i]:
                continue
            if ts.may_shift(b, a) and overall[a] < cap and overall[b] > floor:
                unlead(i)
                lead(i, a)
                continue
            for q in by_pair.get((topic, a, b), ()):
                if replicas[q][0] != a or q == i or b not in replicas[q]:
                    continue
                unlead(i)
                unlead(q)
                lead(i, a)
                lead(q, b)
                if base[q][0] != b:
                    for f in replicas[q][1:]:
                        by_pair.setdefault((topic, b, f), []).append(q)
                break
    result.overall_left = sum(max(0, overall[b] - cap, floor - overall[b]) for b in brokers)
    result.topics_unbalanced.sort()
    return result


def _led(b: int, led_by: Mapping[int, list[int]], replicas: Sequence[list[int]]) -> list[int]:
    """Partitions b leads now (drops stale entries)."""
    lst = led_by[b]
    fresh = [i for i in dict.fromkeys(lst) if replicas[i][0] == b]
    if len(fresh) != len(lst):
        lst[:] = fresh
    return lst


def _path(starts: Mapping[int, tuple[int, int] | None],
          steps_from: Callable[[int, Mapping[int, tuple[int, int] | None]], Iterable[tuple[int, int]]],
          is_end: Callable[[int], bool]) -> list[tuple[int, int]] | None:
    """Breadth-first over brokers: `steps_from(a, parents)` yields (partition a leads, broker that may take
    it over). Returns the steps (partition, new leader) back from the first broker where `is_end`, or None.
    A start's parent is None, or (partition, -1) when the start itself takes that partition."""
    parent = dict(starts)
    queue = deque(parent)
    while queue:
        a = queue.popleft()
        for j, c in steps_from(a, parent):
            if c in parent:
                continue
            parent[c] = (j, a)
            if is_end(c):
                steps = []
                node = c
                while parent[node] is not None:
                    j2, prev = parent[node]
                    steps.append((j2, node))
                    if prev == -1:
                        break
                    node = prev
                return steps
            queue.append(c)
    return None


def _topic_path(i: int, replicas: Sequence[list[int]], ts: _Topic, led: Mapping[int, list[int]],
                targets: set[int]) -> list[tuple[int, int]] | None:
    """Steps (partition, new leader) giving partition i a leader within its topic's bounds, or None.

    The first step frees room at the path's end; each next one frees the broker the one before took."""
    def steps_from(b: int, _parents) -> Iterable[tuple[int, int]]:
        return ((j, c) for j in led.get(b, ()) for c in replicas[j][1:] if c in targets)
    return _path({b: (i, -1) for b in replicas[i] if b in targets}, steps_from, ts.room)


def _fill_path(d: int, replicas: Sequence[list[int]], ts: _Topic, led: Mapping[int, list[int]],
               targets: set[int]) -> list[tuple[int, int]] | None:
    """Steps (partition, new leader) moving one of the topic's leaderships from a broker above the floor to d."""
    def steps_from(b: int, _parents) -> Iterable[tuple[int, int]]:
        return ((j, c) for j in led.get(b, ()) for c in replicas[j][1:] if c in targets)
    return _path({b: None for b, c in ts.cnt.items() if c > ts.lo and b in targets}, steps_from,
                 lambda c: c == d)


def _overall_path(sources: Sequence[int], sinks: set[int], replicas: Sequence[list[int]],
                  state: Mapping[str, _Topic], led_by: Mapping[int, list[int]],
                  topic_of: Mapping[int, str]) -> list[tuple[int, int]] | None:
    """Steps (partition, new leader) moving one leadership from a source broker to a sink, topics kept valid."""
    def steps_from(a: int, parents: Mapping[int, tuple[int, int] | None]) -> Iterable[tuple[int, int]]:
        used = set()  # topics already shifted on the way to a: a second shift would see stale counts
        node = a
        while parents[node] is not None:
            used.add(topic_of[parents[node][0]])
            node = parents[node][1]
        for j in _led(a, led_by, replicas):
            ts = state[topic_of[j]]
            if topic_of[j] not in used:
                for c in replicas[j][1:]:
                    if c in led_by and ts.may_shift(a, c):
                        yield j, c
    return _path({s: None for s in sources}, steps_from, lambda c: c in sinks)
