"""What DescribeTransactions and ListTransactions (v0) answer, from the coordinator's metadata.

Pure: the coordinator hands in the metadata it holds and whether it owns (and has loaded) the
ids' partitions; these functions apply Kafka's rules (TransactionCoordinator.handleDescribeTransactions,
TransactionStateManager.listTransactionStates): an id in state Dead is being expired and is
reported as not found / left out; state filters match Kafka's state names exactly, and the names
matching no state come back as unknown filters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pylog.common.errors import ErrorCode
from pylog.coordinator.transaction.metadata import TxnMetadata
from pylog.coordinator.transaction.state import TxnState

_BY_NAME = {s.kafka_name: s for s in TxnState}


@dataclass(frozen=True)
class TxnDescription:
    """One DescribeTransactions entry; the fields past `error` keep the schema's defaults on an error."""

    transactional_id: str
    error: ErrorCode
    state: str = ""
    timeout_ms: int = 0
    start_ms: int = 0
    producer_id: int = 0
    producer_epoch: int = 0
    topics: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class TxnListing:
    """One ListTransactions entry."""

    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class TxnList:
    """ListTransactions' answer from one coordinator."""

    error: ErrorCode
    unknown_state_filters: tuple[str, ...] = ()
    transactions: tuple[TxnListing, ...] = ()


def describe(transactional_id: str, owner_error: ErrorCode, meta: TxnMetadata | None) -> TxnDescription:
    """The entry for one id: `owner_error` is NONE when this coordinator owns the id's loaded partition."""
    if not transactional_id:
        return TxnDescription(transactional_id, ErrorCode.INVALID_REQUEST)
    if owner_error != ErrorCode.NONE:
        return TxnDescription(transactional_id, owner_error)
    if meta is None or meta.state is TxnState.DEAD:
        return TxnDescription(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(meta.partitions):
        by_topic.setdefault(topic, []).append(partition)
    return TxnDescription(transactional_id, ErrorCode.NONE, meta.state.kafka_name, meta.timeout_ms, meta.start_ms,
                          meta.producer_id, meta.producer_epoch,
                          tuple((t, tuple(ps)) for t, ps in by_topic.items()))


def list_transactions(metas: Iterable[TxnMetadata], state_filters: Iterable[str],
                      producer_id_filters: Iterable[int], loading: bool = False,
                      duration_filter_ms: int = -1, now_ms: int = 0) -> TxnList:
    """Every non-Dead id passing the filters (an empty filter passes all; a duration >= 0 passes only those
    whose transaction started more than that long before `now_ms`, KIP-994); LOAD_IN_PROGRESS while `loading`."""
    if loading:
        return TxnList(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    names = list(state_filters)
    states = {_BY_NAME[n] for n in names if n in _BY_NAME}
    unknown = tuple(dict.fromkeys(n for n in names if n not in _BY_NAME))
    pids = set(producer_id_filters)
    listed = tuple(TxnListing(m.transactional_id, m.producer_id, m.state.kafka_name)
                   for m in sorted(metas, key=lambda m: m.transactional_id)
                   if m.state is not TxnState.DEAD and (not pids or m.producer_id in pids)
                   and (not states or m.state in states)
                   and (duration_filter_ms < 0 or now_ms - m.start_ms > duration_filter_ms))
    return TxnList(ErrorCode.NONE, unknown, listed)
