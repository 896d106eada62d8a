"""The transaction coordinator's answers, table-tested: AddPartitions, EndTxn retries, InitProducerId fencing."""

from dataclasses import replace

import pytest

from pylog.common.errors import ErrorCode as E
from pylog.coordinator.transaction.decisions import add_partitions, complete, end_txn, init_producer_id
from pylog.coordinator.transaction.metadata import TxnMetadata, from_log_value, to_log_value
from pylog.coordinator.transaction.records import decode_value, encode_value
from pylog.coordinator.transaction.state import TxnState as S

P1 = frozenset({("t", 0)})
P2 = frozenset({("t", 0), ("t", 1)})


def meta(state=S.EMPTY, epoch=0, **kw):
    return TxnMetadata("tx", 1000, producer_epoch=epoch, state=state, **kw)


def test_first_add_starts_the_transaction():
    d = add_partitions(meta(), 1000, 0, P1, now_ms=50)
    assert d.error == E.NONE and d.write.state is S.ONGOING and d.write.partitions == P1 and d.write.start_ms == 50


def test_adding_known_partitions_writes_nothing_and_new_ones_keep_the_start():
    ongoing = meta(S.ONGOING, partitions=P1, start_ms=10)
    assert add_partitions(ongoing, 1000, 0, P1, 60).write is None
    d = add_partitions(ongoing, 1000, 0, P2, 60)
    assert d.write.partitions == P2 and d.write.start_ms == 10


@pytest.mark.parametrize("m,pid,epoch,error", [
    (meta(), 999, 0, E.INVALID_PRODUCER_ID_MAPPING),
    (meta(S.DEAD), 1000, 0, E.INVALID_PRODUCER_ID_MAPPING),
    (meta(epoch=2), 1000, 1, E.PRODUCER_FENCED),
    (meta(S.PREPARE_COMMIT), 1000, 0, E.CONCURRENT_TRANSACTIONS),
    (meta(S.PREPARE_ABORT), 1000, 0, E.CONCURRENT_TRANSACTIONS),
    (meta(S.PREPARE_EPOCH_FENCE), 1000, 0, E.CONCURRENT_TRANSACTIONS),
    (meta(S.ONGOING, pending=S.PREPARE_COMMIT), 1000, 0, E.CONCURRENT_TRANSACTIONS),
])
def test_add_partitions_refusals(m, pid, epoch, error):
    d = add_partitions(m, pid, epoch, P1, 0)
    assert (d.error, d.write) == (error, None)


@pytest.mark.parametrize("state,commit,error,target", [
    (S.ONGOING, True, E.NONE, S.PREPARE_COMMIT),
    (S.ONGOING, False, E.NONE, S.PREPARE_ABORT),
    (S.COMPLETE_COMMIT, True, E.NONE, None),  # a retried commit whose markers are written
    (S.COMPLETE_ABORT, False, E.NONE, None),
    (S.PREPARE_COMMIT, True, E.CONCURRENT_TRANSACTIONS, None),
    (S.PREPARE_ABORT, False, E.CONCURRENT_TRANSACTIONS, None),
    (S.COMPLETE_COMMIT, False, E.INVALID_TXN_STATE, None),  # the opposite outcome of a decided one
    (S.COMPLETE_ABORT, True, E.INVALID_TXN_STATE, None),
    (S.PREPARE_COMMIT, False, E.INVALID_TXN_STATE, None),
    (S.PREPARE_ABORT, True, E.INVALID_TXN_STATE, None),
    (S.EMPTY, True, E.INVALID_TXN_STATE, None),
    (S.PREPARE_EPOCH_FENCE, False, E.INVALID_TXN_STATE, None),
])
def test_end_txn_table(state, commit, error, target):
    d = end_txn(meta(state, partitions=P1), 1000, 0, commit, 0)
    assert d.error == error
    assert (d.write.state if d.write else None) is target


def test_markers_written_completes_and_clears_partitions():
    for prepare, done in ((S.PREPARE_COMMIT, S.COMPLETE_COMMIT), (S.PREPARE_ABORT, S.COMPLETE_ABORT)):
        m = complete(meta(prepare, partitions=P2), 99)
        assert (m.state, m.partitions, m.update_ms) == (done, frozenset(), 99)


