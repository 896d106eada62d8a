"""A transactional id's metadata as the coordinator keeps it, and its `__transaction_state` value."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pylog.coordinator.transaction.records import TxnLogValue
from pylog.coordinator.transaction.state import TxnState, from_id, transition

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


@dataclass(frozen=True)
class TxnMetadata:
    """One transactional id as the coordinator keeps it (TransactionLogValue plus what is in flight)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    previous_producer_id: int = NO_PRODUCER_ID
    timeout_ms: int = 60000
    state: TxnState = TxnState.EMPTY
    partitions: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    start_ms: int = -1
    update_ms: int = -1
    pending: TxnState | None = None  # a transition written but not yet durable
    # KIP-890 part 2: the id the producer moves to once an epoch-exhausting EndTxn completes, and whether
    # the last EndTxn was a transaction-version-2 one (only such an EndTxn may be retried at the old epoch).
    next_producer_id: int = NO_PRODUCER_ID
    client_version: int = 0


def to_log_value(meta: TxnMetadata) -> TxnLogValue:
    """The TransactionLogValue to write; partitions are null in Empty, as Kafka writes them.

    PrepareEpochFence is never written (Kafka keeps it in memory): ValueError, a coordinator bug.
    """
    if meta.state is TxnState.PREPARE_EPOCH_FENCE:
        raise ValueError(f"transactional id {meta.transactional_id!r}: PrepareEpochFence is never written")
    parts: dict[str, list[int]] = {}
    for topic, p in sorted(meta.partitions):
        parts.setdefault(topic, []).append(p)
    return TxnLogValue(
        meta.producer_id, meta.producer_epoch, meta.timeout_ms, meta.state.id,
        None if meta.state is TxnState.EMPTY else {t: tuple(ps) for t, ps in parts.items()},
        meta.update_ms, meta.start_ms, previous_producer_id=meta.previous_producer_id,
        next_producer_id=meta.next_producer_id, client_transaction_version=meta.client_version)


def from_log_value(transactional_id: str, v: TxnLogValue) -> TxnMetadata:
    """The metadata a loaded TransactionLogValue stands for (ValueError for an unknown status).

    Older pylog versions wrote PrepareEpochFence (status 7) with the bumped epoch before writing
    the abort; such a record stands for an abort in progress at that epoch, so it loads as
    PrepareAbort and the loader finishes it (its markers, then CompleteAbort).
    """
    partitions = frozenset((t, p) for t, ps in (v.partitions or {}).items() for p in ps)
    state = from_id(v.status)
    if state is TxnState.PREPARE_EPOCH_FENCE:
        state = transition(state, TxnState.PREPARE_ABORT)
    meta = TxnMetadata(transactional_id, v.producer_id, producer_epoch=v.producer_epoch,
                       previous_producer_id=v.previous_producer_id, timeout_ms=v.timeout_ms,
                       state=state, partitions=partitions, start_ms=v.start_ms,
                       update_ms=v.last_update_ms, next_producer_id=v.next_producer_id,
                       client_version=v.client_transaction_version)
    return replace(meta, last_producer_epoch=_bumped_from(meta))


def _bumped_from(meta: TxnMetadata) -> int:
    """The epoch a transaction-version-2 EndTxn bumped from (its retry's epoch), which the log does not keep."""
    if meta.client_version < 2 or meta.state not in _ENDED:
        return NO_PRODUCER_EPOCH
    if meta.producer_epoch == 0 and meta.previous_producer_id != NO_PRODUCER_ID:
        return EXHAUSTED_EPOCH  # the id rotated: the retry comes with the old id at its last epoch
    return meta.producer_epoch - 1


# Kafka rotates to a new producer id once the int16 epoch reaches this (TransactionMetadata.isEpochExhausted).
EXHAUSTED_EPOCH = 32767 - 1
_ENDED = frozenset({TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.COMPLETE_COMMIT,
                    TxnState.COMPLETE_ABORT})
