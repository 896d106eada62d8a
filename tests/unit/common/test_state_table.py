"""One state-table shape for the coordinators: the same check, the same exception, each machine's own words."""

import pytest

from pylog.common.states import IllegalStateTransition, StateTable
from pylog.coordinator.group import state as group
from pylog.coordinator.transaction import state as txn

TABLE = StateTable("Light", {"green": frozenset({"red"}), "red": frozenset({"green", "red"})}, str.upper)


@pytest.mark.parametrize("current,target,ok", [
    ("red", "green", True), ("green", "red", True), ("red", "red", True), ("green", "green", False),
])
def test_transition_follows_the_table(current, target, ok):
    assert TABLE.allows(current, target) is ok
    if ok:
        assert TABLE.transition(current, target) == target
    else:
        with pytest.raises(IllegalStateTransition, match="^Light cannot transition to GREEN from GREEN$"):
            TABLE.transition(current, target)


def test_both_coordinators_raise_the_one_exception():
    assert group.IllegalStateTransition is txn.IllegalStateTransition is IllegalStateTransition
    with pytest.raises(IllegalStateTransition, match="^Group cannot transition to Stable from Empty$"):
        group.transition(group.GroupState.EMPTY, group.GroupState.STABLE)
    with pytest.raises(IllegalStateTransition, match="^TransactionalId cannot transition to CompleteCommit from Ongoing$"):
        txn.transition(txn.TxnState.ONGOING, txn.TxnState.COMPLETE_COMMIT)
