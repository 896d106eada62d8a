"""The collector over hand-made snapshots: the values an operator's alerts read (pure, no broker)."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from pylog.metrics.collector import BrokerCollector
from pylog.metrics.snapshot import BrokerSnapshot, ControllerView, GroupView, PartitionView


def _series(snap: BrokerSnapshot) -> dict[tuple[str, tuple], float]:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(BrokerCollector(lambda: snap))
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(generate_latest(reg).decode()) for s in f.samples}


def _p(topic: str, i: int, leader: bool, replicas, isr, min_isr=2, hw=10, start=0) -> PartitionView:
    return PartitionView(topic, i, leader, tuple(replicas), tuple(isr), min_isr, 100, start, hw, hw, 0)


def test_replica_manager_and_controller_counts():
    snap = BrokerSnapshot(1, "running", True, partitions=[
        _p("a", 0, True, [1, 2, 3], [1, 2, 3]), _p("a", 1, True, [1, 2, 3], [1, 2]),
        _p("a", 2, True, [1, 2, 3], [1]), _p("a", 3, False, [2, 1, 3], [2])],
        controller=ControllerView(True, offline_partitions=2, preferred_imbalance=1))
    s = _series(snap)
    assert s[("kafka_server_replicamanager_partitioncount", ())] == 4
    assert s[("kafka_server_replicamanager_leadercount", ())] == 3
    assert s[("kafka_server_replicamanager_underreplicatedpartitions", ())] == 2  # a follower's view does not count
    assert s[("kafka_server_replicamanager_underminisrpartitioncount", ())] == 1
    assert s[("kafka_server_replicamanager_atminisrpartitioncount", ())] == 1
    assert s[("kafka_controller_kafkacontroller_activecontrollercount", ())] == 1
    assert s[("kafka_controller_kafkacontroller_offlinepartitionscount", ())] == 2
    assert s[("kafka_topic_partition_current_offset", (("partition", "0"), ("topic", "a")))] == 10
    assert ("kafka_topic_partition_current_offset", (("partition", "3"), ("topic", "a"))) not in s  # led elsewhere


def test_an_inactive_controller_reports_zeros_so_sums_are_the_clusters():
    s = _series(BrokerSnapshot(2, "running", True, controller=ControllerView(False, offline_partitions=5)))
    assert s[("kafka_controller_kafkacontroller_activecontrollercount", ())] == 0
    assert s[("kafka_controller_kafkacontroller_offlinepartitionscount", ())] == 0


def test_lag_is_newest_minus_committed_and_unknown_ends_are_left_out():
    snap = BrokerSnapshot(0, "running", True, groups=[GroupView("g", "Stable", 2, 3, {("t", 0): 4, ("t", 1): 9})],
                          end_offsets={("t", 0): 10})
    s = _series(snap)
    lbl = (("consumergroup", "g"), ("partition", "0"), ("topic", "t"))
    assert s[("kafka_consumergroup_lag", lbl)] == 6
    assert s[("kafka_consumergroup_current_offset", lbl)] == 4
    assert ("kafka_consumergroup_lag", (("consumergroup", "g"), ("partition", "1"), ("topic", "t"))) not in s
    assert s[("kafka_consumergroup_members", (("consumergroup", "g"),))] == 2
    assert s[("pylog_group_coordinator_groups", (("state", "Stable"),))] == 1


def test_state_while_fenced_and_traffic_per_topic_and_in_all():
    snap = BrokerSnapshot(0, "fenced", False, traffic={"a": (100, 50, 4), "b": (10, 0, 1)}, complete=False)
    s = _series(snap)
    assert s[("kafka_server_kafkaserver_brokerstate", ())] == 2
    assert s[("pylog_broker_state", (("state", "fenced"),))] == 1
    assert s[("pylog_broker_state", (("state", "running"),))] == 0
    assert s[("pylog_zookeeper_connected", ())] == 0
    assert s[("pylog_metrics_snapshot_complete", ())] == 0
    assert s[("kafka_server_brokertopicmetrics_bytesin_total", (("topic", "a"),))] == 100
    assert s[("kafka_server_brokertopicmetrics_bytesin_total", ())] == 110
    assert s[("kafka_server_brokertopicmetrics_messagesin_total", ())] == 5
