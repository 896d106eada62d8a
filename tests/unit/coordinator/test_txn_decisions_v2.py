"""KIP-890 part 2 (transaction version 2) in the coordinator's pure decisions: EndTxn v5 bumps the epoch,
its retry is recognised by the old epoch, an abort with nothing open bumps too, and an exhausted epoch
rotates the producer id once the markers are in."""

import pytest

from pylog.common.errors import ErrorCode as E
from pylog.coordinator.transaction.decisions import (
    add_partitions, answer_ids, complete, end_txn, end_txn_v2, init_producer_id,
)
from pylog.coordinator.transaction.metadata import TxnMetadata, from_log_value, to_log_value
from pylog.coordinator.transaction.records import decode_value, encode_value
from pylog.coordinator.transaction.state import TxnState as S

P1 = frozenset({("t", 0)})


def meta(state=S.EMPTY, epoch=3, **kw):
    return TxnMetadata("tx", 1000, producer_epoch=epoch, state=state, **kw)


def ended(commit=True, epoch=3):
    """A transaction at `epoch` ended by EndTxn v5: Prepare* at epoch + 1."""
    return end_txn_v2(meta(S.ONGOING, epoch=epoch, partitions=P1), 1000, epoch, commit, -1, 10).write


@pytest.mark.parametrize("commit,target", [(True, S.PREPARE_COMMIT), (False, S.PREPARE_ABORT)])
def test_end_txn_v2_bumps_the_epoch_the_markers_carry(commit, target):
    w = ended(commit)
    assert (w.state, w.producer_epoch, w.last_producer_epoch, w.client_version) == (target, 4, 3, 2)
    assert w.partitions == P1 and answer_ids(w) == (1000, 4)
    done = complete(w, 11)
    assert (done.producer_id, done.producer_epoch, done.partitions) == (1000, 4, frozenset())


@pytest.mark.parametrize("m,pid,epoch,commit,error,written", [
    # a retry at the epoch before the bump gets the decided outcome (and the new epoch, answer_ids)
    (complete(ended(True), 1), 1000, 3, True, E.NONE, None),
    (complete(ended(False), 1), 1000, 3, False, E.NONE, None),
    (ended(True), 1000, 3, True, E.CONCURRENT_TRANSACTIONS, None),
    (complete(ended(True), 1), 1000, 3, False, E.INVALID_TXN_STATE, None),  # the opposite outcome
    # an older epoch than the retry's, or another producer id, is fenced
    (complete(ended(True), 1), 1000, 2, True, E.PRODUCER_FENCED, None),
    (complete(ended(True), 1), 999, 3, True, E.INVALID_PRODUCER_ID_MAPPING, None),
    # with nothing open: an abort bumps the epoch (no partitions, no markers); a commit is refused
    (meta(S.EMPTY), 1000, 3, False, E.NONE, (S.PREPARE_ABORT, 4)),
    (meta(S.COMPLETE_COMMIT), 1000, 3, False, E.NONE, (S.PREPARE_ABORT, 4)),
    (complete(ended(True), 1), 1000, 4, False, E.NONE, (S.PREPARE_ABORT, 5)),
    (meta(S.EMPTY), 1000, 3, True, E.INVALID_TXN_STATE, None),
    (meta(S.COMPLETE_COMMIT), 1000, 3, True, E.INVALID_TXN_STATE, None),
    # the new epoch's next EndTxn while the markers still go out waits
    (ended(True), 1000, 4, True, E.CONCURRENT_TRANSACTIONS, None),
])
def test_end_txn_v2_table(m, pid, epoch, commit, error, written):
    d = end_txn_v2(m, pid, epoch, commit, 2000, 20)
    assert d.error == error
    assert (None if d.write is None else (d.write.state, d.write.producer_epoch)) == written
    if d.write is not None:
        assert d.write.partitions == frozenset()


def test_a_v1_endtxn_after_a_v2_one_is_not_retried_at_the_old_epoch():
    """Only an EndTxn v5 outcome may be repeated at the epoch before its bump: a TV1 commit clears that."""
    v1 = complete(end_txn(add_partitions(complete(ended(True), 1), 1000, 4, P1, 2).write, 1000, 4, True, 3).write, 4)
    assert end_txn_v2(v1, 1000, 3, True, 2000, 5).error == E.PRODUCER_FENCED


def test_init_producer_id_after_a_v2_transaction_is_no_retry_of_it():
    bumped = init_producer_id(complete(ended(True), 1), -1, -1, 60000, 2000, 2).write
    assert (bumped.state, bumped.producer_epoch) == (S.EMPTY, 5)
    assert end_txn_v2(bumped, 1000, 3, True, 2000, 3).error == E.PRODUCER_FENCED


def test_the_delayed_endtxn_of_kafka_17754_is_fenced_by_the_bump():
    """Without part 2 a late EndTxn(abort) of transaction N aborts N+1 (test_txn_decisions); with it,
    N+1 runs at the bumped epoch and the late request is fenced."""
    n_plus_1 = add_partitions(complete(ended(True), 1), 1000, 4, P1, 2).write
    assert end_txn_v2(n_plus_1, 1000, 3, False, 2000, 3).error == E.PRODUCER_FENCED
    assert end_txn(n_plus_1, 1000, 3, False, 3).error == E.PRODUCER_FENCED
    assert add_partitions(n_plus_1, 1000, 3, P1, 3).error == E.PRODUCER_FENCED


def test_an_exhausted_epoch_rotates_the_producer_id_after_the_markers():
    w = end_txn_v2(meta(S.ONGOING, epoch=32766, partitions=P1), 1000, 32766, True, 2000, 1).write
    # the markers fence the old id at the last epoch; the client is told the new id at epoch 0
    assert (w.producer_id, w.producer_epoch, w.next_producer_id) == (1000, 32767, 2000)
    assert answer_ids(w) == (2000, 0)
    assert add_partitions(w, 2000, 0, P1, 2).error == E.CONCURRENT_TRANSACTIONS  # until Complete* is written
    done = complete(w, 3)
    assert (done.producer_id, done.producer_epoch, done.previous_producer_id) == (2000, 0, 1000)
    assert end_txn_v2(done, 1000, 32766, True, 3000, 4).error == E.NONE  # the retry with the old id
    assert add_partitions(done, 2000, 0, P1, 5).write.state is S.ONGOING


@pytest.mark.parametrize("m", [ended(True), complete(ended(False), 1),
                               complete(end_txn_v2(meta(S.ONGOING, epoch=32766, partitions=P1), 1000, 32766, True,
                                                   2000, 1).write, 2)])
def test_what_a_retry_needs_survives_a_coordinator_move(m):
    """The log keeps the client version and the next producer id; the retry's epoch is derived on load."""
    loaded = from_log_value("tx", decode_value(encode_value(to_log_value(m), 1)))
    assert (loaded.last_producer_epoch, loaded.client_version, loaded.next_producer_id) == (
        m.last_producer_epoch, 2, m.next_producer_id)
