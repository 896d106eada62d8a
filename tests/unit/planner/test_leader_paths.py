"""The repair's cached path search (leader_paths.py) against the plain scan it replaces: the same plans."""
from __future__ import annotations

import pytest

from pylog.bench.planner import scenario
from pylog.planner import leader_paths, leaders
from pylog.planner.model import PlanOptions
from pylog.planner.plan import plan_reassignment
from pylog.planner.synthetic import synthetic_snapshot


class _PlainSearch(leader_paths.PathSearch):
    """The search before the cache: every pair a visit meets is scanned again."""

    def _row(self, a, free_only):
        index = (self.stage.changed_pairs if free_only else self.stage.pairs)[a]
        return dict.fromkeys(index, leader_paths.UNKNOWN)


def _plan(snap, targets, racks, opts, search, monkeypatch):
    scans = []
    real_scan = leader_paths.PathSearch._scan

    def counting(self, a, c, led, used):
        scans.append(1)
        return real_scan(self, a, c, led, used)

    with monkeypatch.context() as m:
        m.setattr(leaders, "PathSearch", search)
        m.setattr(leaders, "EXACT_LIMIT", 0)  # the staged pass, whose repair uses the search
        m.setattr(leader_paths.PathSearch, "_scan", counting)
        plan = plan_reassignment(snap, None, targets, opts, racks)
    return plan, len(scans)


@pytest.mark.parametrize("n_parts, n_brokers, name, n_racks, topic_balance", [
    (5000, 500, "add-10%", 4, True),    # the repair moves hundreds of leaderships here
    (10000, 100, "add-10%", 4, True),
    (3000, 30, "add-10%", 0, True),
])
def test_cached_search_plans_exactly_as_the_plain_scan(n_parts, n_brokers, name, n_racks, topic_balance,
                                                       monkeypatch):
    snap = synthetic_snapshot(n_parts, n_brokers, rf=3, n_racks=n_racks, seed=5)
    targets, racks = scenario(snap, name, max(n_racks, 1))
    racks = racks if n_racks else {}
    opts = PlanOptions(topic_balance=topic_balance)
    fast, fast_scans = _plan(snap, targets, racks, opts, leader_paths.PathSearch, monkeypatch)
    plain, plain_scans = _plan(snap, targets, racks, opts, _PlainSearch, monkeypatch)
    assert fast.proposed == plain.proposed
    assert fast.report.leader_changes == plain.report.leader_changes
    assert 0 < fast_scans < plain_scans  # the repair ran, and the cache saved scans


class _VisitEverySource(leader_paths.PathSearch):
    """The search before the shortcuts through changed leaders: every source visited, nothing remembered."""

    def overall_path(self, sources, source_set, sinks, sink_set):
        return (self._bfs(sources, source_set, sinks, sink_set, True)
                or self._bfs(sources, source_set, sinks, sink_set, False))

    def _known_no_free_sink(self, a):
        return False


def test_sources_known_to_have_no_free_sink_are_skipped_without_changing_the_plan(monkeypatch):
    snap = synthetic_snapshot(20000, 1000, rf=3, n_racks=4, seed=5)
    targets, racks = scenario(snap, "add-10%", 4)
    calls = []
    real = leader_paths.PathSearch._free_sources

    def counting(self, *args):
        calls.append(real(self, *args))
        return calls[-1]

    monkeypatch.setattr(leader_paths.PathSearch, "_free_sources", counting)
    fast, _ = _plan(snap, targets, racks, PlanOptions(), leader_paths.PathSearch, monkeypatch)
    # more sources than FREE_SEARCH: the tight loop ran hundreds of times and found some paths
    assert len(calls) > 100 and any(calls)
    plain, _ = _plan(snap, targets, racks, PlanOptions(), _VisitEverySource, monkeypatch)
    assert fast.proposed == plain.proposed
    assert fast.report.leader_changes == plain.report.leader_changes
