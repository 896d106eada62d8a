"""The controller's parts move partitions and replicas only through the state tables.

Each test drives real controller parts (TopicChanges, PartitionChanges, BrokerMembership,
TopicDeletionManager, PreferredLeaderElection), each built alone from its explicit dependencies, over an in-memory ZooKeeper, and checks both the states it reaches
and that no transition was refused; the last one provokes a refused transition on purpose.
"""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest

from support.fake_controller import FakeCore
from pylog.controller.context import LiveBroker
from pylog.controller.core import ControllerListener, Listeners
from pylog.controller.deletion import TopicDeletionManager
from pylog.controller.membership import BrokerMembership
from pylog.controller.partitions import PartitionChanges
from pylog.controller.preferred import PREFERRED, PreferredLeaderElection
from pylog.controller.states import PartitionLifecycle as P
from pylog.controller.states import ReplicaLifecycle as R
from pylog.controller.topics import TopicChanges
from pylog.protocol.errors import ErrorCode

INVALID = "Invalid state transition"


@pytest.fixture
def state_log(caplog):
    caplog.set_level(logging.ERROR, logger="pylog.state.change")
    return caplog


def _created(core: FakeCore, topic: str, replicas: dict[int, tuple[int, ...]]) -> PartitionChanges:
    """A topic as the tools create it, picked up by the controller's /brokers/topics path."""
    core.add_topic(topic, replicas)
    changes = PartitionChanges(core)
    asyncio.run(TopicChanges(core, changes).on_change())
    return changes


def test_new_partition_goes_online_with_its_live_replicas(state_log):
    core = FakeCore(live={0, 1})
    _created(core, "t", {0: (0, 1, 2)})
    assert core.ctx.partition_states[("t", 0)] is P.ONLINE
    assert [core.ctx.replica_states[("t", 0, r)] for r in (0, 1, 2)] == [R.ONLINE, R.ONLINE, R.NEW]
    assert core.ops.states[("t", 0)].isr == (0, 1)
    assert INVALID not in state_log.text


def test_partition_without_live_replica_stays_new(state_log):
    core = FakeCore(live={0})
    _created(core, "t", {0: (1, 2)})
    assert core.ctx.partition_states[("t", 0)] is P.NEW
    assert ("t", 0) not in core.ops.states
    assert INVALID not in state_log.text


def test_losing_every_isr_member_takes_the_partition_offline(state_log):
    core = FakeCore(live={0, 1})
    changes = _created(core, "t", {0: (0, 1)})
    del core.ctx.live[0], core.ctx.live[1]
    asyncio.run(changes.remove_from_isr({0}, [("t", 0)]))
    asyncio.run(changes.remove_from_isr({1}, [("t", 0)]))
    assert (core.ops.states[("t", 0)].leader, core.ops.states[("t", 0)].isr) == (-1, (1,))  # the last one stays
    assert core.ctx.partition_states[("t", 0)] is P.OFFLINE
    core.ctx.live[0] = LiveBroker(None, 0)
    asyncio.run(changes.trigger_online())  # 0 is back, but outside the ISR: unclean is off
    assert core.ctx.partition_states[("t", 0)] is P.OFFLINE
    core.ctx.live[1] = LiveBroker(None, 1)
    asyncio.run(changes.trigger_online())
    assert core.ctx.partition_states[("t", 0)] is P.ONLINE
    assert core.ops.states[("t", 0)].leader == 1
    assert INVALID not in state_log.text


def test_failed_preferred_election_leaves_the_partition_online(state_log):
    core = FakeCore(live={0, 1})
    changes = _created(core, "t", {0: (1, 0)})
    core.ctx.live.pop(1)
    asyncio.run(changes.elect([("t", 0)], changes.offline_strategy))
    asyncio.run(changes.remove_from_isr({1}, [("t", 0)]))  # 0 leads now, the preferred 1 is out of the ISR
    assert core.ops.states[("t", 0)].leader == 0
    core.ctx.live[1] = LiveBroker(None, 1)
    results = asyncio.run(PreferredLeaderElection(core, changes).run_election([("t", 0)], PREFERRED))
    assert results[("t", 0)].error == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    assert core.ctx.partition_states[("t", 0)] is P.ONLINE
    assert INVALID not in state_log.text


class Heard(ControllerListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, set[int]]] = []

    async def on_broker_failure(self, ids: set[int]) -> None:
        self.events.append(("failed", ids))


