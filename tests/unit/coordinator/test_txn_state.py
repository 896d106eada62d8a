"""Kafka's transaction state table: every legal and illegal move, the status bytes and names."""

import pytest

from pylog.coordinator.transaction.state import (
    EXPIRATION_ALLOWED, PREVIOUS, IllegalStateTransition, TxnState as S, from_id, parse_state, transition,
)

LEGAL = {
    S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.PREPARE_COMMIT: {S.ONGOING},
    # Kafka 4.0's table: transaction version 2 aborts with nothing open to bump the epoch
    S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
    S.COMPLETE_ABORT: {S.PREPARE_ABORT},
    S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
    S.PREPARE_EPOCH_FENCE: {S.ONGOING},
}


@pytest.mark.parametrize("current", list(S), ids=lambda s: s.kafka_name)
@pytest.mark.parametrize("target", list(S), ids=lambda s: s.kafka_name)
def test_every_pair_follows_kafkas_table(current, target):
    if current in LEGAL[target]:
        assert transition(current, target) is target
    else:
        with pytest.raises(IllegalStateTransition, match=f"to {target.kafka_name} from {current.kafka_name}"):
            transition(current, target)


def test_table_is_the_one_transition_uses():
    assert {k: set(v) for k, v in PREVIOUS.items()} == LEGAL


@pytest.mark.parametrize("status,name", [(0, "Empty"), (1, "Ongoing"), (2, "PrepareCommit"), (3, "PrepareAbort"),
                                         (4, "CompleteCommit"), (5, "CompleteAbort"), (6, "Dead"),
                                         (7, "PrepareEpochFence")])
def test_status_bytes_and_names(status, name):
    assert from_id(status).kafka_name == name
    assert parse_state(name.upper()) is from_id(status)


def test_unknown_status_and_name():
    with pytest.raises(ValueError, match="unknown transaction status 8"):
        from_id(8)
    assert parse_state("Stable") is None


def test_only_idle_states_may_expire():
    assert EXPIRATION_ALLOWED == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
