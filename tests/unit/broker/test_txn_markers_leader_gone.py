"""A transaction's markers when the partition's leader leaves the metadata cache mid-write.

Found by scripts/chaos --nemesis partition,pause,kill,link,clock,disk,zk --workload txn --faults 21 --seed 5:
broker 1 was cut off, the controller's UpdateMetadata removed it between the marker channel's choice of
leaders and its send, `metadata.brokers[1]` raised KeyError, and the coordinator's completion task died
("Task exception was never retrieved"), leaving the transaction in PrepareCommit until its coordinator
moved. The send must count as a failed attempt (NOT_LEADER_OR_FOLLOWER, retried) instead.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from pylog.broker.txn_markers import TxnMarkerChannel
from pylog.protocol.errors import ErrorCode


class LeavingBrokers(dict):
    """A brokers map whose broker 1 is still listed when leaders are chosen and gone when it is dialled."""

    def __contains__(self, key: object) -> bool:
        return key == 1

    def get(self, key, default=None):
        return default


def test_a_leader_that_left_the_metadata_is_a_retried_failure_not_an_exception():
    metadata = SimpleNamespace(topics={"t": {0: SimpleNamespace(leader=1)}}, brokers=LeavingBrokers())
    channel = TxnMarkerChannel(0, metadata)
    got = asyncio.run(asyncio.wait_for(channel.write(7, 0, 0, True, frozenset({("t", 0)})), 10))
    assert got == {("t", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER}
