"""Automatic leader rebalancing decisions (Kafka's checkAndTriggerAutoLeaderRebalance), by table."""

import pytest

from pylog.controller.rebalance import BrokerImbalance, imbalance_by_broker, rebalance_candidates

# Six partitions; broker 1 prefers a0, a1, a2, broker 2 prefers b0, b1, b2.
REPLICAS = {("a", 0): (1, 2), ("a", 1): (1, 2), ("a", 2): (1, 2),
            ("b", 0): (2, 1), ("b", 1): (2, 1), ("b", 2): (2, 1)}
BALANCED = {tp: reps[0] for tp, reps in REPLICAS.items()}
ALL_ON_2 = {tp: 2 for tp in REPLICAS}
ISRS = {tp: (1, 2) for tp in REPLICAS}


@pytest.mark.parametrize("leaders,deleting,expected", [
    (BALANCED, set(), {1: ((("a", 0), ("a", 1), ("a", 2)), ()), 2: ((("b", 0), ("b", 1), ("b", 2)), ())}),
    (ALL_ON_2, set(), {1: ((("a", 0), ("a", 1), ("a", 2)), (("a", 0), ("a", 1), ("a", 2))),
                       2: ((("b", 0), ("b", 1), ("b", 2)), ())}),
    # no known leader: counted in the denominator only
    ({("a", 0): 2}, set(), {1: ((("a", 0), ("a", 1), ("a", 2)), (("a", 0),)),
                            2: ((("b", 0), ("b", 1), ("b", 2)), ())}),
    (ALL_ON_2, {"a"}, {2: ((("b", 0), ("b", 1), ("b", 2)), ())}),  # topics being deleted are left out
])
def test_imbalance_by_broker(leaders, deleting, expected):
    got = imbalance_by_broker(REPLICAS, leaders, deleting)
    assert {b: (imb.preferred, imb.not_led) for b, imb in got.items()} == expected


@pytest.mark.parametrize("preferred,not_led,ratio", [
    (3, 0, 0.0), (3, 1, 1 / 3), (4, 4, 1.0), (0, 0, 0.0),
])
def test_imbalance_ratio(preferred, not_led, ratio):
    tps = tuple(("t", p) for p in range(preferred))
    assert BrokerImbalance(1, tps, tps[:not_led]).ratio == pytest.approx(ratio)


@pytest.mark.parametrize("leaders,isrs,live,percentage,deleting,reassigning,expected", [
    (BALANCED, ISRS, {1, 2}, 10, set(), False, []),
    (ALL_ON_2, ISRS, {1, 2}, 10, set(), False, [("a", 0), ("a", 1), ("a", 2)]),
    ({**BALANCED, ("a", 0): 2}, ISRS, {1, 2}, 10, set(), False, [("a", 0)]),  # 33% > 10%
    ({**BALANCED, ("a", 0): 2}, ISRS, {1, 2}, 34, set(), False, []),  # 33% is not over 34%
    ({**BALANCED, ("a", 0): 2}, ISRS, {1, 2}, 33, set(), False, [("a", 0)]),  # strictly over
    (ALL_ON_2, ISRS, {2}, 10, set(), False, []),  # the preferred replica is not live
    (ALL_ON_2, {**ISRS, ("a", 1): (2,)}, {1, 2}, 10, set(), False, [("a", 0), ("a", 2)]),  # not in the ISR
    (ALL_ON_2, ISRS, {1, 2}, 10, {"a"}, False, []),  # topic being deleted
    (ALL_ON_2, ISRS, {1, 2}, 10, set(), True, []),  # a reassignment is in progress: no rebalance at all
])
def test_rebalance_candidates(leaders, isrs, live, percentage, deleting, reassigning, expected):
    assert rebalance_candidates(REPLICAS, leaders, isrs, live, percentage, deleting, reassigning) == expected
