"""The state machines gate: an item whose transition is refused gets no ZooKeeper write and no request.

Kafka's handleStateChanges passes only the items with a valid transition on to their effects. Each
case below puts one partition or replica in a state its next move refuses, runs a real controller
part over the in-memory ZooKeeper, and checks the refusal was logged and nothing was written or
sent for that item (the other items of the same call still go ahead where there are any).
"""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from support.fake_controller import FakeCore
from pylog.controller.core import Listeners
from pylog.controller.deletion import TopicDeletionManager
from pylog.controller.log_dirs import LogDirFailures
from pylog.controller.membership import BrokerMembership
from pylog.controller.partitions import PartitionChanges
from pylog.controller.reassignment import PartitionReassignments
from pylog.controller.states import PartitionLifecycle as P
from pylog.controller.states import ReplicaLifecycle as R
from pylog.controller.topics import TopicChanges
from pylog.protocol.errors import ErrorCode

T0, T1 = ("t", 0), ("t", 1)


def _cluster() -> tuple[FakeCore, PartitionChanges]:
    """Brokers 0-2 live; t-0 on (0, 1), t-1 on (1, 2), both online."""
    core = FakeCore(live={0, 1, 2}, config={"delete.topic.enable": "true"})
    core.add_topic("t", {0: (0, 1), 1: (1, 2)})
    changes = PartitionChanges(core)
    asyncio.run(TopicChanges(core, changes).on_change())
    core.ops.writes.clear()
    core.sent.clear()
    return core, changes


def _forget_partition(core: FakeCore, tp: tuple[str, int]) -> None:
    core.ctx.partition_states.pop(tp)  # NON_EXISTENT to the state machine, still assigned


def _forget_replica(core: FakeCore, key: tuple[str, int, int]) -> None:
    core.ctx.replica_states.pop(key)


