"""What the transaction coordinator answers, as pure functions of a transactional id's metadata.

Each function returns the error to send and, when the request changes the transaction, the state
to move to (written to `__transaction_state` before the reply). The rules are Kafka's
TransactionCoordinator. Before KIP-890 part 2 (EndTxn v0-4) the epoch is bumped by InitProducerId
only, so a retried EndTxn on the same producer id and epoch is answered NONE once the outcome is
complete. With transaction version 2 (EndTxn v5, `end_txn_v2`) every EndTxn bumps the epoch, so
the markers fence every late request of the transaction they end, and a retry is recognised by
the epoch it was bumped from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pylog.common.errors import ErrorCode
from pylog.coordinator.transaction.metadata import EXHAUSTED_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TxnMetadata
from pylog.coordinator.transaction.state import PREPARING, TxnState, transition

S = TxnState
E = ErrorCode
EPOCH_EXHAUSTED_AT = EXHAUSTED_EPOCH
TV2 = 2  # transaction.version 2: the client version written with an epoch-bumping EndTxn


@dataclass(frozen=True)
class Decision:
    """The reply's error and, if the request changes the transaction, the metadata to write."""

    error: ErrorCode
    write: TxnMetadata | None = None


def is_epoch_exhausted(epoch: int) -> bool:
    """True when the next bump would overflow the int16 epoch, so a new producer id is needed."""
    return epoch >= EPOCH_EXHAUSTED_AT


def _check_producer(meta: TxnMetadata, producer_id: int, epoch: int) -> ErrorCode | None:
    if producer_id == meta.next_producer_id != NO_PRODUCER_ID:
        return E.CONCURRENT_TRANSACTIONS  # EndTxn v5 handed out the rotated id; its markers are still going out
    if meta.state is S.DEAD or producer_id != meta.producer_id:
        return E.INVALID_PRODUCER_ID_MAPPING
    if epoch != meta.producer_epoch:
        return E.PRODUCER_FENCED
    if meta.pending is not None:
        return E.CONCURRENT_TRANSACTIONS
    return None


def add_partitions(meta: TxnMetadata, producer_id: int, epoch: int,
                   partitions: frozenset[tuple[str, int]], now_ms: int) -> Decision:
    """AddPartitionsToTxn / AddOffsetsToTxn: join the partitions to the transaction, starting it if needed."""
    error = _check_producer(meta, producer_id, epoch)
    if error is not None:
        return Decision(error)
    if meta.state in PREPARING:
        return Decision(E.CONCURRENT_TRANSACTIONS)
    if meta.state is S.ONGOING and partitions <= meta.partitions:
        return Decision(E.NONE)  # nothing new: no log write
    starting = meta.state is not S.ONGOING
    return Decision(E.NONE, replace(
        meta, state=transition(meta.state, S.ONGOING), partitions=meta.partitions | partitions,
        start_ms=now_ms if starting else meta.start_ms, update_ms=now_ms))


