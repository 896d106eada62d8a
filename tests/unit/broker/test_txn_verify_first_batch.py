"""Which transactional batches a partition leader takes to the coordinator (KIP-890): a producer's first one
on the partition, and under transaction version 2 one at a newer epoch while the previous transaction's
marker has not arrived (the coordinator answers CONCURRENT_TRANSACTIONS until it has)."""

from types import SimpleNamespace

from pylog.broker.txn_verify import needs_verification
from pylog.protocol.records import build_batch


def _partition(open_pids=(), epochs=None):
    producers = {pid: SimpleNamespace(epoch=e) for pid, e in (epochs or {}).items()}
    log = SimpleNamespace(open_txns=SimpleNamespace(first_offsets=dict.fromkeys(open_pids, 0)),
                          producer_state=SimpleNamespace(producers=producers))
    return SimpleNamespace(log=log)


def _batch(pid=7, epoch=3, transactional=True):
    return build_batch([(None, b"v", (), None)], producer_id=pid, producer_epoch=epoch, base_sequence=0,
                       is_transactional=transactional)


def test_first_batch_of_a_transaction_is_checked():
    assert needs_verification(_partition(), _batch()) == (7, 3)


def test_a_batch_of_the_open_transaction_is_not():
    assert needs_verification(_partition([7], {7: 3}), _batch()) is None


def test_a_newer_epoch_while_the_previous_transaction_is_open_is_checked():
    assert needs_verification(_partition([7], {7: 2}), _batch(epoch=3)) == (7, 3)


def test_non_transactional_batches_are_not():
    assert needs_verification(_partition(), _batch(transactional=False)) is None
