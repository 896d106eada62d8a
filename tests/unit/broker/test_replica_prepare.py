"""LeaderAndIsr for many new replicas: their logs and leader epochs are made durable from worker threads,
and the request ends exactly as applying each partition one by one would."""

from __future__ import annotations

import asyncio
import os
import threading
from types import SimpleNamespace

from pylog.broker.replica_manager import ReplicaManager
from pylog.log import LogConfig, LogManager

ME = 1


class _Configs:
    async def log_config(self, topic):
        return LogConfig()


class _Fetchers:
    def __init__(self):
        self.following = {}
        self.leader_endpoints = {}

    def remove_partition(self, topic, partition):
        self.following.pop((topic, partition), None)

    def add_partition(self, p, leader):
        self.following[(p.topic, p.index)] = leader


def _manager(root):
    logs = LogManager([root], LogConfig())
    logs.load()
    return ReplicaManager(ME, None, None, logs, None, _Fetchers(), _Configs(), None, lambda path, exc: None), logs


def _request(n, epoch, leader_of):
    states = [SimpleNamespace(partition_index=i, leader=leader_of(i), leader_epoch=epoch, isr=[ME, 2],
                              replicas=[ME, 2], partition_epoch=epoch, controller_epoch=1, adding_replicas=[],
                              removing_replicas=[], is_new=True) for i in range(n)]
    return SimpleNamespace(controller_epoch=1, controller_id=ME, live_leaders=[],
                           topic_states=[SimpleNamespace(topic_name="t", topic_id=None, partition_states=states)])


def _checkpoint(root, i):
    with open(os.path.join(root, f"t-{i}", "leader-epoch-checkpoint")) as f:
        return f.read()


def test_new_replicas_are_created_off_the_event_loop_and_applied_as_before(tmp_path, monkeypatch):
    root = str(tmp_path / "logs")
    rm, logs = _manager(root)
    made_in = []
    real_open_new = LogManager.open_new

    def open_new(*args):
        made_in.append(threading.current_thread().name)
        return real_open_new(*args)

    monkeypatch.setattr(LogManager, "open_new", staticmethod(open_new))
    leads = lambda i: ME if i % 2 == 0 else 2  # noqa: E731
    err, results = asyncio.run(rm.become_leader_or_follower(_request(20, 4, leads)))
    rm.preparer.close()
    assert err == 0 and results == [("t", i, 0) for i in range(20)]
    assert len(made_in) == 20 and all(name.startswith("replica-io") for name in made_in)
    for i in range(20):
        p = rm.partitions[("t", i)]
        assert p.log is logs.get("t", i) and p.is_leader == (i % 2 == 0)
        # the leader's epoch is on disk; a follower's epochs come with the leader's batches
        assert _checkpoint(root, i) == ("0\n1\n4 0\n" if i % 2 == 0 else "")
    assert rm.fetchers.following == {("t", i): 2 for i in range(1, 20, 2)}
    logs.shutdown()


def test_after_a_restart_existing_logs_take_the_new_leader_epoch(tmp_path):
    root = str(tmp_path / "logs")
    rm, logs = _manager(root)
    asyncio.run(rm.become_leader_or_follower(_request(5, 1, lambda i: ME)))
    rm.preparer.close()
    logs.shutdown()
    rm, logs = _manager(root)  # the logs are loaded; the replicas have no Partition yet
    err, results = asyncio.run(rm.become_leader_or_follower(_request(5, 2, lambda i: ME)))
    rm.preparer.close()
    assert err == 0 and [r[2] for r in results] == [0] * 5
    for i in range(5):
        assert rm.partitions[("t", i)].leader_epoch == 2
        assert _checkpoint(root, i) == "0\n1\n2 0\n"  # epoch 1 got no data: replaced
    logs.shutdown()
