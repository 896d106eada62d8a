"""The group state machine is data: every transition is checked against Kafka's legal predecessors."""

import pytest

from pylog.coordinator.group.state import PREVIOUS, GroupState as S, IllegalStateTransition, parse_state, transition

LEGAL = {
    (S.EMPTY, S.PREPARING_REBALANCE), (S.STABLE, S.PREPARING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE), (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
    (S.PREPARING_REBALANCE, S.EMPTY), (S.COMPLETING_REBALANCE, S.STABLE),
} | {(s, S.DEAD) for s in S}


@pytest.mark.parametrize("start", list(S), ids=lambda s: s.value)
@pytest.mark.parametrize("target", list(S), ids=lambda s: s.value)
def test_every_pair_of_states(start, target):
    if (start, target) in LEGAL:
        assert transition(start, target) is target
    else:
        with pytest.raises(IllegalStateTransition, match=f"to {target.value} from {start.value}"):
            transition(start, target)


def test_table_matches_kafka_classic_group_state():
    assert PREVIOUS[S.STABLE] == {S.COMPLETING_REBALANCE}
    assert PREVIOUS[S.EMPTY] == {S.PREPARING_REBALANCE}


@pytest.mark.parametrize("name,state", [("stable", S.STABLE), ("Empty", S.EMPTY),
                                        ("PREPARINGREBALANCE", S.PREPARING_REBALANCE), ("nope", None)])
def test_parse_state_is_case_insensitive(name, state):
    assert parse_state(name) is state