def test_broker_failure_moves_leadership_and_tells_listeners(state_log):
    core = FakeCore(live={0, 1, 2})
    changes = _created(core, "t", {0: (0, 1), 1: (2, 0)})
    heard, listeners = Heard(), Listeners()
    listeners.add(heard)
    membership = BrokerMembership(core, changes, TopicDeletionManager(core), listeners)
    asyncio.run(membership.on_failed({0}))
    assert (core.ops.states[("t", 0)].leader, core.ops.states[("t", 0)].isr) == (1, (1,))
    assert core.ops.states[("t", 1)].isr == (2,)
    assert core.ctx.partition_states == {("t", 0): P.ONLINE, ("t", 1): P.ONLINE}
    assert core.ctx.replica_states[("t", 0, 0)] is R.OFFLINE and core.ctx.replica_states[("t", 1, 0)] is R.OFFLINE
    assert ("close_channel", 0) in core.sent
    assert heard.events == [("failed", {0})]
    assert INVALID not in state_log.text


def _confirm(topic: str, broker: int, partitions: list[int]) -> SimpleNamespace:
    return SimpleNamespace(error_code=0, partition_errors=[
        SimpleNamespace(topic_name=topic, partition_index=p, error_code=0) for p in partitions])


def test_topic_deletion_walks_every_state_to_non_existent(state_log):
    core = FakeCore(live={0, 1}, config={"delete.topic.enable": "true"})
    _created(core, "t", {0: (0, 1), 1: (1, 0)})
    deletion = TopicDeletionManager(core)
    core.ops.marked.add("t")
    asyncio.run(deletion.on_marked())
    assert set(core.ctx.partition_states.values()) == {P.OFFLINE}
    assert set(core.ctx.replica_states.values()) == {R.DELETION_STARTED}
    assert ("stop_replica", 0, [("t", 0), ("t", 1)], True) in core.sent
    asyncio.run(deletion.on_confirmed("t", 0, _confirm("t", 0, [0, 1])))
    assert core.ctx.replica_states[("t", 0, 0)] is R.DELETED
    asyncio.run(deletion.on_confirmed("t", 1, _confirm("t", 1, [0, 1])))
    assert core.ctx.partition_states == {} and core.ctx.replica_states == {}
    assert "t" not in core.ops.topics_ and not core.ops.marked
    assert INVALID not in state_log.text


def test_a_refused_transition_is_logged_and_leaves_the_state(state_log):
    # A deletion confirmed by a broker the controller has since marked offline: DELETED may only
    # follow DELETION_STARTED, so the replica stays OFFLINE and the refusal is logged, as Kafka does.
    core = FakeCore(live={0, 1}, config={"delete.topic.enable": "true"})
    _created(core, "t", {0: (0, 1)})
    deletion = TopicDeletionManager(core)
    core.ops.marked.add("t")
    asyncio.run(deletion.on_marked())
    core.ctx.move_replicas([("t", 0, 1)], R.OFFLINE)
    asyncio.run(deletion.on_confirmed("t", 1, _confirm("t", 1, [0])))
    assert core.ctx.replica_states[("t", 0, 1)] is R.OFFLINE
    assert "Invalid state transition of ('t', 0, 1) from OFFLINE to DELETED" in state_log.text


def test_a_new_controller_drops_brokers_that_are_not_live_from_every_isr(state_log):
    # The old controller died: no BrokerChange reports it to the new one, which must still take it
    # out of the ISRs it followed (Kafka's ReplicaStateMachine.startup), and out of leadership.
    core = FakeCore(live={0, 1, 2})
    changes = _created(core, "t", {0: (0, 2), 1: (2, 0), 2: (1, 0)})
    del core.ctx.live[2]
    core.ctx.replica_states.clear()
    core.ctx.initialize_states()  # what the new controller starts from
    core.sent.clear()
    membership = BrokerMembership(core, changes, TopicDeletionManager(core), Listeners())
    asyncio.run(changes.trigger_online())  # the partition 2 led gets a new leader (and ISR) first
    asyncio.run(membership.on_failover())
    assert [(core.ops.states[("t", p)].leader, core.ops.states[("t", p)].isr) for p in range(3)] == [
        (0, (0,)), (0, (0,)), (1, (1, 0))]
    assert core.sent == [("propagate", [("t", 1)]), ("propagate", [("t", 0)])]
    assert core.ctx.replica_states[("t", 0, 2)] is R.OFFLINE
    assert INVALID not in state_log.text
