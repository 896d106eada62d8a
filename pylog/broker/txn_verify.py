"""KIP-890 part 1, as Kafka 3.6+ brokers do it (transaction.partition.verification.enable, on by default):
before a partition leader appends the first transactional batch of a producer's transaction, it asks the
transaction coordinator whether the partition was added to that transaction (AddPartitionsToTxn v4,
verifyOnly). A late batch of an aborted or committed transaction, from a zombie or a retry, would
otherwise open a transaction no marker will ever close, and the last stable offset would hang there.

KIP-890 part 2 (transaction version 2): the producer no longer sends AddPartitionsToTxn; its first
batch on a partition (Produce v12) makes the leader add the partition to the transaction instead of
only checking it (`add=True`, the same request without verifyOnly).

The coordinator is asked directly when it is this broker, else over the inter-broker connection kept
by the marker channel (AddPartitionsToTxn v5). Coordinator errors become NOT_ENOUGH_REPLICAS
(retriable for every producer) and PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH (what Produce
knows), as Kafka's AddPartitionsToTxnManager answers; a partition not in the transaction is
TRANSACTION_ABORTABLE (the Produce handler tells versions before 11 INVALID_TXN_STATE).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from pylog.common.types import TP
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.txn_host import TxnHost

log = logging.getLogger("pylog.coordinator.transaction")
VERSION = 5
REQUEST_TIMEOUT_S = 30.0
_RETRIABLE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS})
_AS_PRODUCE = {**dict.fromkeys(_RETRIABLE, ErrorCode.NOT_ENOUGH_REPLICAS),
               ErrorCode.PRODUCER_FENCED: ErrorCode.INVALID_PRODUCER_EPOCH}


def needs_verification(partition: Any, buf: bytes | bytearray | memoryview) -> tuple[int, int] | None:
    """(producer id, epoch) when `buf` starts a transaction on the partition (its producer has none open
    there, or one at an older epoch: a transaction version 2 producer's next transaction whose previous
    one's marker has not arrived yet, which the coordinator answers CONCURRENT_TRANSACTIONS), else None."""
    for h in records.iter_batches(buf):
        if h.attributes & records.TRANSACTIONAL_MASK and not h.attributes & records.CONTROL_MASK:
            if h.producer_id not in partition.log.open_txns.first_offsets:
                return h.producer_id, h.producer_epoch
            entry = partition.log.producer_state.producers.get(h.producer_id)
            if entry is not None and h.producer_epoch > entry.epoch:
                return h.producer_id, h.producer_epoch
        return None
    return None


async def verify(host: TxnHost | None, broker_id: int, transactional_id: str, producer_id: int,
                 producer_epoch: int, partitions: list[TP], add: bool = False) -> dict[TP, ErrorCode]:
    """Whether each partition is in the producer's transaction (NONE) or why it may not be written (`add`:
    add it first, transaction version 2); `host` is this broker's transaction coordinator host (None before
    it exists)."""
    if host is None:
        return dict.fromkeys(partitions, ErrorCode.NOT_ENOUGH_REPLICAS)
    err, node, _, _ = host.find(transactional_id)
    if err != ErrorCode.NONE:
        out = dict.fromkeys(partitions, err)
    elif node == broker_id and add:
        err = await host.coordinator.add_partitions(transactional_id, producer_id, producer_epoch, frozenset(partitions))
        out = dict.fromkeys(partitions, err)
    elif node == broker_id:
        out = await host.coordinator.verify_partitions(transactional_id, producer_id, producer_epoch,
                                                       frozenset(partitions))
    else:
        out = await _ask(host, node, transactional_id, producer_id, producer_epoch, partitions, add)
    return {tp: _AS_PRODUCE.get(e, e) for tp, e in out.items()}


async def _ask(host: TxnHost, node: int, transactional_id: str, producer_id: int, producer_epoch: int,
               partitions: list[TP], add: bool) -> dict[TP, ErrorCode]:
    cls = request_class(ApiKey.AddPartitionsToTxn)[VERSION]
    topics: dict[str, list[int]] = {}
    for topic, idx in partitions:
        topics.setdefault(topic, []).append(idx)
    req = cls(transactions=[cls.AddPartitionsToTxnTransaction(
        transactional_id=transactional_id, producer_id=producer_id, producer_epoch=producer_epoch, verify_only=not add,
        topics=[cls.AddPartitionsToTxnTransaction.AddPartitionsToTxnTopic(name=t, partitions=ps)
                for t, ps in topics.items()])])
    out = dict.fromkeys(partitions, ErrorCode.NOT_COORDINATOR)  # anything the answer leaves out is retried
    try:
        resp = await host.markers.connection(node).request(req, VERSION, REQUEST_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError, ConnectionError) as e:
        log.info("Verifying transactional id %r with broker %d failed: %s", transactional_id, node, e)
        return out
    if resp.error_code != 0:
        return dict.fromkeys(partitions, ErrorCode(resp.error_code))
    for r in resp.results_by_transaction:
        for t in r.topic_results:
            for p in t.results_by_partition:
                out[(t.name, p.partition_index)] = ErrorCode(p.partition_error_code)
    return out
