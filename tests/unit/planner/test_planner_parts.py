"""The planner's parts on hand-made cases: dealing of extras, rack-level paths and ranges, leaders, bounds."""
from __future__ import annotations

from pylog.planner.dealing import DealInput, deal_rack
from pylog.planner.leaders import balance_leaders
from pylog.planner.model import Broker, Partition, Snapshot
from pylog.planner.oracle import balanced_bounds, optimum, topic_bounds
from pylog.planner.plan import plan_reassignment
from pylog.planner.rackflow import shortest_path
from pylog.planner.shifts import group_range
from pylog.planner.targets import topic_lower_bound


def test_dealing_keeps_extras_where_they_save_moves_and_spends_budgets_exactly():
    # Brokers 1..3, budget 1 each. Group a (2 extras) is held above its level by 1 and 2; group b (1 extra) by 2.
    # Broker 2 cannot keep both a and b: it keeps b (a has another broker to go to), a takes 3.
    groups = [DealInput("a", 2, 0, {1: 1, 2: 1}), DealInput("b", 1, 0, {2: 1})]
    dealt = deal_rack([1, 2, 3], {1: 1, 2: 1, 3: 1}, groups)
    assert dealt.extras == {"a": [1, 3], "b": [2]}
    assert dealt.beneficial == 2 and dealt.overdrawn == 0


def test_dealing_gives_the_overall_ceil_where_it_saves_a_drop():
    # One ceil among two brokers of budget 0: broker 2 holds the group above its level, so it gets the ceil.
    dealt = deal_rack([1, 2], {1: 0, 2: 0}, [DealInput("a", 1, 3, {1: 3, 2: 4})], floating=1, fullness={1: 9, 2: 4})
    assert dealt.ceil == [2] and dealt.extras == {"a": [2]}


def test_dealing_completes_with_an_exchange_when_the_greedy_runs_out():
    # Group c needs 2 brokers; budgets left only on broker 1 (which already has c's extra) after a and b:
    # a's extra on broker 2 moves to broker 1 so that c can take broker 2.
    groups = [DealInput("a", 1, 0, {2: 1}), DealInput("b", 1, 0, {3: 1}), DealInput("c", 2, 0, {1: 1})]
    dealt = deal_rack([1, 2, 3], {1: 2, 2: 1, 3: 1}, groups)
    counts = {b: sum(b in v for v in dealt.extras.values()) for b in (1, 2, 3)}
    assert counts == {1: 2, 2: 1, 3: 1} and dealt.overdrawn == 0
    assert all(len(set(v)) == len(v) for v in dealt.extras.values()) and len(dealt.extras["c"]) == 2


def test_dealing_finds_the_most_beneficial_extras_where_the_greedy_does_not():
    # The rack of the pinned oracle counterexample: t0 needs an extra on 8 of the 9 brokers (beneficial on 0 and
    # 3), so brokers 1 and 2 cannot hold t0's, t1's and t2's; t2 must take 3 and 4 rather than 1 (and the greedy
    # gave it broker 0, where it saves nothing). The most beneficial extras: 2 + 3 + 3, every extra placed.
    groups = [DealInput("t0", 8, 0, {0: 7, 3: 1}),
              DealInput("t1", 6, 1, {0: 1, 1: 5, 2: 5, 3: 1, 4: 1, 5: 2}),
              DealInput("t2", 3, 2, {0: 2, 1: 6, 2: 7, 3: 3, 4: 3})]
    brokers = list(range(9))
    held = {0: 10, 1: 11, 2: 12, 3: 5, 4: 4, 5: 2}  # replicas per broker now: the greedy drops t2 on 3 (least full)
    dealt = deal_rack(brokers, {b: 1 for b in brokers}, groups, floating=8, fullness=held)
    assert dealt.beneficial == 8 and dealt.overdrawn == 0
    kept = {d.group: {b for b, c in d.kept.items() if c > d.level} for d in groups}
    assert sum(len(kept[g] & set(bs)) for g, bs in dealt.extras.items()) == 8
    assert {g: len(bs) for g, bs in dealt.extras.items()} == {"t0": 8, "t1": 6, "t2": 3}
    per_broker = {b: sum(b in bs for bs in dealt.extras.values()) for b in brokers}
    assert sorted(per_broker.values()) == [1] + [2] * 8 and len(dealt.ceil) == 8
    assert all(per_broker[b] == 1 + (b in dealt.ceil) for b in brokers)


