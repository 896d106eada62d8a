"""The transaction coordinator: one broker's transactional ids, persisted in `__transaction_state`.

Every change is written (acks=all) to the id's `__transaction_state` partition before it is
applied and answered; while the write is in flight the id carries a pending state, so a
concurrent request gets CONCURRENT_TRANSACTIONS. Once PrepareCommit/PrepareAbort is durable the
outcome is decided and the markers are written in a task of their own, retried until every
partition leader has them, then Complete* is written; EndTxn is answered when that is done or
after a short wait (see end_txn), whichever comes first. A broker that becomes leader of a partition replays
it and finishes the half-done commits and aborts it finds there; requests for its ids meanwhile get
COORDINATOR_LOAD_IN_PROGRESS, as in Kafka (pylog/coordinator/ownership.py, shared with the group coordinator).

The coordinator never touches partitions or sockets: `TxnLog` (the broker over the topic),
`MarkerWriter` (WriteTxnMarkers to partition leaders) and `ProducerIds` are its seams.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from typing import AsyncIterator, Awaitable, Callable, Iterable, Protocol

from pylog.common.clock import now_ms
from pylog.common.errors import ErrorCode
from pylog.common.types import TP
from pylog.coordinator.ownership import Ownership, partition_for as coordinator_partition
from pylog.coordinator.transaction import decisions, queries
from pylog.coordinator.transaction.metadata import TxnMetadata, from_log_value, to_log_value
from pylog.coordinator.transaction.records import (
    RecordFormatError, decode_key, decode_value, encode_key, encode_value,
)
from pylog.coordinator.transaction.state import EXPIRATION_ALLOWED, TxnState, transition
from pylog.metrics.recorders import TXNS as TXN_METRICS

log = logging.getLogger("pylog.coordinator.transaction")
S = TxnState
E = ErrorCode
TRANSACTION_STATE_TOPIC = "__transaction_state"


class TxnLog(Protocol):
    """What the coordinator may ask of the broker about `__transaction_state`."""

    def num_partitions(self) -> int:
        """The topic's partition count (transaction.state.log.num.partitions)."""

    def leader_epoch(self, partition: int) -> int | None:
        """The leader epoch this broker leads the partition at (the coordinator epoch), or None."""

    async def append(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append as leader and wait for every ISR member (acks=all)."""

    def read(self, partition: int) -> AsyncIterator[tuple[bytes, bytes | None]]:
        """Every (key, value) of the partition from its log start, in offset order."""


class MarkerWriter(Protocol):
    """Sends WriteTxnMarkers to the leaders of a transaction's partitions."""

    async def write(self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                    partitions: frozenset[TP]) -> dict[TP, ErrorCode]:
        """One attempt; the error of each partition (NONE where the marker is written)."""


@dataclass(frozen=True)
class TxnConfig:
    """The broker's transaction coordinator settings (Kafka's keys and defaults)."""

    max_timeout_ms: int = 900000
    marker_retry_backoff_ms: int = 100
    # How long EndTxn waits for the markers and Complete* before answering anyway (pylog's own, see end_txn).
    end_txn_complete_wait_ms: int = 50


@dataclass(frozen=True)
class InitResult:
    """InitProducerId's answer."""

    error: ErrorCode
    producer_id: int = -1
    producer_epoch: int = -1


class TransactionCoordinator:
    """Transactional ids of the `__transaction_state` partitions this broker leads."""

    def __init__(self, store: TxnLog, markers: MarkerWriter, new_producer_id: Callable[[], Awaitable[int]],
                 partition_for: Callable[[str, int], int] = coordinator_partition, config: TxnConfig = TxnConfig(),
                 now_ms: Callable[[], int] = now_ms) -> None:
        self.store, self.markers, self.new_producer_id = store, markers, new_producer_id
        self.partition_for, self.config = partition_for, config
        self.now_ms = now_ms
        self.log_value_version: Callable[[], int] = lambda: 0  # 1 once transaction.version >= 1 is finalized
        self.txns: dict[str, TxnMetadata] = {}
        self._tasks: set[asyncio.Task] = set()
        self.ownership: Ownership[dict[str, bytes | None]] = Ownership(
            TRANSACTION_STATE_TOPIC, store.leader_epoch, self._read, self._install, self._drop)

    # -- ownership and loading ------------------------------------------------------------------

    @property
    def loaded(self) -> dict[int, int]:
        """Partition -> the coordinator (leader) epoch it was loaded at."""
        return self.ownership.loaded

    def partition_of(self, transactional_id: str) -> int:
        """The `__transaction_state` partition of a transactional id."""
        return self.partition_for(transactional_id, self.store.num_partitions())

    def check(self, transactional_id: str) -> ErrorCode:
        """NONE when this broker coordinates the id now; COORDINATOR_LOAD_IN_PROGRESS while its partition loads."""
        return self.ownership.check(self.partition_of(transactional_id))

    def check_partition(self, p: int) -> ErrorCode:
        """NONE when this broker leads partition `p` and has loaded it (else it loads or forgets it)."""
        return self.ownership.check(p)

    def on_leadership_change(self, p: int) -> None:
        """The broker became (or stopped being) leader of partition `p`: load it (finishing the commits and
        aborts it left half done) or forget it."""
        self.ownership.check(p)

    async def _read(self, p: int) -> dict[str, bytes | None]:
        latest: dict[str, bytes | None] = {}
        async for key, value in self.store.read(p):
            try:
                latest[decode_key(key)] = value
            except RecordFormatError as e:
                log.warning("Skipping an unreadable __transaction_state-%d key: %s", p, e)
        return latest

    def _install(self, p: int, epoch: int, latest: dict[str, bytes | None]) -> None:
        """Take partition `p`'s replayed ids and resume the commits and aborts it left half done."""
        for tid, value in latest.items():
            if value is None:
                continue
            try:
                self.txns[tid] = from_log_value(tid, decode_value(value))
            except (RecordFormatError, ValueError) as e:
                log.warning("Skipping transactional id %r of __transaction_state-%d: %s", tid, p, e)
        for meta in [m for m in self.txns.values() if self.partition_of(m.transactional_id) == p]:
            if meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                self._spawn(self._complete(meta.transactional_id))

    def _drop(self, p: int) -> None:
        """Forget partition `p`'s ids (another broker coordinates them now)."""
        for tid in [t for t in self.txns if self.partition_of(t) == p]:
            del self.txns[tid]

    # -- writes ---------------------------------------------------------------------------------

    async def _write(self, meta: TxnMetadata, target: TxnMetadata) -> ErrorCode:
        """Persist `target` with `meta` pending meanwhile; apply it once durable."""
        tid = meta.transactional_id
        self.txns[tid] = replace(meta, pending=target.state)
        if target.pending is not None:
            target = replace(target, pending=None)
        value = encode_value(to_log_value(target), self.log_value_version())
        try:
            err = await self.store.append(self.partition_of(tid), [(encode_key(tid), value)])
        except Exception:
            log.exception("Writing transactional id %r failed", tid)
            err = E.COORDINATOR_NOT_AVAILABLE
        if err != E.NONE:
            self.txns[tid] = meta  # nothing changed: the client retries
            return E.NOT_COORDINATOR if err == E.NOT_LEADER_OR_FOLLOWER else E.COORDINATOR_NOT_AVAILABLE
        self.txns[tid] = target
        return E.NONE

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _complete(self, tid: str) -> None:
        """Write the markers of a Prepare* transaction until all are in, then Complete*."""
        while True:
            meta = self.txns.get(tid)
            if meta is None or meta.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                return  # unloaded, or done by another task
            left = meta.partitions
            while left:
                coordinator_epoch = self._still_leading(tid)
                if coordinator_epoch is None:
                    return  # the new coordinator resumes it when it loads the partition
                try:
                    results = await self.markers.write(meta.producer_id, meta.producer_epoch, coordinator_epoch,
                                                       meta.state is S.PREPARE_COMMIT, left)
                except Exception:  # a dead task would leave the transaction in Prepare* until the coordinator moves
                    log.exception("Writing the markers of %s failed; retrying", tid)
                    results = {}
                left = frozenset(tp for tp in left if results.get(tp) not in (E.NONE, E.UNKNOWN_TOPIC_OR_PARTITION))
                if left:
                    await asyncio.sleep(self.config.marker_retry_backoff_ms / 1000)
            if self.txns.get(tid) is not meta:
                continue
            done = decisions.complete(meta, self.now_ms())
            if await self._write(meta, done) == E.NONE:
                TXN_METRICS.count(done.state is TxnState.COMPLETE_COMMIT)
                return
            await asyncio.sleep(self.config.marker_retry_backoff_ms / 1000)

    def _still_leading(self, tid: str) -> int | None:
        """The coordinator epoch if this broker still leads the id's partition at the epoch it loaded."""
        return self.ownership.epoch(self.partition_of(tid))

    # -- requests -------------------------------------------------------------------------------

    async def init_producer_id(self, tid: str, timeout_ms: int, producer_id: int = -1,
                               producer_epoch: int = -1) -> InitResult:
        """InitProducerId with a transactional id: a bumped epoch, fencing older producers of the id."""
        if timeout_ms <= 0 or timeout_ms > self.config.max_timeout_ms:
            return InitResult(E.INVALID_TRANSACTION_TIMEOUT)
        err = self.check(tid)
        if err != E.NONE:
            return InitResult(err)
        meta = self.txns.get(tid)
        if meta is None or meta.state is S.DEAD:
            meta = self.txns[tid] = TxnMetadata(tid, await self.new_producer_id(), timeout_ms=timeout_ms)
        spare = await self.new_producer_id() if decisions.is_epoch_exhausted(meta.producer_epoch) else -1
        d = decisions.init_producer_id(meta, producer_id, producer_epoch, timeout_ms, spare, self.now_ms())
        if d.write is not None:
            err = await self._write(meta, d.write)
            if err != E.NONE:
                return InitResult(err)
        if d.write is not None and d.write.state is S.PREPARE_ABORT:
            self._spawn(self._complete(tid))  # the fenced zombie's transaction; the client retries meanwhile
        if d.error != E.NONE:
            return InitResult(d.error)
        now = self.txns[tid]
        return InitResult(E.NONE, now.producer_id, now.producer_epoch)

    async def _owned(self, tid: str) -> tuple[ErrorCode, TxnMetadata | None]:
        """The id's metadata if this broker coordinates it and knows it, else the error to answer."""
        err = self.check(tid)
        if err != E.NONE:
            return err, None
        meta = self.txns.get(tid)
        return (E.NONE, meta) if meta is not None else (E.INVALID_PRODUCER_ID_MAPPING, None)

    async def add_partitions(self, tid: str, producer_id: int, producer_epoch: int,
                             partitions: frozenset[TP]) -> ErrorCode:
        """AddPartitionsToTxn / AddOffsetsToTxn (with the group's `__consumer_offsets` partition)."""
        err, meta = await self._owned(tid)
        if meta is None:
            return err
        d = decisions.add_partitions(meta, producer_id, producer_epoch, partitions, self.now_ms())
        if d.write is not None and d.error == E.NONE:
            return await self._write(meta, d.write)
        return d.error

    async def verify_partitions(self, tid: str, producer_id: int, producer_epoch: int,
                                partitions: frozenset[TP]) -> dict[TP, ErrorCode]:
        """AddPartitionsToTxn v4 verifyOnly: whether each partition is in the transaction (no log write)."""
        err, meta = await self._owned(tid)
        if meta is None:
            return dict.fromkeys(partitions, err)
        return decisions.verify_partitions(meta, producer_id, producer_epoch, partitions)

    async def end_txn(self, tid: str, producer_id: int, producer_epoch: int, commit: bool) -> ErrorCode:
        """EndTxn: decided once Prepare* is durable; answered when the markers and Complete* are in too, or
        after `end_txn_complete_wait_ms` while they go on in the background.

        Kafka answers at Prepare*; the client's next AddPartitionsToTxn then usually finds the markers still
        going out and gets CONCURRENT_TRANSACTIONS, which librdkafka and the Java client retry only after
        20 ms -- most of the time between two small transactions. Waiting a little for the completion (a
        few milliseconds) costs the committer that, and the next transaction starts at once.
        """
        err, meta = await self._owned(tid)
        if meta is None:
            return err
        return await self._decided(meta, decisions.end_txn(meta, producer_id, producer_epoch, commit, self.now_ms()))

    async def end_txn_v2(self, tid: str, producer_id: int, producer_epoch: int, commit: bool) -> InitResult:
        """EndTxn v5 (transaction version 2): as end_txn, with the epoch bumped; answers the producer id and
        epoch the client's next transaction uses."""
        err, meta = await self._owned(tid)
        if meta is None:
            return InitResult(err)
        spare = await self.new_producer_id() if decisions.is_epoch_exhausted(meta.producer_epoch) else -1
        d = decisions.end_txn_v2(meta, producer_id, producer_epoch, commit, spare, self.now_ms())
        err = await self._decided(meta, d)
        if err != E.NONE:
            return InitResult(err)
        return InitResult(E.NONE, *decisions.answer_ids(self.txns.get(tid, meta)))

    async def _decided(self, meta: TxnMetadata, d: decisions.Decision) -> ErrorCode:
        """Write an EndTxn's Prepare* and start its markers; wait a little for them (see end_txn)."""
        if d.write is None or d.error != E.NONE:
            return d.error
        err = await self._write(meta, d.write)
        if err == E.NONE:
            done = self._spawn(self._complete(meta.transactional_id))
            await asyncio.wait((done,), timeout=self.config.end_txn_complete_wait_ms / 1000)  # never cancels it
        return err

    async def abort_timed_out(self) -> int:
        """Fence and abort Ongoing transactions older than their timeout; how many were started."""
        now, started = self.now_ms(), 0
        for meta in list(self.txns.values()):
            if meta.state is not S.ONGOING or meta.pending is not None or now - meta.start_ms < meta.timeout_ms:
                continue
            if await self._write(meta, decisions.fence_and_abort(meta, now)) == E.NONE:
                self._spawn(self._complete(meta.transactional_id))
                started += 1
        return started

    async def expire_transactional_ids(self, expiration_ms: int) -> int:
        """transactional.id.expiration.ms: ids idle that long in Empty/Complete* become Dead and get a
        tombstone, so the next InitProducerId starts them afresh; how many were removed."""
        now, removed = self.now_ms(), 0
        for meta in list(self.txns.values()):
            if meta.state not in EXPIRATION_ALLOWED or meta.pending is not None or now - meta.update_ms < expiration_ms:
                continue
            tid = meta.transactional_id
            transition(meta.state, S.DEAD)
            self.txns[tid] = replace(meta, pending=S.DEAD)
            try:
                err = await self.store.append(self.partition_of(tid), [(encode_key(tid), None)])
            except Exception:
                log.exception("Writing the tombstone of transactional id %r failed", tid)
                err = E.COORDINATOR_NOT_AVAILABLE
            if err == E.NONE and self.txns.get(tid) is not None and self.txns[tid].pending is S.DEAD:
                del self.txns[tid]
                removed += 1
            elif tid in self.txns:
                self.txns[tid] = meta
        return removed

    # -- queries --------------------------------------------------------------------------------

    async def describe(self, tid: str) -> queries.TxnDescription:
        """DescribeTransactions' entry for one transactional id."""
        err = self.check(tid) if tid else E.NONE
        return queries.describe(tid, err, self.txns.get(tid))

    async def list_transactions(self, state_filters: Iterable[str] = (), producer_id_filters: Iterable[int] = (),
                                duration_filter_ms: int = -1) -> queries.TxnList:
        """ListTransactions over every `__transaction_state` partition this broker leads (LOAD_IN_PROGRESS while
        one still loads)."""
        loading = False
        for p in range(self.store.num_partitions()):
            if self.store.leader_epoch(p) is not None and self.ownership.check(p) != E.NONE:
                loading = True  # its load failed or is still running: Kafka answers LOAD_IN_PROGRESS
        owned = [m for m in self.txns.values() if self.partition_of(m.transactional_id) in self.loaded]
        return queries.list_transactions(owned, state_filters, producer_id_filters, loading,
                                         duration_filter_ms, self.now_ms())

    async def close(self) -> None:
        """Stop the background marker tasks."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
