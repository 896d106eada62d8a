"""State machines are data: every transition is checked against the legal predecessors."""

import logging

import pytest

from pylog.controller.states import (
    PARTITION_PREVIOUS,
    REPLICA_PREVIOUS,
    PartitionLifecycle as P,
    ReplicaLifecycle as R,
    split_valid,
)


@pytest.mark.parametrize("start,target,ok", [
    (P.NON_EXISTENT, P.NEW, True),
    (P.NEW, P.ONLINE, True),
    (P.OFFLINE, P.ONLINE, True),
    (P.ONLINE, P.ONLINE, True),  # re-election (preferred, reassignment, controlled shutdown)
    (P.ONLINE, P.OFFLINE, True),
    (P.OFFLINE, P.NON_EXISTENT, True),
    (P.NON_EXISTENT, P.ONLINE, False),  # must be created first
    (P.ONLINE, P.NON_EXISTENT, False),  # deletion goes through OFFLINE
    (P.ONLINE, P.NEW, False),
])
def test_partition_transitions(start, target, ok):
    assert (start in PARTITION_PREVIOUS[target]) is ok


@pytest.mark.parametrize("start,target,ok", [
    (R.NON_EXISTENT, R.NEW, True),
    (R.NEW, R.ONLINE, True),
    (R.ONLINE, R.OFFLINE, True),
    (R.OFFLINE, R.DELETION_STARTED, True),
    (R.DELETION_STARTED, R.DELETED, True),
    (R.DELETED, R.NON_EXISTENT, True),
    (R.NON_EXISTENT, R.ONLINE, False),
    (R.ONLINE, R.DELETED, False),
    (R.DELETED, R.ONLINE, False),
])
def test_replica_transitions(start, target, ok):
    assert (start in REPLICA_PREVIOUS[target]) is ok


def test_split_valid_logs_and_keeps_going(caplog):
    states = {"a": P.NEW, "b": P.NON_EXISTENT, "c": P.OFFLINE}
    with caplog.at_level(logging.ERROR, logger="pylog.state.change"):
        ok = split_valid(["a", "b", "c"], states.__getitem__, P.ONLINE, PARTITION_PREVIOUS)
    assert ok == ["a", "c"]
    assert "Invalid state transition of b from NON_EXISTENT to ONLINE" in caplog.text


def test_every_state_has_predecessors_defined():
    assert set(PARTITION_PREVIOUS) == set(P)
    assert set(REPLICA_PREVIOUS) == set(R)
