"""The broker's OffsetsLog seam: a leadership is identified by the epoch it began at, so a leader-epoch bump
without a change of leader (a follower died) keeps the coordinator's loaded state."""

from types import SimpleNamespace

from pylog.broker.group_host import GroupHost
from pylog.common.config import BrokerConfig
from support.fake_replicas import Replicas


def host() -> tuple[GroupHost, Replicas, list[int]]:
    replicas = Replicas("__consumer_offsets")
    broker = SimpleNamespace(config=BrokerConfig.from_props({"zookeeper.connect": "x:1"}), replicas=replicas,
                             metadata=SimpleNamespace(topics={}))
    h = GroupHost(broker)
    seen: list[int] = []
    h.coordinator.on_leadership_change = seen.append  # the coordinator's reaction is tested on its own
    h.start()
    return h, replicas, seen


def test_leadership_terms():
    h, replicas, seen = host()
    assert h.leader_epoch(0) is None
    replicas.set(0, True, 3, notify=True)
    assert (h.leader_epoch(0), seen) == (3, [0])
    replicas.set(0, True, 4, notify=False)  # ISR change by the controller: same leader, new epoch
    assert h.leader_epoch(0) == 3
    replicas.set(0, False, 5, notify=True)
    assert h.leader_epoch(0) is None
    replicas.set(0, True, 6, notify=True)
    assert h.leader_epoch(0) == 6
    replicas.partitions[("__consumer_offsets", 0)].fenced = True  # ZooKeeper refused our ISR write
    assert h.leader_epoch(0) is None


def test_partition_count_is_the_topic_s_once_it_exists():
    h, _, _ = host()
    assert h.num_partitions() == 50
    h.broker.metadata.topics["__consumer_offsets"] = {0: None, 1: None, 2: None}
    assert h.num_partitions() == 3
