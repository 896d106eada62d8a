"""The balancer's load monitor through cccli: the brokers' `__pylog_metrics` samples become `load` and
`partition_load` in Cruise Control's shapes, with capacities from a Cruise Control capacity file;
pause_sampling / resume_sampling stop and restart the sampling, as the monitor substate shows; an execution
stopped midway leaves every partition on its old or its new replicas, nothing in flight and no throttle."""

from __future__ import annotations

import json
import threading
import time

import pytest
from confluent_kafka import Producer

from kafka.admin import KafkaAdminClient, NewTopic

from pylog.cli.admin_client import BrokerAdmin
from pylog.zk.testing import free_port
from support.balancer import balancer_log, cccli, start_balancer, stop_balancer, throttles_left, wait_idle, \
    wait_listening
from support.clients import create_topic, kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration

CAPACITY = {"brokerCapacities": [{"brokerId": "-1", "capacity": {"DISK": "1000", "CPU": "100", "NW_IN": "50000",
                                                                  "NW_OUT": "40000"}, "doc": "every broker"}]}


class Writer:
    """Keeps producing 1 KB records to one partition, so its leader samples a steady bytes-in rate."""

    def __init__(self, bootstrap: str, topic: str, partition: int) -> None:
        self._producer = Producer({"bootstrap.servers": bootstrap})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(topic, partition), daemon=True)

    def _run(self, topic: str, partition: int) -> None:
        while not self._stop.is_set():
            for _ in range(20):
                self._producer.produce(topic, b"x" * 1024, partition=partition)
            self._producer.poll(0)
            self._stop.wait(0.05)

    def __enter__(self) -> "Writer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._producer.flush(30)


