"""Controller election race, epoch increments, controller-epoch fencing, conditional partition state updates."""

from __future__ import annotations

import threading

import pytest

from pylog.zk import errors, paths
from pylog.zk.client import ControllerEpoch, ZkClient
from pylog.zk.codecs import PartitionState, TopicPartition
from pylog.zk.ops import CreateOp
from pylog.zk.session import expire_session
from pylog.zk.testing import wait_until

pytestmark = pytest.mark.integration

TP = TopicPartition("foo", 0)


def race(clients: list[ZkClient]) -> list[ControllerEpoch | None]:
    """All clients call try_elect_controller at the same moment; results by client index."""
    barrier = threading.Barrier(len(clients))
    results: list[ControllerEpoch | None] = [None] * len(clients)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = clients[i].try_elect_controller(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_first_election_creates_epoch_and_controller(zk: ZkClient) -> None:
    assert zk.get_controller_id() is None and zk.get_controller_epoch() is None
    won = zk.try_elect_controller(3)
    assert won == ControllerEpoch(1, 1) == zk.get_controller_epoch()
    assert zk.get(paths.controller_epoch())[0] == b"1"
    assert zk.get_controller_id() == 3
    assert zk.exists(paths.controller()).ephemeralOwner == zk.session_id  # type: ignore[union-attr]
    assert zk.try_elect_controller(3) == won  # already ours: same epoch, no bump


def test_race_has_one_winner_and_epoch_grows_by_one_per_election(zk_connect: str) -> None:
    clients = [ZkClient(zk_connect, session_timeout_ms=6000).start() for _ in range(5)]
    try:
        for election in range(1, 4):
            results = race(clients)
            winners = [i for i, r in enumerate(results) if r is not None]
            assert len(winners) == 1, results
            winner = winners[0]
            assert results[winner].epoch == election  # type: ignore[union-attr]
            assert clients[0].get_controller_id() == winner
            clients[winner].close()  # resign by losing the session; /controller goes with it
            clients[winner] = ZkClient(zk_connect, session_timeout_ms=6000).start()
    finally:
        for c in clients:
            c.close()


def test_stale_controller_writes_are_refused(zk_connect: str, zk: ZkClient) -> None:
    zk.create_top_level_paths()
    with ZkClient(zk_connect, session_timeout_ms=6000) as old, ZkClient(zk_connect, session_timeout_ms=6000) as new:
        old_epoch = old.try_elect_controller(1)
        assert old_epoch is not None
        zk.create(paths.topic("foo"), b"{}")
        created = old.create_partition_states({TP: PartitionState(1, 0, [1, 2], old_epoch.epoch)},
                                              old_epoch.zk_version)
        assert created[TP].partition_epoch == 0  # type: ignore[union-attr]

        assert new.try_elect_controller(2) is None  # old still holds /controller
        old_session = old.session_id
        assert expire_session(zk_connect, old.session_credentials())  # old controller's session dies
        # The dangerous case: the old controller is back with a new session and still thinks it leads.
        wait_until(lambda: old.connected and old.session_id != old_session, 20, "old controller to reconnect")
        new_epoch = new.try_elect_controller(2)
        assert new_epoch == ControllerEpoch(old_epoch.epoch + 1, old_epoch.zk_version + 1)

        # The old controller still believes in its epoch: every fenced write must bounce, and write nothing.
        stale = PartitionState(1, 1, [1], old_epoch.epoch, partition_epoch=0)
        with pytest.raises(errors.ControllerMovedError,
                           match=f"Controller epoch zkVersion check fails. Expected zkVersion = "
                                 f"{old_epoch.zk_version}"):
            old.update_partition_states({TP: stale}, old_epoch.zk_version)
        with pytest.raises(errors.ControllerMovedError):
            old.fenced_multi([CreateOp("/should-not-exist")], old_epoch.zk_version)
        with pytest.raises(errors.ControllerMovedError):
            old.delete_controller(old_epoch.zk_version)
        assert zk.get_partition_state("foo", 0) == PartitionState(1, 0, (1, 2), old_epoch.epoch, partition_epoch=0)
        assert zk.exists("/should-not-exist") is None and zk.get_controller_id() == 2

        fresh = PartitionState(2, 1, [2], new_epoch.epoch, partition_epoch=0)
        result = new.update_partition_states({TP: fresh}, new_epoch.zk_version)
        assert result.successful == {TP: PartitionState(2, 1, (2,), new_epoch.epoch, partition_epoch=1)}
        new.delete_controller(new_epoch.zk_version)
        assert zk.get_controller_id() is None


def test_conditional_partition_state_update(zk: ZkClient) -> None:
    zk.create_top_level_paths()
    epoch = zk.try_elect_controller(1)
    assert epoch is not None
    missing = TopicPartition("foo", 9)
    zk.create(paths.topic("foo"), b"{}")
    zk.create_partition_states({TP: PartitionState(1, 0, [1, 2, 3], epoch.epoch)}, epoch.zk_version)
    again = zk.create_partition_states({TP: PartitionState(1, 0, [1, 2, 3], epoch.epoch)}, epoch.zk_version)
    assert isinstance(again[TP], errors.NodeExistsError)

    shrink = PartitionState(1, 0, [1, 2], epoch.epoch, partition_epoch=0)
    first = zk.update_partition_states({TP: shrink}, epoch.zk_version)
    assert first.successful[TP].partition_epoch == 1 and not first.bad_version and not first.failed

    stale = PartitionState(1, 0, [1], epoch.epoch, partition_epoch=0)  # written against version 0 again
    second = zk.update_partition_states({TP: stale, missing: stale}, epoch.zk_version)
    assert second.bad_version == [TP] and not second.successful
    assert isinstance(second.failed[missing], errors.NoNodeError)
    assert zk.get_partition_state("foo", 0) == PartitionState(1, 0, (1, 2), epoch.epoch, partition_epoch=1)

    unfenced = zk.update_partition_states({TP: PartitionState(1, 0, [1], 5, partition_epoch=1)}, None)
    assert unfenced.successful[TP].partition_epoch == 2


def test_topic_deletion_znodes_are_removed_fenced(zk: ZkClient) -> None:
    zk.create_top_level_paths()
    epoch = zk.try_elect_controller(1)
    assert epoch is not None
    zk.create(paths.topic("foo"), b"{}")
    zk.create_partition_states({TopicPartition("foo", p): PartitionState(1, 0, [1], 1) for p in range(3)},
                               epoch.zk_version)
    with pytest.raises(errors.ControllerMovedError):
        zk.delete_recursive(paths.topic("foo"), epoch.zk_version + 7)
    assert zk.exists(paths.partition_state("foo", 2)) is not None
    assert zk.delete_recursive(paths.topic("foo"), epoch.zk_version) is True
    assert zk.exists(paths.topic("foo")) is None
