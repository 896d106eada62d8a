"""Which partitions an operator-requested election acts on (KafkaController.processReplicaLeaderElection), by table."""

import pytest

from pylog.controller.context import Assignment
from pylog.controller.preferred import PREFERRED, UNCLEAN, ElectionResult, classify, election_needed
from pylog.protocol.errors import ErrorCode


@pytest.mark.parametrize("election_type,replicas,leader,live,needed", [
    (PREFERRED, [1, 2], 1, {1, 2}, False),  # the preferred replica leads already
    (PREFERRED, [1, 2], 2, {1, 2}, True),
    (PREFERRED, [1, 2], -1, {2}, True),  # needed even if it cannot succeed (answered later)
    (PREFERRED, [], 1, {1}, False),
    (UNCLEAN, [1, 2], 2, {1, 2}, False),  # a live leader: nothing to do
    (UNCLEAN, [1, 2], -1, {1, 2}, True),
    (UNCLEAN, [1, 2], 2, {1}, True),  # the leader's broker is gone
])
def test_election_needed(election_type, replicas, leader, live, needed):
    assert election_needed(election_type, replicas, leader, live) is needed


ASSIGNMENTS = {("t", 0): Assignment((1, 2)), ("t", 1): Assignment((2, 1)), ("gone", 0): Assignment((1, 2)),
               ("new", 0): Assignment((1, 2))}
LEADERS = {("t", 0): 1, ("t", 1): 1, ("gone", 0): 2}  # ("new", 0) has no leader yet
NOT_NEEDED = ElectionResult(ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.ELECTION_NOT_NEEDED.message)
UNKNOWN = ElectionResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
DELETING = ElectionResult(ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is being deleted")


@pytest.mark.parametrize("tps,election_type,to_elect,answered", [
    ([("t", 0), ("t", 1)], PREFERRED, [("t", 1)], {("t", 0): NOT_NEEDED}),
    ([("t", 1), ("t", 1)], PREFERRED, [("t", 1)], {}),  # asked twice, elected once
    ([("x", 0), ("new", 0)], PREFERRED, [], {("x", 0): UNKNOWN, ("new", 0): UNKNOWN}),
    ([("gone", 0)], PREFERRED, [], {("gone", 0): DELETING}),
    ([("t", 0), ("t", 1)], UNCLEAN, [], {("t", 0): NOT_NEEDED, ("t", 1): NOT_NEEDED}),
])
def test_classify(tps, election_type, to_elect, answered):
    assert classify(tps, election_type, ASSIGNMENTS, LEADERS, {"gone"}, {1, 2}) == (to_elect, answered)


def test_classify_unclean_with_dead_leader():
    to_elect, answered = classify([("t", 0)], UNCLEAN, ASSIGNMENTS, LEADERS, set(), {2})
    assert (to_elect, answered) == ([("t", 0)], {})
