"""The leadership repair's path search (leaders.py, step 2), with the per-pair scans cached.

A search steps broker a -> broker c through a partition a leads that c replicates, when the partition's group
may shift a leadership from a to c (`_Topic.may_shift`). Which partition serves a pair depends only on the pair's
index entries and the group counts at a and c, all of which change only when a or c gains or loses a
leadership. So each pair's first usable partition is kept per broker row and rescanned only for the brokers
whose counts changed since (`LeaderStage.touched`, a log of them): at 1M partitions most brokers keep their rows
from one path to the next, where scanning every pair again took most of the stage's time. The answer is the
same partition the plain scan finds, so the cache does not change plans.

Each visited broker first looks at the sinks next to it (with 1000 brokers most paths are one step, and a row
has a cell per broker): the path is as short as any, and among those sinks it takes one reached through a
partition whose leader changed already (no further change), then the sink furthest below its count.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping, Sequence, Set
from itertools import chain, islice
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pylog.planner.leaders import LeaderStage

__all__ = ["FREE_SEARCH", "PathSearch"]

FREE_SEARCH = 128  # brokers the search through changed leaders visits before it gives up (it rarely succeeds late)


UNKNOWN = object()  # a cell not scanned since its brokers' counts last changed
NO_GROUPS: frozenset[str] = frozenset()


class _Row:
    """One broker's pairs: the first usable partition per other broker (None: none; UNKNOWN), as of `stamp`."""

    __slots__ = ("version", "stamp", "cells")

    def __init__(self, version: int, stamp: int, cells: dict[int, object]) -> None:
        self.version = version
        self.stamp = stamp
        self.cells = cells


