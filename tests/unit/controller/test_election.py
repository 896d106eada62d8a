"""Leader election strategies, by table (Kafka's PartitionLeaderElectionAlgorithmsTest cases and more)."""

import pytest

from pylog.controller.election import (
    Election,
    controlled_shutdown_leader,
    offline_leader,
    preferred_leader,
    reassignment_leader,
    remove_from_isr,
)

OFFLINE = [
    # assignment, isr, live, unclean -> expected
    ([2, 4], [2, 4], {2, 4}, False, Election(2, (2, 4))),
    ([2, 4], [4], {2, 4}, False, Election(4, (4,))),  # first ISR member in assignment order
    ([2, 4], [2, 4], {4}, False, Election(4, (4,))),  # dead ISR members leave the ISR
    ([2, 4], [2], {4}, False, None),  # only an out-of-sync replica is alive: stay offline
    ([2, 4], [2], {4}, True, Election(4, (4,), unclean=True)),  # ...unless unclean is enabled
    ([2, 4], [], {2, 4}, False, None),
    ([2, 4], [2], set(), True, None),  # nobody alive at all
    ([3, 1, 2], [1, 2], {1, 2, 3}, False, Election(1, (1, 2))),  # 3 alive but out of sync
]


@pytest.mark.parametrize("assignment,isr,live,unclean,expected", OFFLINE)
def test_offline_election(assignment, isr, live, unclean, expected):
    assert offline_leader(assignment, isr, live, unclean) == expected


@pytest.mark.parametrize("target,isr,live,expected", [
    ([2, 4], [2, 4], {2, 4}, Election(2, (2, 4))),
    ([2, 4], [4], {2, 4}, Election(4, (4,))),
    ([2, 4], [1, 2, 4], {4}, Election(4, (1, 2, 4))),  # the ISR is not trimmed by this strategy
    ([2, 4], [1], {1, 2, 4}, None),  # no target replica in sync yet
])
def test_reassignment_election(target, isr, live, expected):
    assert reassignment_leader(target, isr, live) == expected


@pytest.mark.parametrize("assignment,isr,live,expected", [
    ([2, 4], [2, 4], {2, 4}, Election(2, (2, 4))),
    ([2, 4], [4, 2], {2, 4}, Election(2, (4, 2))),
    ([2, 4], [4], {2, 4}, None),  # preferred replica out of sync
    ([2, 4], [2, 4], {4}, None),  # preferred replica dead
    ([], [2], {2}, None),
])
def test_preferred_election(assignment, isr, live, expected):
    assert preferred_leader(assignment, isr, live) == expected


@pytest.mark.parametrize("assignment,isr,live,shutting,expected", [
    ([2, 4], [2, 4], {2, 4}, {2}, Election(4, (4,))),
    ([2, 4], [2, 4], {2, 4}, {2, 4}, None),
    ([2, 4, 1], [2, 4, 1], {2, 4, 1}, {2}, Election(4, (4, 1))),
    ([2, 4], [2], {2, 4}, {2}, None),  # the only ISR member is leaving: it keeps leadership
])
def test_controlled_shutdown_election(assignment, isr, live, shutting, expected):
    assert controlled_shutdown_leader(assignment, isr, live, shutting) == expected


@pytest.mark.parametrize("leader,isr,gone,expected", [
    (1, [1, 2, 3], 2, (1, (1, 3))),
    (1, [1, 2, 3], 1, (-1, (2, 3))),  # the leader leaves: no leader until an election
    (1, [1], 1, (-1, (1,))),  # the last ISR member stays, so unclean election knows who had the data
    (-1, [3], 3, (-1, (3,))),
])
def test_remove_from_isr(leader, isr, gone, expected):
    assert remove_from_isr(leader, isr, gone) == expected
