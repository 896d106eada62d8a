"""broker/metrics_view.py's readings of the controller's context and a leader's reassignment progress (pure)."""

from __future__ import annotations

from types import SimpleNamespace

from pylog.broker.metrics_view import _bytes_behind, _controller, _groups
from pylog.coordinator.consumer.model import ConsumerGroup, Member
from pylog.controller.context import Assignment, ControllerContext, LiveBroker
from pylog.zk.codecs import PartitionState


def _ctx() -> ControllerContext:
    ctx = ControllerContext(epoch=1)
    ctx.live = {0: LiveBroker(None, 1), 1: LiveBroker(None, 2)}  # broker 2 is down
    ctx.topic_ids = {"t": None, "gone": None}
    ctx.assignments = {("t", 0): Assignment((0, 1)), ("t", 1): Assignment((1, 0)), ("t", 2): Assignment((2, 1)),
                       ("t", 3): Assignment((2,)), ("t", 4): Assignment((0, 1, 2), adding=(2,)),
                       ("gone", 0): Assignment((2,))}
    ctx.leaders = {("t", 0): PartitionState(0, 1, (0, 1), 1), ("t", 1): PartitionState(0, 1, (0, 1), 1),
                   ("t", 2): PartitionState(1, 1, (1,), 1), ("t", 3): PartitionState(2, 1, (2,), 1),
                   ("t", 4): PartitionState(0, 1, (0, 1), 1), ("gone", 0): PartitionState(2, 1, (2,), 1)}
    ctx.topics_to_delete = {"gone"}
    return ctx


def test_active_controller_counts_offline_imbalanced_and_reassigning_partitions():
    view = _controller(SimpleNamespace(is_active=True, ctx=_ctx()))
    assert view.active
    assert view.offline_partitions == 1  # t-3: its only replica's broker is down; a topic being deleted is left out
    assert view.preferred_imbalance == 2  # t-1 (led by 0, prefers 1) and t-2 (led by 1, prefers 2)
    assert view.reassigning_partitions == 1
    assert (view.global_topics, view.global_partitions) == (2, 6)


def test_an_inactive_controller_reports_nothing():
    view = _controller(SimpleNamespace(is_active=False, ctx=_ctx()))
    assert not view.active and view.offline_partitions == 0


def test_bytes_behind_estimates_what_adding_replicas_still_copy():
    plog = SimpleNamespace(log_start_offset=0, log_end_offset=1000, size_bytes=100_000)
    p = SimpleNamespace(adding=[2, 3], followers={2: SimpleNamespace(leo=400)})  # 3 has not fetched yet
    assert _bytes_behind(p, plog) == 600 * 100 + 1000 * 100


def test_groups_include_offset_only_groups_as_empty():
    group = SimpleNamespace(state=SimpleNamespace(value="Stable"), members={"m1": None}, generation=4)
    kip848 = ConsumerGroup("new", group_epoch=3, assignment_epoch=3, members={"m": Member("m", member_epoch=3)})
    coordinator = SimpleNamespace(groups={"live": group},
                                  offsets={"live": {("t", 0): SimpleNamespace(offset=7)},
                                           "assign-only": {("t", 1): SimpleNamespace(offset=3)},
                                           "new": {("t", 2): SimpleNamespace(offset=9)}},
                                  consumer=SimpleNamespace(groups={"new": kip848}))
    views = {g.group_id: g for g in _groups(coordinator)}
    assert (views["live"].state, views["live"].members, views["live"].committed) == ("Stable", 1, {("t", 0): 7})
    assert (views["assign-only"].state, views["assign-only"].members) == ("Empty", 0)
    assert (views["new"].state, views["new"].members, views["new"].generation, views["new"].committed) == (
        "Stable", 1, 3, {("t", 2): 9})
