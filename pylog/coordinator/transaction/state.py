"""Kafka's transaction states as data (the states each may follow) plus one transition function.

  Empty/Complete*      -> Ongoing            the first AddPartitionsToTxn / AddOffsetsToTxn
  Ongoing              -> PrepareCommit      EndTxn(commit) written to the transaction log
  Ongoing              -> PrepareAbort       EndTxn(abort), or a timed-out transaction aborted
  Empty/Complete*      -> PrepareAbort       EndTxn v5 (abort) with nothing open: the epoch bump alone
  Ongoing              -> PrepareEpochFence  InitProducerId fencing a zombie with an open transaction
  PrepareEpochFence    -> PrepareAbort       the fenced transaction is aborted with the bumped epoch
  PrepareCommit        -> CompleteCommit     every partition leader wrote the COMMIT marker
  PrepareAbort         -> CompleteAbort      every partition leader wrote the ABORT marker
  Empty/Complete*      -> Empty              InitProducerId bumped the epoch
  Empty/Complete*      -> Dead               the transactional id expired (then a tombstone)

The numeric value is the `TransactionStatus` int8 of TransactionLogValue; the name is what
DescribeTransactions and ListTransactions report. PrepareEpochFence is a step taken in memory on
the way to PrepareAbort, never written to `__transaction_state` (as in Kafka); a status 7 read
from an older log loads as PrepareAbort (metadata.from_log_value).
"""

from __future__ import annotations

import enum

# IllegalStateTransition is named from here too: the one class, whose transition raised it.
from pylog.common.states import IllegalStateTransition, StateTable  # noqa: F401


class TxnState(enum.Enum):
    """A transactional id's state; value = (TransactionStatus byte, Kafka's name)."""

    EMPTY = (0, "Empty")
    ONGOING = (1, "Ongoing")
    PREPARE_COMMIT = (2, "PrepareCommit")
    PREPARE_ABORT = (3, "PrepareAbort")
    COMPLETE_COMMIT = (4, "CompleteCommit")
    COMPLETE_ABORT = (5, "CompleteAbort")
    DEAD = (6, "Dead")
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence")

    @property
    def id(self) -> int:
        """The TransactionStatus byte written to `__transaction_state`."""
        return self.value[0]

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions / ListTransactions / kafka-transactions.sh show."""
        return self.value[1]


S = TxnState

PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    # From Empty/Complete* too: transaction version 2's EndTxn(abort) bumps the epoch with nothing open.
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}

# States in which nothing is in flight, so the transactional id may expire (Kafka's isExpirationAllowed).
EXPIRATION_ALLOWED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})
# States whose markers are still being written: a new request must wait (CONCURRENT_TRANSACTIONS).
PREPARING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT, S.PREPARE_EPOCH_FENCE})

_BY_ID = {s.id: s for s in TxnState}


TABLE = StateTable("TransactionalId", PREVIOUS, lambda s: s.kafka_name)
# `target` if the table allows coming to it from `current`; raises IllegalStateTransition otherwise.
transition = TABLE.transition


def from_id(status: int) -> TxnState:
    """The state a TransactionStatus byte names; ValueError for an unknown byte."""
    try:
        return _BY_ID[status]
    except KeyError:
        raise ValueError(f"unknown transaction status {status}") from None


def parse_state(name: str) -> TxnState | None:
    """A state from its Kafka name, case-insensitively (ListTransactions' state filter); None if unknown."""
    for s in TxnState:
        if s.kafka_name.lower() == name.lower():
            return s
    return None