def _elect(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_partition(core, T0)
    return asyncio.run(changes.elect([T0, T1], changes.offline_strategy))


def _init_new(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_partition(core, T0)  # NON_EXISTENT -> ONLINE is refused: it must be NEW first
    return asyncio.run(changes.init_new([T0]))


def _remove_leader_from_isr(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_partition(core, T0)  # losing leader 0 would move it OFFLINE, which NON_EXISTENT refuses
    return asyncio.run(changes.remove_from_isr({0}, [T0]))


def _broker_failure(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_replica(core, ("t", 0, 1))  # 1 follows t-0 and leads t-1
    _forget_replica(core, ("t", 1, 1))
    _forget_partition(core, T1)
    del core.ctx.live[1]
    return asyncio.run(BrokerMembership(core, changes, TopicDeletionManager(core), Listeners()).on_failed({1}))


def _broker_start(core: FakeCore, changes: PartitionChanges) -> Any:
    core.ctx.replica_states[("t", 0, 1)] = R.DELETED  # DELETED -> ONLINE is refused
    core.ctx.replica_states[("t", 1, 1)] = R.DELETED
    return asyncio.run(BrokerMembership(core, changes, TopicDeletionManager(core), Listeners()).on_started({1}))


def _controlled_shutdown(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_replica(core, ("t", 0, 1))  # 1 follows t-0: NON_EXISTENT -> OFFLINE is refused
    membership = BrokerMembership(core, changes, TopicDeletionManager(core), Listeners())
    return asyncio.run(membership.controlled_shutdown(1, -1))


def _deletion(core: FakeCore, changes: PartitionChanges) -> Any:
    for r in (0, 1):
        _forget_replica(core, ("t", 0, r))
    for r in (1, 2):
        _forget_replica(core, ("t", 1, r))
    core.ops.marked.add("t")
    core.ops.writes.clear()
    return asyncio.run(TopicDeletionManager(core).on_marked())


def _log_dir_failure(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_replica(core, ("t", 0, 1))
    _forget_replica(core, ("t", 1, 1))
    return asyncio.run(LogDirFailures(core, changes).on_offline_replicas(1, [T0, T1]))


def _reassignment_drop(core: FakeCore, changes: PartitionChanges) -> Any:
    _forget_replica(core, ("t", 0, 1))
    return PartitionReassignments(core, changes)._drop_replicas(T0, [1])


CASES: dict[str, tuple[Callable[[FakeCore, PartitionChanges], Any], str, list[Any]]] = {
    # name: (action, the refusal logged, what must not happen: ZooKeeper writes or requests)
    "election of a partition that may not go ONLINE": (
        _elect, "of ('t', 0) from NON_EXISTENT to ONLINE",
        [("update_partition_states", [T0, T1]), ("update_partition_states", [T0])]),
    "first leader of a partition that is not NEW": (
        _init_new, "of ('t', 0) from NON_EXISTENT to ONLINE", [("create_partition_states", [T0])]),
    "ISR removal that would take a partition OFFLINE": (
        _remove_leader_from_isr, "of ('t', 0) from NON_EXISTENT to OFFLINE", [("update_partition_states", [T0])]),
    "broker failure: replicas that may not go OFFLINE": (
        _broker_failure, "of ('t', 0, 1) from NON_EXISTENT to OFFLINE",
        [("update_partition_states", [T0]), ("update_partition_states", [T0, T1]),
         ("update_partition_states", [T1])]),
    "broker start: replicas that may not go ONLINE": (
        _broker_start, "of ('t', 0, 1) from DELETED to ONLINE",
        [("leader_and_isr", 1, [T0, T1]), ("leader_and_isr", 1, [T0]), ("leader_and_isr", 1, [T1])]),
    "controlled shutdown: followers that may not go OFFLINE": (
        _controlled_shutdown, "of ('t', 0, 1) from NON_EXISTENT to OFFLINE",
        [("stop_replica", 1, [T0], False), ("update_partition_states", [T0])]),
    "topic deletion: replicas that may not start deleting": (
        _deletion, "of ('t', 0, 0) from NON_EXISTENT to OFFLINE",
        [("stop_replica", 0, [T0], True), ("stop_replica", 1, [T0, T1], True), ("stop_replica", 1, [T0], True),
         ("delete_topic_znodes", "t")]),
    "failed log dir: replicas that may not go OFFLINE": (
        _log_dir_failure, "of ('t', 0, 1) from NON_EXISTENT to OFFLINE",
        [("update_partition_states", [T0]), ("update_partition_states", [T0, T1]),
         ("update_partition_states", [T1])]),
    "reassignment: a removed replica that may not be deleted": (
        _reassignment_drop, "of ('t', 0, 1) from NON_EXISTENT to OFFLINE", [("stop_replica", 1, [T0], True)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_refused_transition_has_no_write_and_no_request(name, caplog):
    action, refusal, forbidden = CASES[name]
    core, changes = _cluster()
    with caplog.at_level(logging.ERROR, logger="pylog.state.change"):
        before = dict(core.ops.states)
        action(core, changes)
    assert f"Invalid state transition {refusal}" in caplog.text
    done = core.ops.writes + core.sent
    assert not [x for x in forbidden if x in done], done
    assert core.ops.states.get(T0) == before.get(T0)  # every case refuses something on t-0


def test_a_refused_election_answers_unknown_server_error_and_the_rest_is_elected(caplog):
    core, changes = _cluster()
    del core.ctx.live[0]
    _forget_partition(core, T0)
    with caplog.at_level(logging.ERROR, logger="pylog.state.change"):
        outcome = asyncio.run(changes.elect([T0, T1], lambda tp, st, a, live: SimpleNamespace(
            leader=a.replicas[-1], isr=tuple(a.replicas), unclean=False)))
    assert outcome == {T0: ErrorCode.UNKNOWN_SERVER_ERROR, T1: ErrorCode.NONE}
    assert core.ops.writes == [("update_partition_states", [T1])] and core.sent == [("propagate", [T1])]
    assert core.ctx.partition_states.get(T0) is None and core.ctx.partition_states[T1] is P.ONLINE


def _confirm(broker: int, partitions: list[int]) -> SimpleNamespace:
    return SimpleNamespace(error_code=0, partition_errors=[
        SimpleNamespace(topic_name="t", partition_index=p, error_code=0) for p in partitions])


def test_a_refused_deletion_confirmation_keeps_the_topic_until_the_replica_is_deleted_again(caplog):
    core, _changes = _cluster()
    deletion = TopicDeletionManager(core)
    core.ops.marked.add("t")
    asyncio.run(deletion.on_marked())
    core.ctx.move_replicas([("t", 0, 1)], R.OFFLINE)  # marked offline while its StopReplica was out
    for broker, parts in ((0, [0]), (2, [1]), (1, [0, 1])):
        asyncio.run(deletion.on_confirmed("t", broker, _confirm(broker, parts)))
    assert ("delete_topic_znodes", "t") not in core.ops.writes and "t" in core.ops.topics_
    core.sent.clear()
    asyncio.run(deletion.resume())  # its broker is asked again, and this time the deletion completes
    assert [s for s in core.sent if s[0] == "stop_replica"] == [("stop_replica", 1, [T0], True)]
    asyncio.run(deletion.on_confirmed("t", 1, _confirm(1, [0])))
    assert ("delete_topic_znodes", "t") in core.ops.writes and core.ctx.replica_states == {}
