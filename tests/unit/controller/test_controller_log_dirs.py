"""The controller's part for failed log dirs (KIP-112), over an in-memory ZooKeeper."""

from __future__ import annotations

import asyncio
import uuid
from types import SimpleNamespace

from support.fake_controller import FakeCore
from pylog.controller.log_dirs import LogDirFailures, storage_errors
from pylog.controller.partitions import PartitionChanges
from pylog.controller.states import ReplicaLifecycle as R
from pylog.controller.topics import TopicChanges
from pylog.protocol.errors import ErrorCode
from pylog.zk import paths
from pylog.zk.codecs_admin import LogDirEventNotification


def _cluster() -> tuple[FakeCore, LogDirFailures]:
    core = FakeCore(live={0, 1, 2})
    core.add_topic("t", {0: (0, 1, 2), 1: (0, 1, 2), 2: (1, 0, 2)})
    changes = PartitionChanges(core)
    asyncio.run(TopicChanges(core, changes).on_change())
    return core, LogDirFailures(core, changes)


def test_offline_replicas_lose_leadership_and_isr_membership_and_cannot_be_elected():
    core, part = _cluster()
    assert core.ops.states[("t", 0)].leader == 0
    asyncio.run(part.on_offline_replicas(0, [("t", 0), ("t", 2)]))
    st0, st1, st2 = (core.ops.states[("t", p)] for p in range(3))
    assert (st0.leader, st0.isr) == (1, (1, 2))  # next live ISR replica in assignment order
    assert (st1.leader, st1.isr) == (0, (0, 1, 2))  # a replica in a healthy dir keeps its place
    assert (st2.leader, st2.isr) == (1, (1, 2))
    assert core.ctx.replica_states[("t", 0, 0)] is R.OFFLINE and core.ctx.replica_states[("t", 1, 0)] is R.ONLINE
    # Broker 1 dies: broker 0 is live but its replica of t-0 is offline, so broker 2 leads.
    core.ctx.live.pop(1)
    asyncio.run(part.partitions.elect([("t", 0)], part.partitions.offline_strategy))
    assert core.ops.states[("t", 0)].leader == 2
    part.forget({0})  # broker 0 restarted: its replicas count again until it reports otherwise
    assert core.ctx.offline_brokers_of(("t", 0)) == set()


def test_the_same_report_twice_changes_nothing():
    core, part = _cluster()
    asyncio.run(part.on_offline_replicas(0, [("t", 0)]))
    before = dict(core.ops.states)
    asyncio.run(part.on_offline_replicas(0, [("t", 0)]))
    assert core.ops.states == before


def test_a_notification_is_deleted_and_asks_the_broker_for_its_replicas_states():
    core, part = _cluster()
    deleted = []
    core.ops.children = lambda path: ["log_dir_event_0000000003"] if path == paths.log_dir_event_notifications() else []
    core.zk = SimpleNamespace(
        get_log_dir_event_notifications=lambda names: {n: LogDirEventNotification(2) for n in names},
        delete_log_dir_event_notifications=lambda names, version: deleted.extend(names))
    core.sent.clear()
    asyncio.run(part.on_event())
    assert deleted == ["log_dir_event_0000000003"]
    assert core.sent == [("leader_and_isr", 2, [("t", 0), ("t", 1), ("t", 2)])]


def test_storage_errors_are_read_off_a_leader_and_isr_response_by_topic_id():
    tid = uuid.uuid4()
    resp = SimpleNamespace(error_code=0, topics=[SimpleNamespace(topic_id=tid, partition_errors=[
        SimpleNamespace(partition_index=0, error_code=int(ErrorCode.KAFKA_STORAGE_ERROR)),
        SimpleNamespace(partition_index=1, error_code=0)])])
    assert storage_errors(resp, {tid: "t"}) == [("t", 0)]
    assert storage_errors(SimpleNamespace(error_code=int(ErrorCode.STALE_CONTROLLER_EPOCH), topics=[]), {}) == []
