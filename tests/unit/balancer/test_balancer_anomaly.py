"""The broker-failure detector: alert after one threshold, heal after the other, forget a broker that returns."""

from __future__ import annotations

from pylog.balancer import anomaly as A
from pylog.balancer.cluster import ClusterFacts
from pylog.balancer.config import parse
from pylog.cli.admin_client import ClusterMetadata, PartitionMetadata, TopicMetadata


def facts(alive, replicas):
    parts = {p: PartitionMetadata(p, reps[0] if reps[0] in alive else None, tuple(reps), tuple(r for r in reps
                                                                                             if r in alive))
             for p, reps in enumerate(replicas)}
    md = ClusterMetadata({b: None for b in alive}, min(alive), {"t": TopicMetadata("t", None, False, parts)})
    return ClusterFacts(md, None, {b: "127.0.0.1" for b in alive})


class FakeExecutor:
    def __init__(self):
        self.started = []
        self.recently_removed = set()
        self.self_healing_task = None
        self.running = False

    def busy(self):
        return self.running

    def start(self, task_id, changed, current, caps, removed=(), reason=""):
        self.started.append(dict(changed))
        self.running = True


def detector(monkeypatch, readings, clock, healing="true"):
    cfg = parse({"bootstrap.servers": "unused:1", "self.healing.enabled": healing,
                 "broker.failure.alert.threshold.ms": "1000", "broker.failure.self.healing.threshold.ms": "3000",
                 "self.healing.target.topic.replication.factor": "2"})
    monkeypatch.setattr(A, "open_cluster", lambda bootstrap: None)
    monkeypatch.setattr(A, "close_cluster", lambda cluster: None)
    monkeypatch.setattr(A, "read", lambda cluster, with_sizes=True: readings[0])
    monkeypatch.setattr(A, "_now_ms", lambda: clock[0])
    ex = FakeExecutor()
    caps = A.Caps(per_broker=5, cluster=50, leaders=100, throttle=None, check_interval_s=1)
    return A.BrokerFailureDetector(cfg, ex, lambda: caps), ex


REPLICAS = [[0, 1], [1, 2], [2, 0], [0, 1]]


def test_alert_then_heal_onto_the_live_brokers(monkeypatch):
    readings, clock = [facts({0, 1, 2}, REPLICAS)], [0]
    d, ex = detector(monkeypatch, readings, clock)
    d.check()
    readings[0] = facts({0, 2}, REPLICAS)  # broker 1 died
    for t in (100, 900):
        clock[0] = t
        d.check()
    assert d.json()["recentBrokerFailures"] == []  # not yet: alert threshold is 1000 ms after it was found
    clock[0] = 1100
    d.check()
    [failure] = d.json()["recentBrokerFailures"]
    assert failure["failedBrokersByTimeMs"] == {"1": 100} and failure["status"] == "DETECTED"
    assert ex.started == []
    clock[0] = 3100
    d.check()
    [moves] = ex.started
    assert all(1 not in reps for reps in moves.values()) and len(moves) == 3  # each of broker 1's replicas
    assert d.json()["recentBrokerFailures"][0]["status"] == "FIX_STARTED"
    assert d.json()["numSelfHealingStarted"] == 1


def test_a_broker_back_before_healing_is_ignored_and_nothing_moves(monkeypatch):
    readings, clock = [facts({0, 2}, REPLICAS)], [0]
    d, ex = detector(monkeypatch, readings, clock)
    d.check()
    clock[0] = 1500
    d.check()
    readings[0] = facts({0, 1, 2}, REPLICAS)
    clock[0] = 5000
    d.check()
    assert [f["status"] for f in d.json()["recentBrokerFailures"]] == ["IGNORED"] and ex.started == []


def test_without_self_healing_it_only_alerts(monkeypatch):
    readings, clock = [facts({0, 2}, REPLICAS)], [0]
    d, ex = detector(monkeypatch, readings, clock, healing="false")
    for t in (0, 2000, 10000):
        clock[0] = t
        d.check()
    assert [f["status"] for f in d.json()["recentBrokerFailures"]] == ["DETECTED"] and ex.started == []
    assert "BROKER_FAILURE" in d.json()["selfHealingDisabled"] and d.json()["selfHealingEnabled"] == []