def test_removing_a_broker_leaves_the_ceil_off_the_brokers_its_replicas_cannot_land_on():
    # Broker 4 leaves: its replicas of [4, 3, 6] and [1, 4, 5] need extras on brokers not holding them. The
    # completion used to deal "no ceil" first (to 0 and 2) and the group's extras then went to 3 and 6, where
    # [4, 3, 6] cannot land: 3 moves where 2 do (the oracle's fewest).
    reps = [[4, 3, 6], [1, 4, 5], [5, 0, 7], [7, 2, 1]]
    snap = Snapshot([Broker(b) for b in range(8)], [Partition("t0", p, r) for p, r in enumerate(reps)])
    targets = [0, 1, 2, 3, 5, 6, 7]
    plan = plan_reassignment(snap, None, targets)
    best = optimum(snap.partitions, targets, {b: None for b in targets}, balanced_bounds(snap.partitions, targets),
                   topic_bounds(snap.partitions, targets))
    assert plan.report.replicas_moved == best == 2
    assert all(4 not in r and len(set(r)) == 3 for r in plan.proposed.values())


def test_rack_paths_survive_negative_cycles():
    edges = {(0, 1): -5, (1, 0): 4, (1, 2): 1}  # 0 -> 1 -> 0 is a negative cycle
    path = shortest_path(3, edges, [0], {2})
    assert path is not None and path[0] == 0 and path[-1] == 2 and len(path) <= 3


def test_group_range_is_within_one_per_broker_unless_the_rack_rule_forbids_it():
    # 10 partitions of RF 2 on racks of 2 and 3 brokers: within one per broker is 4 per broker -> 8 and 12,
    # but RF 2 = #racks puts exactly 10 in each rack: not possible, the range is the rule's (each partition
    # at most once per rack), the partitions' own bounds then force 10 and 10.
    lo, hi, ok = group_range(20, {2: 10}, [2, 3], 5, True)
    assert not ok and lo == [0, 0] and hi == [10, 10]
    lo, hi, ok = group_range(30, {3: 10}, [4, 4, 4], 12, True)
    assert ok and lo == [8, 8, 8] and hi == [10, 10, 10]  # at most one replica of a partition per rack


def test_topic_lower_bound_counts_excess_above_the_best_per_topic_targets():
    # Topic t: 4 replicas on broker 0, none elsewhere, 2 brokers: 2 + 2 -> 2 moves; u: balanced, no move.
    holders = {"t": {0: 4}, "u": {0: 1, 1: 1}}
    assert topic_lower_bound(holders, {"t": 4, "u": 2}, {0: 3, 1: 3}, ["t", "u"]) == 2


def test_leaders_use_paths_when_a_partition_finds_all_its_replicas_full():
    # Topic with 3 partitions on brokers 0..2; two partitions can only be led by 0 or 1, the third by 0 or 2:
    # distinct leaders need 2 for the third one.
    replicas = [[0, 1], [1, 0], [0, 2]]
    result = balance_leaders({"t": [0, 1, 2]}, replicas, [0, 1, 2])
    assert sorted(r[0] for r in replicas) == [0, 1, 2] and result.overall_left == 0
    assert not result.topics_unbalanced


def test_leaders_balance_overall_across_topics():
    # Two topics of 2 partitions each on brokers 0, 1 (both replicas everywhere), currently all led by 0.
    replicas = [[0, 1], [0, 1], [0, 1], [0, 1]]
    result = balance_leaders({"a": [0, 1], "b": [2, 3]}, replicas, [0, 1])
    leads = [r[0] for r in replicas]
    assert leads.count(0) == leads.count(1) == 2 and leads[:2] != [0, 0] and result.overall_left == 0


def test_removed_brokers_replicas_land_in_distinct_brokers_without_racks():
    # Partition 0 has both replicas on removed brokers 2 and 3: they must land on 0 and 1.
    parts = [Partition("t", 0, [2, 3]), Partition("t", 1, [0, 1])]
    plan = plan_reassignment(Snapshot([Broker(b) for b in range(4)], parts), None, [0, 1])
    assert sorted(plan.proposed[("t", 0)]) == [0, 1]
    assert plan.report.replicas_moved == plan.report.lower_bound == 2
