"""The executor's batches respect the per-broker and cluster caps; throttles are set before and cleared after."""

from __future__ import annotations

import time

from pylog.balancer import executor as E
from pylog.cli.reassign_logic import Ongoing, move_map


class FakeCluster:
    """Reassignments that complete one poll after they start; every call recorded in order."""

    def __init__(self, current):
        self.current = {tp: list(r) for tp, r in current.items()}
        self.calls = []
        self.running = {}
        self.max_running = 0

    def ongoing(self):
        done = dict(self.running)
        self.running.clear()
        self.current.update(done)
        return {}

    def start(self, targets):
        self.calls.append(("start", sorted(targets)))
        self.running.update(targets)
        self.max_running = max(self.max_running, len(self.running))
        return {}

    def set_throttles(self, topics, brokers, rate):
        self.calls.append(("throttle", rate))

    def clear_throttles(self, brokers, topics):
        self.calls.append(("clear", tuple(topics)))

    def live_brokers(self):
        return {b: None for b in range(6)}

    def elect_preferred(self, tps, timeout_ms):
        self.calls.append(("elect", len(tps)))
        return list(tps), {}

    @property
    def admin(self):
        return self

    def close(self):
        self.calls.append(("close",))


def test_batch_respects_per_broker_and_cluster_caps():
    current = {("t", p): [0, 1] for p in range(6)}
    changed = {("t", p): [2 + p % 2, 1] for p in range(6)}
    moves = move_map({}, changed, current)
    caps = E.Caps(per_broker=2, cluster=10, leaders=10, throttle=None, check_interval_s=0)
    first = E.batch(sorted(changed), set(), moves, caps)
    assert len(first) == 2  # brokers 0 and 1 are in every move: two at a time
    assert E.batch(sorted(changed), set(), moves, E.Caps(10, 1, 10, None, 0)) == [("t", 0)]


def test_an_execution_throttles_moves_in_batches_then_clears_and_elects(monkeypatch):
    current = {("t", p): [p % 3, (p + 1) % 3] for p in range(6)}
    changed = {("t", p): [3 + p % 3, (p + 1) % 3] for p in range(6)}
    fake = FakeCluster(current)
    monkeypatch.setattr(E, "open_cluster", lambda bootstrap: fake)
    monkeypatch.setattr(E, "close_cluster", lambda c: c.close())
    ex = E.Executor("unused:1")
    ex.start("task-1", changed, current, E.Caps(per_broker=1, cluster=2, leaders=4, throttle=1000,
                                                  check_interval_s=0.001), removed=[])
    deadline = time.monotonic() + 10
    while ex.busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not ex.busy() and ex.last.error is None
    kinds = [c[0] for c in fake.calls]
    assert kinds[0] == "throttle" and kinds[-2:] == ["clear", "close"]
    assert fake.max_running <= 2 and fake.current == {tp: list(r) for tp, r in changed.items()}
    assert [c for c in fake.calls if c[0] == "elect"] == [("elect", 4), ("elect", 2)]
    assert ex.state()["state"] == E.NO_TASK


class SlowCluster(FakeCluster):
    """Reassignments that stay in flight until released."""

    def __init__(self, current):
        super().__init__(current)
        self.release = False

    def ongoing(self):
        if self.release:
            return super().ongoing()
        return {tp: Ongoing(tuple(r), (), ()) for tp, r in self.running.items()}


def test_stop_lets_moves_in_flight_finish_starts_nothing_new_and_clears_throttles(monkeypatch):
    current = {("t", p): [0, 1] for p in range(4)}
    changed = {("t", p): [2, 1] for p in range(4)}
    fake = SlowCluster(current)
    monkeypatch.setattr(E, "open_cluster", lambda bootstrap: fake)
    monkeypatch.setattr(E, "close_cluster", lambda c: c.close())
    ex = E.Executor("unused:1")
    run = ex.start("task-2", changed, current, E.Caps(per_broker=1, cluster=1, leaders=4, throttle=1000,
                                                       check_interval_s=0.001))
    deadline = time.monotonic() + 10
    while not run.in_flight and time.monotonic() < deadline:
        time.sleep(0.001)
    assert ex.stop() and ex.state()["state"] == E.STOPPING
    fake.release = True
    while ex.busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [c for c in fake.calls if c[0] == "start"] == [("start", [("t", 0)])]
    assert run.finished == {("t", 0)} and run.cancelled == {("t", 1), ("t", 2), ("t", 3)}
    assert [c[0] for c in fake.calls][-2:] == ["clear", "close"] and not any(c[0] == "elect" for c in fake.calls)


def test_reassignments_in_flight_at_start_are_followed_not_started_again(monkeypatch):
    current = {("t", 0): [0, 1], ("t", 1): [1, 2]}
    fake = SlowCluster(current)
    fake.running = {("t", 0): [2, 1]}
    monkeypatch.setattr(E, "open_cluster", lambda bootstrap: fake)
    monkeypatch.setattr(E, "close_cluster", lambda c: c.close())
    ex = E.Executor("unused:1")
    caps = E.Caps(per_broker=5, cluster=5, leaders=5, throttle=1000, check_interval_s=0.001)
    assert ex.adopt({}, caps) is None and not ex.busy()
    run = ex.adopt({("t", 0): Ongoing((2, 1, 0), (2,), (0,))}, caps)
    assert ex.busy() and ex.state()["numInProgressPartitionMovements"] == 1
    fake.release = True
    deadline = time.monotonic() + 10
    while ex.busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert run.finished == {("t", 0)} and run.targets == {("t", 0): [2, 1]}
    kinds = [c[0] for c in fake.calls]
    assert "start" not in kinds and "throttle" not in kinds  # nothing started twice, the throttle only cleared
    assert kinds[-3:] == ["elect", "clear", "close"]