class PathSearch:
    """Breadth-first searches over brokers for the repair, one cache per index (changed leaders, all leaders).

    Valid while only `LeaderStage.lead`/`unlead` change the stage (they log the broker they touch); a new
    `PathSearch` is needed after the groups' flags change (balance_group)."""

    def __init__(self, stage: LeaderStage) -> None:
        self.stage = stage
        self.rows: dict[bool, dict[int, _Row]] = {True: {}, False: {}}
        # broker -> position in `stage.touched` when it last had no sink next to it through a partition whose
        # leader changed (the repair's sinks only shrink, so that holds until a or a broker in its row changes)
        self.no_free_sink: dict[int, int] = {}
        stage.touched.clear()

    def overall_path(self, sources: Sequence[int], source_set: Set[int], sinks: Sequence[tuple[int, int]],
                     sink_set: Set[int]) -> list[tuple[int, int]] | None:
        """Steps (partition, new leader) moving one leadership from a source broker to a sink, groups kept valid.

        `sinks` are (leaderships, broker), fewest first. First through partitions whose leader already changed (no
        more changes), within FREE_SEARCH brokers, then through any partition (preferring, next to a sink, one whose
        leader changed already)."""
        if len(sources) >= FREE_SEARCH:  # the search through changed leaders visits sources only
            path = self._free_sources(sources, sinks, sink_set)
        else:
            path = self._bfs(sources, source_set, sinks, sink_set, True)
        return path or self._bfs(sources, source_set, sinks, sink_set, False)

    def _free_sources(self, sources: Sequence[int], sinks: Sequence[tuple[int, int]], sink_set: Set[int]
                      ) -> list[tuple[int, int]] | None:
        """`_bfs(free_only=True)` when its budget ends among the sources: each source's own sink step, the ones
        known to have none skipped in one tight loop (the repair's most repeated work with 1000 brokers)."""
        touched, known, changed = self.stage.touched, self.no_free_sink, self.stage.changed_pairs
        now = len(touched)
        for a in islice(sources, FREE_SEARCH):
            stamp = known.get(a)
            if stamp is not None:
                row = changed[a]
                if not any(c == a or (c in row and c in sink_set) for c in touched[stamp:]):
                    known[a] = now
                    continue
                del known[a]
            step = self._sink_step(a, self._row(a, True), None, sinks, sink_set, NO_GROUPS)
            if step is not None:
                return [(step[1], step[0])]
        return None

    def _cell(self, a: int, c: int, free_only: bool, cells: dict[int, object], used: Set[str]) -> int | None:
        """The partition a leads that c replicates (one whose leader changed, if free_only) a path reaching a
        through groups `used` may shift to c, or None."""
        j = cells.get(c)
        if j is None:
            return None
        index = (self.stage.changed_pairs if free_only else self.stage.pairs)[a]
        if j is UNKNOWN:  # scanned once, without `used`: the first partition any path may take
            j = cells[c] = self._scan(a, c, index[c], NO_GROUPS)
            if j is None:
                return None
        if used and self.stage.group_of[j] in used:
            return self._scan(a, c, index[c], used)
        return j

    def _scan(self, a: int, c: int, led: Mapping[int, None], used: Set[str]) -> int | None:
        state, group_of = self.stage.state, self.stage.group_of
        for j in led:  # _Topic.may_shift inlined: this loop is most of the repair's time at 100 brokers
            g = group_of[j]
            if g in used:
                continue
            ts = state[g]
            if ts.free:
                return j
            ca, cc = ts.cnt.get(a, 0), ts.cnt.get(c, 0)
            if (ca > cc + 1) if ts.loose else (ts.r > 0 and ca == ts.lo + 1 and cc == ts.lo):
                return j
        return None

    def _row(self, a: int, free_only: bool) -> dict[int, object]:
        """a's cells (UNKNOWN where a or the other broker gained or lost a leadership since they were scanned)."""
        stage = self.stage
        index = (stage.changed_pairs if free_only else stage.pairs)[a]
        log, version = stage.touched, stage.version[a]
        rows = self.rows[free_only]
        row = rows.get(a)
        if row is None or row.version != version or len(log) - row.stamp > len(index):
            cells = dict.fromkeys(index, UNKNOWN)
            rows[a] = _Row(version, len(log), cells)
            return cells
        cells = row.cells
        for c in set(log[row.stamp:]):
            if c in cells:
                cells[c] = UNKNOWN
        row.stamp = len(log)
        return cells

    def _bfs(self, sources: Sequence[int], source_set: Set[int], sinks: Sequence[tuple[int, int]],
             sink_set: Set[int], free_only: bool) -> list[tuple[int, int]] | None:
        """Breadth first from the sources, a visit at a time (free_only: within FREE_SEARCH visits). The sources
        come first and their sink steps need nothing from the expansions, so all of them are tried before any
        source is expanded: the same path, without expanding sources when a later one has a sink next to it."""
        budget = FREE_SEARCH if free_only else len(self.stage.brokers) + 1
        for a in sources[:budget]:
            free = self._row(a, True)
            step = self._sink_step(a, free, None if free_only else self._row(a, False), sinks, sink_set, NO_GROUPS)
            if step is not None:
                return [(step[1], step[0])]
        budget -= len(sources)
        if budget <= 0:
            return None
        group_of = self.stage.group_of
        parent: dict[int, tuple[int, int]] = {}  # broker reached -> (partition, broker it came from); not sources
        pending: deque[int] = deque()
        for a in chain(sources, _drain(pending)):
            if a in parent:  # reached from a source: count the visit, look for a sink next to it
                if not budget:
                    break
                budget -= 1
                used = set()  # groups already shifted on the way to a: a second shift would see stale counts
                node = a
                while node in parent:
                    j, node = parent[node]
                    used.add(group_of[j])
                free = self._row(a, True)
                cells = free if free_only else self._row(a, False)
                step = self._sink_step(a, free, None if free_only else cells, sinks, sink_set, used)
                if step is not None:
                    parent[step[0]] = (step[1], a)
                    return _steps_back(parent, step[0])
            else:
                used = NO_GROUPS
                cells = self._row(a, free_only)
            for c in cells:
                if c in parent or c in source_set or c in sink_set:
                    continue
                j = self._cell(a, c, free_only, cells, used)
                if j is not None:
                    parent[c] = (j, a)
                    pending.append(c)
        return None

    def _known_no_free_sink(self, a: int) -> bool:
        """Did a's last look find no sink through a partition whose leader changed, with nothing it depends on
        changed since (a's counts, or those of a broker in its row: sinks are only ever dropped)?"""
        stamp = self.no_free_sink.get(a)
        if stamp is None:
            return False
        stage = self.stage
        row = stage.changed_pairs[a]
        for c in stage.touched[stamp:]:
            if c == a or c in row:
                del self.no_free_sink[a]
                return False
        self.no_free_sink[a] = len(stage.touched)
        return True

    def _sink_step(self, a: int, free: dict[int, object], cells: dict[int, object] | None,
                   sinks: Sequence[tuple[int, int]], sink_set: Set[int], used: Set[str]) -> tuple[int, int] | None:
        """(sink, partition) for a step from a straight to a sink (a path as short as any): through a partition
        whose leader changed already if one serves (no further change), else (with `cells`, all of a's pairs)
        through any; the sink with the fewest leaderships among those."""
        overall = self.stage.overall
        best = None
        if used or not self._known_no_free_sink(a):
            for c in free:
                if c in sink_set:
                    j = self._cell(a, c, True, free, used)
                    if j is not None and (best is None or (overall[c], c) < (overall[best[0]], best[0])):
                        best = (c, j)
            if best is None and not used:
                self.no_free_sink[a] = len(self.stage.touched)
        if best is not None or cells is None:
            return best
        for _, c in sinks:
            j = self._cell(a, c, False, cells, used)
            if j is not None:
                return c, j
        return None


def _steps_back(parent: Mapping[int, tuple[int, int]], end: int) -> list[tuple[int, int]]:
    steps = []
    node = end
    while node in parent:
        j, prev = parent[node]
        steps.append((j, node))
        node = prev
    return steps


def _drain(queue: deque[int]) -> Iterator[int]:
    """Pop from the left until empty, also what is appended while iterating."""
    while queue:
        yield queue.popleft()