def test_repairs_need_exactly_their_moves():
    from pylog.balancer.repairs import below_replication, fix_offline, raise_replication
    parts = {p: PartitionMetadata(p, reps[0], tuple(reps), tuple(reps), off)
             for p, (reps, off) in enumerate([([0, 1], (0,)), ([1, 2], ()), ([2, 0], (0,)), ([1], ())])}
    md = ClusterMetadata({0: None, 1: "r1", 2: "r2", 3: "r1"}, 0, {"t": TopicMetadata("t", None, False, parts)})
    f = ClusterFacts(md, None, {b: "h" for b in range(4)})
    plan = fix_offline(f, {("t", 0): {0}, ("t", 2): {0}})
    assert sorted(plan.changed) == [("t", 0), ("t", 2)] and plan.body["summary"]["numReplicaMovements"] == 2
    assert plan.changed[("t", 0)][1:] == [1] and plan.changed[("t", 0)][0] not in (0, 1)
    assert plan.changed[("t", 2)][0] == 2 and plan.changed[("t", 2)][1] == 3  # broker 3 held nothing
    assert below_replication(f, 2, None) == {"t": 1}
    grown = raise_replication(f, {"t": 2})
    assert list(grown.changed) == [("t", 3)] and grown.changed[("t", 3)][1] in (0, 2)  # not broker 3: rack r1 as 1


def test_each_type_heals_only_with_its_switch(monkeypatch):
    readings, clock = [facts({0, 1, 2}, [[0, 1], [1, 2], [2], [0, 1]])], [0]
    d, ex = detector(monkeypatch, readings, clock, healing="false")
    d.healing["TOPIC_ANOMALY"] = True
    d.check()
    state = d.json()
    [anomaly] = state["recentTopicAnomalies"]
    assert anomaly["badTopicsByReplicationFactor"] == {"t": 1} and anomaly["status"] == "FIX_STARTED"
    assert ex.started == [{("t", 2): [2, 0]}]


def test_a_slow_broker_is_a_metric_anomaly_healed_by_demotion(monkeypatch):
    from pylog.balancer import slow
    assert slow.slow_brokers({0: 3.0, 1: 4.0, 2: 250.0}, 5.0, 100) == {2: 250.0}
    assert slow.slow_brokers({0: 3.0, 1: 4.0, 2: 40.0}, 5.0, 100) == {}  # under the floor
    assert slow.slow_brokers({0: 3.0, 2: 250.0}, 5.0, 100) == {}  # two brokers: no peers to compare
    readings, clock = [facts({0, 1, 2}, [[2, 0], [1, 2], [0, 1]])], [0]
    d, ex = detector(monkeypatch, readings, clock, healing="false")
    monkeypatch.setattr(slow, "produce_p99", lambda bootstrap: {0: 3.0, 1: 4.0, 2: 250.0})
    d.slow_brokers = slow.SlowBrokerFinder(d.cfg)
    d.healing["METRIC_ANOMALY"] = True
    d.check()
    [anomaly] = d.json()["recentMetricAnomalies"]
    assert anomaly["slowBrokersByProduceP99Ms"] == {"2": 250.0} and anomaly["status"] == "FIX_STARTED"
    assert ex.started == [{("t", 0): [0, 2]}]  # broker 2 last: leadership moves off it ([1, 2] already is)


def test_goal_violations_are_looked_for_at_their_own_interval(monkeypatch):
    from pylog.balancer import anomaly as mod
    calls = []
    monkeypatch.setattr(mod, "find_goal_violations", lambda f, cfg, ex: calls.append(1))
    readings, clock = [facts({0, 1, 2}, REPLICAS)], [0]
    d, _ = detector(monkeypatch, readings, clock, healing="false")
    d.cfg = parse({**{k: str(v) for k, v in d.cfg.values.items() if v is not None},
                   "goal.violation.detection.interval.ms": "10000"})
    for t in (0, 500, 9000, 10000, 12000):
        clock[0] = t
        d.check()
    assert len(calls) == 2  # at 0 and at 10000