def stop_mid_execution(bootstrap: str, port: int) -> None:
    """A throttled rebalance stopped after its first batch: the move in flight finishes, the pending ones are
    cancelled, nothing is left half-moved, the throttles are cleared and no record is lost."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic("mv", -1, -1, replica_assignments={p: [0] for p in range(6)})])
    finally:
        admin.close()
    values = [f"m{i:05d}" + "x" * 1000 for i in range(600)]
    kcat(bootstrap, "-P", "-t", "mv", "-X", "acks=all", input="\n".join(values) + "\n")
    before = {p: v.replicas for p, v in partitions(bootstrap, "mv").items()}
    # One partition at a time through broker 0, each ~100 kB at 20 kB/s: the stop lands mid-execution.
    plan, _ = cccli(port, "rebalance", "--concurrency", "1", "--add-parameter", "replication_throttle=20000",
                    "verbose=true")
    targets = {m["topicPartition"]["partition"]: tuple(m["newReplicas"]) for m in plan["proposals"]
               if m["topicPartition"]["topic"] == "mv"}
    assert len(targets) >= 3, plan["proposals"]
    stopped, _ = cccli(port, "stop_proposal_execution")
    assert stopped["message"] == "Proposal execution stopped."
    executor = cccli(port, "state", "--add-parameter", "substates=executor")[0]["ExecutorState"]
    assert executor["state"] in ("STOPPING_EXECUTION", "NO_TASK_IN_PROGRESS"), executor
    wait_idle(port)
    after = partitions(bootstrap, "mv")
    moved = {p for p, v in after.items() if v.replicas != before[p]}
    assert moved and len(moved) < len(targets)  # some finished, the rest never started
    assert all(after[p].replicas == targets[p] and set(after[p].isr) == set(targets[p]) for p in moved)
    a = BrokerAdmin(bootstrap, 10000)
    try:
        assert a.list_partition_reassignments() == {}  # nothing left in flight
    finally:
        a.close()
    assert throttles_left(bootstrap, range(3)) == []
    got = kcat(bootstrap, "-C", "-t", "mv", "-e", "-f", "%s\n").stdout.split()
    assert sorted(got) == sorted(values)
    tasks = cccli(port, "user_tasks")[0]["userTasks"]
    assert [t["Status"] for t in tasks if t["RequestURL"].startswith("POST /kafkacruisecontrol/rebalance")] == [
        "Completed"]


def test_load_sampling_and_a_stopped_execution(cluster_factory, zk_connect, tmp_path):
    c = cluster_factory(3, overrides={"metrics.sample.interval.ms": "500"})
    create_topic(c.bootstrap, "ld", partitions=3, rf=2)
    (tmp_path / "capacity.json").write_text(json.dumps(CAPACITY))
    port = free_port()
    proc = start_balancer(tmp_path, c.bootstrap, zk_connect, port, "metric.sampling.interval.ms=300",
                          "partition.metrics.window.ms=2000", "num.partition.metrics.windows=5",
                          f"capacity.config.file={tmp_path / 'capacity.json'}")
    try:
        wait_listening(port)
        with Writer(c.bootstrap, "ld", 0):
            def hot_partition_first() -> bool:
                got = cccli(port, "partition_load", "--resource", "nw_in", "--topic", "ld")[0]["records"]
                return got[0]["partition"] == 0 and got[0]["networkInbound"] > 10 and got[1]["networkInbound"] == 0
            wait_for(hot_partition_first, 60, "ld-0 to lead partition_load by bytes in", interval=0.5)
            load, _ = cccli(port, "load")
        view = partitions(c.bootstrap, "ld")[0]
        leader, follower = view.leader, next(r for r in view.replicas if r != view.leader)

        records, _ = cccli(port, "partition_load", "--topic", "ld")  # resource=disk by default
        first = records["records"][0]
        assert (first["topic"], first["partition"], first["leader"], first["followers"]) == ("ld", 0, leader,
                                                                                               [follower])
        assert first["disk"] > 0.1 and {r["disk"] for r in records["records"][1:]} == {0.0}
        assert set(first) == {"topic", "partition", "leader", "followers", "disk", "networkInbound",
                              "networkOutbound", "msg_in"}
        one, _ = cccli(port, "partition_load", "--num-entries", "1", "--topic", "ld")
        assert [(r["topic"], r["partition"]) for r in one["records"]] == [("ld", 0)]
        # (cccli 1.1.3 mangles a --partition range, 1-2 arrives as 1---2; a single id is sent as is.)
        two, _ = cccli(port, "partition_load", "--partition", "2", "--topic", "ld")
        assert [(r["topic"], r["partition"]) for r in two["records"]] == [("ld", 2)]

        rows = {b["Broker"]: b for b in load["brokers"]}
        assert rows[leader]["LeaderNwInRate"] > 10 and rows[follower]["FollowerNwInRate"] > 10
        assert all(b["DiskCapacityMB"] == 1000 and b["NetworkInCapacity"] == 50000 for b in load["brokers"])
        assert rows[leader]["DiskPct"] == pytest.approx(rows[leader]["DiskMB"] / 10, abs=0.01)
        assert load["hosts"][0]["Host"] == "127.0.0.1" and load["hosts"][0]["Replicas"] >= 6

        monitor = cccli(port, "state", "--add-parameter", "substates=monitor")[0]["MonitorState"]
        assert monitor["state"] == "RUNNING" and monitor["numValidPartitions"] >= 3

        paused, _ = cccli(port, "pause_sampling", "--add-parameter", "reason=maintenance window")
        assert paused["message"] == "Metric sampling paused."
        before = cccli(port, "state", "--add-parameter", "substates=monitor")[0]["MonitorState"]
        assert (before["state"], before["reasonOfLatestPauseOrResume"]) == ("PAUSED", "maintenance window")
        time.sleep(1.5)  # five sampling intervals: none may run while paused
        after = cccli(port, "state", "--add-parameter", "substates=monitor")[0]["MonitorState"]
        assert after["numSamplingRounds"] <= before["numSamplingRounds"] + 1  # one round may have been under way
        resumed, _ = cccli(port, "resume_sampling")
        assert resumed["message"] == "Metric sampling resumed."
        wait_for(lambda: cccli(port, "state", "--add-parameter", "substates=monitor")[0]["MonitorState"][
            "numSamplingRounds"] > after["numSamplingRounds"] + 1, 30, "sampling to run again")
        again = cccli(port, "state", "--add-parameter", "substates=monitor")[0]["MonitorState"]
        assert again["state"] == "RUNNING"
        stop_mid_execution(c.bootstrap, port)
    finally:
        stop = stop_balancer(proc, tmp_path)
        print(balancer_log(tmp_path))
    assert (stop.returncode, proc.returncode) == (0, 0), stop.stderr
