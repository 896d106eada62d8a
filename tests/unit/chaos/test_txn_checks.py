"""The exactly-once checks of `scripts/chaos --transactions`, each anomaly named."""

import pytest

from pylog.chaos.txn import TxnOutcomes, check

OUTCOMES = TxnOutcomes(committed=[[0, 1], [2, 3]], aborted=[[4, 5]], unknown=[[6, 7]])


def test_exactly_once_passes_with_or_without_an_unknown_transaction():
    assert check(OUTCOMES, {0: [0, 2], 1: [1, 3]}) == []
    assert check(OUTCOMES, {0: [0, 2, 6], 1: [1, 3, 7]}) == []


@pytest.mark.parametrize("seen, name", [
    ({0: [0, 2], 1: [1]}, "lost writes"),
    ({0: [0, 2, 4], 1: [1, 3]}, "aborted reads"),
    ({0: [0, 2, 2], 1: [1, 3]}, "duplicates"),
    ({0: [0, 2, 6], 1: [1, 3]}, "not atomic"),
    ({0: [2, 0], 1: [1, 3]}, "reordering"),
])
def test_each_anomaly_is_named(seen, name):
    findings = check(OUTCOMES, seen)
    assert [f.split(":")[0] for f in findings] == [name]
