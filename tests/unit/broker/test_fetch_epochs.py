"""Fetch v12+/v13+ checks as Kafka's Partition.fetchRecords makes them: KIP-516's inconsistent topic id,
KIP-320's unknown last fetched epoch and diverging epoch."""

import uuid
from types import SimpleNamespace

from pylog.broker.handlers.fetch import _diverging, _early_error
from pylog.protocol.errors import ErrorCode

TID = uuid.uuid4()


class Epochs:
    """Epoch 0 from offset 0, epoch 3 from offset 10; log end 20 (LeaderEpochFileCache's answers)."""

    def end_offset_for(self, epoch):
        return {0: (0, 10), 1: (0, 10), 2: (0, 10), 3: (3, 20)}.get(epoch, (-1, -1))


def partition(topic_id=TID, log_start=0):
    return SimpleNamespace(topic_id=topic_id, log=SimpleNamespace(epoch_cache=Epochs(), log_start_offset=log_start))


def fetch(offset, last_epoch=-1):
    return SimpleNamespace(fetch_offset=offset, last_fetched_epoch=last_epoch)


def test_a_log_of_another_topic_id_is_inconsistent():
    assert _early_error(partition(), uuid.uuid4(), fetch(0)) == ErrorCode.INCONSISTENT_TOPIC_ID
    assert _early_error(partition(), TID, fetch(0)) is None
    assert _early_error(partition(topic_id=None), uuid.uuid4(), fetch(0)) is None  # a log without an id yet


def test_an_epoch_the_leader_never_had_or_an_offset_below_the_log_start_is_out_of_range():
    assert _early_error(partition(), TID, fetch(15, last_epoch=7)) == ErrorCode.OFFSET_OUT_OF_RANGE
    assert _early_error(partition(log_start=12), TID, fetch(11, last_epoch=3)) == ErrorCode.OFFSET_OUT_OF_RANGE


def test_diverging_epoch_is_the_largest_epoch_and_its_end_before_the_fetch_offset():
    assert _diverging(partition(), fetch(15, last_epoch=0)) == (0, 10)  # epoch 0 ended at 10, fetching at 15
    assert _diverging(partition(), fetch(8, last_epoch=2)) == (0, 10)  # epoch 2 never led: the one before ended at 10
    assert _diverging(partition(), fetch(10, last_epoch=0)) is None  # exactly at the end of its epoch
    assert _diverging(partition(), fetch(15, last_epoch=3)) is None
    assert _diverging(partition(), fetch(15)) is None  # no last fetched epoch (before v12, or none yet)