def verify_partitions(meta: TxnMetadata, producer_id: int, epoch: int,
                      partitions: frozenset[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
    """AddPartitionsToTxn v4+ verifyOnly (KIP-890 part 1): NONE for each partition already in the transaction,
    TRANSACTION_ABORTABLE for the others, as Kafka 3.8+ answers (the handler tells older versions
    INVALID_TXN_STATE, Kafka 3.7's answer); a wrong producer fails them all."""
    error = _check_producer(meta, producer_id, epoch)
    if error is None and meta.state in PREPARING:
        error = E.CONCURRENT_TRANSACTIONS
    if error is not None:
        return dict.fromkeys(partitions, error)
    return {tp: E.NONE if tp in meta.partitions else E.TRANSACTION_ABORTABLE for tp in partitions}


_END_RETRY = {  # (state, commit) -> answer to an EndTxn whose outcome is already decided
    (S.COMPLETE_COMMIT, True): E.NONE, (S.COMPLETE_ABORT, False): E.NONE,
    (S.PREPARE_COMMIT, True): E.CONCURRENT_TRANSACTIONS, (S.PREPARE_ABORT, False): E.CONCURRENT_TRANSACTIONS,
}


def end_txn(meta: TxnMetadata, producer_id: int, epoch: int, commit: bool, now_ms: int) -> Decision:
    """EndTxn: Ongoing moves to PrepareCommit/PrepareAbort; a retry of a decided outcome is NONE."""
    error = _check_producer(meta, producer_id, epoch)
    if error is not None:
        return Decision(error)
    if meta.state is S.ONGOING:
        target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        return Decision(E.NONE, replace(meta, state=transition(meta.state, target), client_version=0,
                                        update_ms=now_ms))
    return Decision(_END_RETRY.get((meta.state, commit), E.INVALID_TXN_STATE))


def _is_v2_retry(meta: TxnMetadata, producer_id: int, epoch: int) -> bool:
    """Whether an EndTxn v5 repeats the one that ended the last transaction (it still has the epoch before
    that EndTxn's bump)."""
    if meta.client_version < TV2 or epoch == NO_PRODUCER_EPOCH or epoch != meta.last_producer_epoch:
        return False
    if meta.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return False
    rotated = meta.producer_epoch == 0 and producer_id == meta.previous_producer_id
    return producer_id == meta.producer_id or rotated


def _bump(meta: TxnMetadata, target: TxnState, next_producer_id: int, now_ms: int) -> TxnMetadata:
    """`meta` moved to Prepare* with its epoch bumped (the markers carry that epoch); an exhausted epoch
    also names the producer id the client moves to once the markers are in (`complete`)."""
    rotate = is_epoch_exhausted(meta.producer_epoch)
    return replace(meta, state=transition(meta.state, target), producer_epoch=meta.producer_epoch + 1,
                   last_producer_epoch=meta.producer_epoch, client_version=TV2,
                   next_producer_id=next_producer_id if rotate else NO_PRODUCER_ID, update_ms=now_ms)


def end_txn_v2(meta: TxnMetadata, producer_id: int, epoch: int, commit: bool, next_producer_id: int,
               now_ms: int) -> Decision:
    """EndTxn v5 (transaction.version 2, KIP-890 part 2): Ongoing moves to Prepare* at epoch + 1; an abort
    with nothing open bumps the epoch too (the client cannot know whether its Produce reached a partition);
    a retry at the old epoch gets the outcome already decided. `next_producer_id` is used only when the
    epoch is exhausted."""
    if _is_v2_retry(meta, producer_id, epoch):
        return Decision(E.CONCURRENT_TRANSACTIONS if meta.pending is not None
                        else _END_RETRY.get((meta.state, commit), E.INVALID_TXN_STATE))
    error = _check_producer(meta, producer_id, epoch)
    if error is not None:
        return Decision(error)
    target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
    if meta.state is S.ONGOING:
        return Decision(E.NONE, _bump(meta, target, next_producer_id, now_ms))
    if not commit and meta.state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return Decision(E.NONE, replace(_bump(meta, target, next_producer_id, now_ms), partitions=frozenset()))
    if meta.state in PREPARING:
        return Decision(E.CONCURRENT_TRANSACTIONS)
    return Decision(E.INVALID_TXN_STATE)


def answer_ids(meta: TxnMetadata) -> tuple[int, int]:
    """The producer id and epoch EndTxn v5 answers with: the rotated id at epoch 0 once the epoch ran out."""
    if meta.next_producer_id != NO_PRODUCER_ID:
        return meta.next_producer_id, 0
    return meta.producer_id, meta.producer_epoch


def fence_and_abort(meta: TxnMetadata, now_ms: int) -> TxnMetadata:
    """An Ongoing transaction fenced (a new InitProducerId, or its timeout) and aborted with the bumped epoch.

    PrepareEpochFence is Kafka's in-memory step only (TransactionMetadata.prepareFenceProducerEpoch
    then endTransaction): what is written is this PrepareAbort, whose epoch no producer holds, so
    the zombie is fenced and its markers outrank its late batches. No producer may re-init as a
    retry of this bump, hence no last epoch (Kafka's NO_PRODUCER_EPOCH).
    """
    fencing = transition(meta.state, S.PREPARE_EPOCH_FENCE)
    return replace(meta, state=transition(fencing, S.PREPARE_ABORT), producer_epoch=meta.producer_epoch + 1,
                   last_producer_epoch=NO_PRODUCER_EPOCH, update_ms=now_ms)


def complete(meta: TxnMetadata, now_ms: int) -> TxnMetadata:
    """Every marker is written: PrepareCommit/PrepareAbort become Complete*, with no partitions left."""
    target = S.COMPLETE_COMMIT if meta.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
    done = replace(meta, state=transition(meta.state, target), partitions=frozenset(), update_ms=now_ms)
    if meta.next_producer_id == NO_PRODUCER_ID:
        return done
    # EndTxn v5 exhausted the epoch: the markers are in with the old id, the producer goes on with the new one
    return replace(done, previous_producer_id=meta.producer_id, producer_id=meta.next_producer_id, producer_epoch=0,
                   last_producer_epoch=meta.producer_epoch - 1, next_producer_id=NO_PRODUCER_ID)


def _valid_kip360(meta: TxnMetadata, producer_id: int, epoch: int) -> bool:
    """Whether a re-initialising producer (KIP-360, InitProducerId v3+) is the current one, or its retry."""
    if producer_id == NO_PRODUCER_ID or meta.producer_epoch == NO_PRODUCER_EPOCH:
        return True
    if producer_id == meta.producer_id:
        return epoch in (meta.producer_epoch, meta.last_producer_epoch)
    return producer_id == meta.previous_producer_id and is_epoch_exhausted(epoch)


def init_producer_id(meta: TxnMetadata, producer_id: int, epoch: int, timeout_ms: int,
                     new_producer_id: int, now_ms: int) -> Decision:
    """InitProducerId with a transactional id: bump the epoch (fencing older producers) or fence first.

    `new_producer_id` is used only when the epoch is exhausted. An Ongoing transaction is fenced and
    aborted (`fence_and_abort`; the caller writes its markers) and the client is told
    CONCURRENT_TRANSACTIONS, so its retry gets a second bump once the abort is complete.
    """
    if meta.pending is not None or meta.state in PREPARING:
        return Decision(E.CONCURRENT_TRANSACTIONS)
    if not _valid_kip360(meta, producer_id, epoch):
        return Decision(E.PRODUCER_FENCED)
    if meta.state is S.ONGOING:
        return Decision(E.CONCURRENT_TRANSACTIONS, fence_and_abort(meta, now_ms))
    if producer_id == meta.producer_id and epoch == meta.last_producer_epoch and epoch != NO_PRODUCER_EPOCH:
        return Decision(E.NONE)  # a retry of the bump already written: answer the current epoch again
    if is_epoch_exhausted(meta.producer_epoch):
        bumped = replace(meta, previous_producer_id=meta.producer_id, producer_id=new_producer_id,
                         producer_epoch=0, last_producer_epoch=NO_PRODUCER_EPOCH)
    else:
        bumped = replace(meta, producer_epoch=meta.producer_epoch + 1, last_producer_epoch=meta.producer_epoch)
    return Decision(E.NONE, replace(bumped, state=transition(meta.state, S.EMPTY), timeout_ms=timeout_ms,
                                    partitions=frozenset(), start_ms=-1, update_ms=now_ms))
