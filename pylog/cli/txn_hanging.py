"""find-hanging: open transactions on partitions that their coordinator no longer knows about.

Kafka's FindHangingTransactionsCommand, step by step: the partitions to search (one, a topic's, or
every non-internal topic's, limited to those with a replica on --broker-id), the producers there
with an open transaction older than the maximum transaction timeout, their transactional ids
(ListTransactions filtered by producer id), and those ids' transactions (DescribeTransactions). An
open transaction is hanging when no transactional id owns its producer id, the id is gone, or the
id's current transaction does not include the partition.
"""

from __future__ import annotations

from typing import Callable, Iterator, NoReturn, TypeVar

from pylog.cli.admin_client import ApiError
from pylog.cli.txn_admin import TP, ProducerState, TxnAdmin, TxnDescription
from pylog.protocol.errors import ErrorCode

HANGING_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)")
MAX_BATCH_SIZE = 500  # partitions per DescribeProducers, topics per Metadata, as Kafka's tool batches them

Fail = Callable[..., NoReturn]
T = TypeVar("T")


def _in_batches(items: list[T]) -> Iterator[list[T]]:
    """consumeInBatches: the items, MAX_BATCH_SIZE at a time."""
    for i in range(0, len(items), MAX_BATCH_SIZE):
        yield items[i:i + MAX_BATCH_SIZE]


def _java_optional(value: int | None) -> str:
    return "Optional.empty" if value is None else f"Optional[{value}]"


def search_partitions(admin: TxnAdmin, topic: str | None, partition: int | None, broker_id: int | None,
                      fail: Fail) -> list[TP]:
    """The partitions to look at."""
    if topic is not None and partition is not None:
        return [(topic, partition)]
    try:
        topics = [topic] if topic is not None else sorted(
            t.name for t in admin.admin.metadata(None).topics.values() if not t.is_internal)
    except Exception as e:
        fail("Failed to list topics", e)
    out: list[TP] = []
    for batch in _in_batches(topics):
        try:
            found = admin.partitions(batch, broker_id)
        except Exception as e:
            fail(f"Failed to describe {len(batch)} topics", e)
        out += found
    return out


def open_candidates(admin: TxnAdmin, tps: list[TP], broker_id: int | None, max_timeout_ms: int, now_ms: int,
                    fail: Fail) -> list[tuple[TP, ProducerState]]:
    """Producers with an open transaction whose last write is older than the timeout."""
    out = []
    for batch in _in_batches(tps):
        try:
            states = admin.describe_producers(batch, broker_id)
        except Exception as e:
            fail(f"Failed to describe producers for {len(batch)} partitions on broker {_java_optional(broker_id)}", e)
        out += [(tp, s) for tp in batch for s in states.get(tp, ())
                if s.txn_start_offset is not None and now_ms - s.last_timestamp > max_timeout_ms]
    return out


def _descriptions(admin: TxnAdmin, tids: list[str], fail: Fail) -> dict[str, TxnDescription | None]:
    out: dict[str, TxnDescription | None] = {}
    try:
        for tid in tids:
            try:
                out[tid] = admin.describe_transaction(tid)
            except ApiError as e:
                if e.code != ErrorCode.TRANSACTIONAL_ID_NOT_FOUND:
                    raise
                out[tid] = None
    except Exception as e:
        fail(f"Failed to describe {len(tids)} transactions", e)
    return out


def find_hanging(admin: TxnAdmin, topic: str | None, partition: int | None, broker_id: int | None,
                 max_timeout_ms: int, fail: Fail, now_ms: Callable[[], int]) -> list[list[str]]:
    """The table rows of the hanging transactions found."""
    tps = search_partitions(admin, topic, partition, broker_id, fail)
    candidates = open_candidates(admin, tps, broker_id, max_timeout_ms, now_ms(), fail)
    hanging: list[tuple[TP, ProducerState]] = []
    if candidates:
        pids = sorted({s.producer_id for _, s in candidates})
        try:
            listed = admin.list_transactions(producer_ids=pids)
        except Exception as e:
            fail(f"Failed to list transactions for {len(pids)} producers", e)
        tid_of = {pid: tid for listings in listed.values() for tid, pid, _ in listings if pid in pids}
        described = _descriptions(admin, sorted(set(tid_of.values())), fail)
        for tp, s in candidates:
            d = described.get(tid_of[s.producer_id]) if s.producer_id in tid_of else None
            if d is None or tp not in d.partitions:
                hanging.append((tp, s))
    now = now_ms()
    return [[tp[0], str(tp[1]), str(s.producer_id), str(s.producer_epoch),
             str(-1 if s.coordinator_epoch is None else s.coordinator_epoch),
             str(-1 if s.txn_start_offset is None else s.txn_start_offset), str(s.last_timestamp),
             str((now - s.last_timestamp) // 60000)]
            for tp, s in sorted(hanging, key=lambda h: (h[0], h[1].producer_id))]
