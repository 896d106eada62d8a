"""Reassignment decisions (KIP-455, Kafka's ReplicaAssignment and KafkaController rules), by table."""

import pytest

from pylog.controller.context import Assignment
from pylog.controller.election import Election
from pylog.controller.reassignment_plan import (
    Plan,
    Step,
    build_reassignment,
    finish_state,
    is_complete,
    next_step,
    reassign_to,
    unneeded_replicas,
    validate_target,
)

A = Assignment


@pytest.mark.parametrize("current,target,expected", [
    # full set = (target ++ original).distinct; adding = full - original; removing = full - target
    (A((1, 2, 3)), (4, 5, 6), A((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))),
    (A((1, 2, 3)), (3, 2, 1), A((3, 2, 1))),  # a reorder moves nothing
    (A((1, 2)), (2, 3), A((2, 3, 1), (3,), (1,))),
    # a new target while one is in flight still starts from the original: (2, 3, 1) minus adding (3,)
    (A((2, 3, 1), (3,), (1,)), (4,), A((4, 2, 1), (4,), (2, 1))),
])
def test_reassign_to(current, target, expected):
    assert reassign_to(current, target) == expected


@pytest.mark.parametrize("current,target,expected", [
    (A((1, 2)), None, None),  # cancelling with nothing in flight
    (A((2, 3, 1), (3,), (1,)), None, A((2, 1))),  # cancelling goes back to the original replicas
    (A((1, 2)), (2, 3), A((2, 3, 1), (3,), (1,))),
])
def test_build_reassignment(current, target, expected):
    assert build_reassignment(current, target) == expected


@pytest.mark.parametrize("replicas,live,expected", [
    ([1, 4], {1, 2, 3, 4}, None),
    ([], {1}, "Empty replica list specified in partition reassignment."),
    ([1, 1], {1}, "Duplicate replica ids in partition reassignment replica list: List(1, 1)"),
    ([1, -2], {1}, "Invalid broker id in replica list: List(1, -2)"),
    # only the replicas being added must be alive (Kafka lists them, and the live set)
    ([1, 9], {1, 2}, "Replica assignment has brokers that are not alive. Replica list: List(9), "
                     "live broker list: Set(1, 2)"),
    ([2, 1], {7}, None),  # nothing added: dead current replicas are fine
])
def test_validate_target(replicas, live, expected):
    assert validate_target(A((1, 2)), replicas, live) == expected


@pytest.mark.parametrize("before,after,expected", [
    (A((4, 1, 2), (4,), (1, 2)), A((5, 1, 2), (5,), (1, 2)), (4,)),  # superseded target replica
    (A((4, 1, 2), (4,), (1, 2)), A((1, 2)), (4,)),  # cancelled
    (A((1, 2)), A((3, 1, 2), (3,), (1, 2)), ()),
])
def test_unneeded_replicas(before, after, expected):
    assert unneeded_replicas(before, after) == expected


@pytest.mark.parametrize("a,isr,expected", [
    (A((1, 2)), [1], True),  # nothing in flight
    (A((3, 1), (3,), (1,)), [1], False),
    (A((3, 1), (3,), (1,)), [1, 3], True),
    (A((3, 4, 1), (3, 4), (1,)), [3, 1], False),  # every target replica, not just one
])
def test_is_complete(a, isr, expected):
    assert is_complete(a, isr) is expected


@pytest.mark.parametrize("target,leader,isr,live,expected", [
    ((2, 3), 2, (1, 2, 3), {1, 2, 3}, Election(2, (2, 3))),  # a live target leader stays; ISR cut
    ((2, 3), 1, (1, 2, 3), {1, 2, 3}, Election(2, (2, 3))),  # leader leaves: first live in-sync target
    ((2, 3), 1, (1, 3, 2), {1, 3}, Election(3, (3, 2))),  # target order, liveness; ISR keeps its order
    ((2, 3), 2, (1, 2, 3), {1, 3}, Election(3, (2, 3))),  # the target leader is dead
    ((2, 3), 1, (1, 2, 3), {1}, None),  # no live target replica
])
def test_finish_state(target, leader, isr, live, expected):
    assert finish_state(target, leader, isr, live) == expected


@pytest.mark.parametrize("a,leader,isr,live,expected", [
    (A((3, 1), (3,), (1,)), 1, (1,), {1, 3}, Plan(Step.CATCH_UP)),
    (A((3, 1), (3,), (1,)), 1, (1, 3), {1, 3}, Plan(Step.COMPLETE, Election(3, (3,)), (1,))),
    (A((3, 1), (3,), (1,)), 1, (1, 3), {1}, Plan(Step.NO_LEADER, None, (1,))),
    (A((1, 2)), 1, (1, 2), {1, 2}, Plan(Step.COMPLETE, Election(1, (1, 2)), ())),  # nothing to move
])
def test_next_step(a, leader, isr, live, expected):
    assert next_step(a, leader, isr, live) == expected
