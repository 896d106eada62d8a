"""An in-memory cluster for pylog-reassign-partitions' unit tests (the integration tests use real ones)."""

from __future__ import annotations

from pylog.cli.reassign_cluster import ClusterView
from pylog.cli.reassign_logic import Ongoing


class FakeCluster(ClusterView):
    """Brokers, assignments and in-flight reassignments in dicts; records every write."""

    def __init__(self, via, brokers, assignments, ongoing=None, pending=(), sizes=None, errors=None):
        self.via = via
        self.brokers = dict(brokers)
        self.current = {tp: list(r) for tp, r in assignments.items()}
        self.in_flight = dict(ongoing or {})
        self.legacy = set(pending)
        self.sizes = sizes
        self.errors = dict(errors or {})
        self.started, self.cancelled, self.throttles, self.cleared = [], [], [], []
        self.leaders = {tp: r[0] for tp, r in self.current.items()}

    def live_brokers(self):
        return dict(self.brokers)

    def assignments(self, topics):
        wanted = None if topics is None else set(topics)
        return {tp: list(r) for tp, r in self.current.items() if wanted is None or tp[0] in wanted}

    def ongoing(self):
        return dict(self.in_flight)

    def pending(self):
        return set(self.legacy)

    def start(self, targets):
        self.started.append(dict(targets))
        for tp, target in targets.items():
            if tp in self.errors:
                continue
            original = self.current[tp]
            full = list(dict.fromkeys(list(target) + original))
            self.in_flight[tp] = Ongoing(tuple(full), tuple(r for r in full if r not in original),
                                         tuple(r for r in full if r not in target))
        return {tp: msg for tp, msg in self.errors.items() if tp in targets}

    def cancel(self, tps):
        self.cancelled.append(list(tps))
        for tp in tps:
            self.in_flight.pop(tp, None)
        return {}

    def set_throttles(self, topics, brokers, rate):
        self.throttles.append((dict(topics), list(brokers), rate))

    def clear_throttles(self, brokers, topics):
        self.cleared.append((list(brokers), list(topics)))

    def finish(self, tp):
        """The controller completes a partition's reassignment."""
        o = self.in_flight.pop(tp)
        self.current[tp] = list(o.target)

    def replica_sizes(self):
        return None if self.sizes is None else dict(self.sizes)

    def elect_preferred(self, tps, timeout_ms):
        elected = sorted(tp for tp in tps if self.current[tp][0] != self.leaders.get(tp))
        self.leaders.update({tp: self.current[tp][0] for tp in elected})
        return elected, {}