def test_kafka_17754_a_delayed_end_txn_decides_the_next_transaction_without_kip_890_part_2():
    """Kafka's known flaw, kept as Kafka has it for clients without EndTxn v5: same pid and epoch across
    transactions, so an EndTxn(abort) of transaction N that arrives after N+1 began aborts N+1."""
    n = add_partitions(meta(), 1000, 0, P1, 1).write
    n = complete(end_txn(n, 1000, 0, True, 2).write, 3)
    n_plus_1 = add_partitions(n, 1000, 0, P1, 4).write
    delayed = end_txn(n_plus_1, 1000, 0, False, 5)
    assert delayed.error == E.NONE and delayed.write.state is S.PREPARE_ABORT
    # whereas a producer re-initialised in between (the client-side mitigation) fences the stale request
    bumped = init_producer_id(n, 1000, 0, 60000, 2000, 4).write
    assert end_txn(add_partitions(bumped, 1000, 1, P1, 5).write, 1000, 0, False, 6).error == E.PRODUCER_FENCED


def test_init_bumps_the_epoch_and_fences_the_old_producer():
    d = init_producer_id(meta(S.COMPLETE_COMMIT, epoch=4), -1, -1, 30000, 2000, 7)
    assert d.error == E.NONE
    assert (d.write.producer_id, d.write.producer_epoch, d.write.last_producer_epoch) == (1000, 5, 4)
    assert (d.write.state, d.write.timeout_ms) == (S.EMPTY, 30000)
    assert add_partitions(d.write, 1000, 4, P1, 8).error == E.PRODUCER_FENCED


def test_init_of_a_new_id_starts_at_epoch_zero():
    d = init_producer_id(meta(epoch=-1), -1, -1, 60000, 2000, 0)
    assert (d.write.producer_id, d.write.producer_epoch) == (1000, 0)


def test_init_with_an_open_transaction_fences_it_first():
    d = init_producer_id(meta(S.ONGOING, epoch=3, partitions=P1), -1, -1, 60000, 2000, 1)
    assert d.error == E.CONCURRENT_TRANSACTIONS
    # Kafka's PrepareEpochFence is in memory only: what is written is the abort at the bumped epoch.
    assert (d.write.state, d.write.producer_epoch, d.write.partitions) == (S.PREPARE_ABORT, 4, P1)
    assert d.write.last_producer_epoch == -1


@pytest.mark.parametrize("state", [S.PREPARE_COMMIT, S.PREPARE_ABORT, S.PREPARE_EPOCH_FENCE])
def test_init_waits_for_markers(state):
    assert init_producer_id(meta(state), -1, -1, 60000, 2000, 0).error == E.CONCURRENT_TRANSACTIONS


def test_init_rotates_the_producer_id_when_the_epoch_is_exhausted():
    d = init_producer_id(meta(S.COMPLETE_ABORT, epoch=32766), -1, -1, 60000, 2000, 0)
    assert (d.write.producer_id, d.write.producer_epoch, d.write.previous_producer_id) == (2000, 0, 1000)


@pytest.mark.parametrize("pid,epoch,error,bumped", [
    (1000, 4, E.NONE, True),           # the current producer re-initialising (KIP-360)
    (1000, 3, E.NONE, False),          # a retry of the bump that made epoch 4: answered, not bumped again
    (1000, 2, E.PRODUCER_FENCED, None),
    (999, 4, E.PRODUCER_FENCED, None),
])
def test_init_kip_360(pid, epoch, error, bumped):
    m = meta(S.COMPLETE_COMMIT, epoch=4, last_producer_epoch=3)
    d = init_producer_id(m, pid, epoch, 60000, 2000, 0)
    assert d.error == error
    if bumped is not None:
        assert (d.write is not None) is bumped


def test_init_accepts_the_previous_id_after_rotation():
    m = replace(meta(S.COMPLETE_COMMIT, epoch=0), previous_producer_id=900)
    assert init_producer_id(m, 900, 32766, 60000, 2000, 0).error == E.NONE


def test_metadata_round_trips_through_the_transaction_log():
    ongoing = meta(S.ONGOING, epoch=2, partitions=P2, start_ms=5, update_ms=6)
    v = to_log_value(ongoing)
    assert v.partitions == {"t": (0, 1)} and v.status == 1
    assert from_log_value("tx", decode_value(encode_value(v))) == ongoing
    assert to_log_value(meta()).partitions is None  # Empty is written with null partitions
