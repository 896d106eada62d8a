"""A transactional id's metadata as the coordinator keeps it, and its `__transaction_state` value."""

from __future__ import annotations

from dataclasses import dataclass, field

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
        meta.update_ms, meta.start_ms, previous_producer_id=meta.previous_producer_id)


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
    return TxnMetadata(transactional_id, v.producer_id, producer_epoch=v.producer_epoch,
                       previous_producer_id=v.previous_producer_id, timeout_ms=v.timeout_ms,
                       state=state, partitions=partitions, start_ms=v.start_ms,
                       update_ms=v.last_update_ms)
