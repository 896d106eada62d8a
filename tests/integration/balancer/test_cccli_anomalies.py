"""The balancer's other anomalies on a real cluster, through cccli: a failed log dir is listed as a disk failure,
`fix_offline_replicas` proposes the moves, and once self-healing is switched on for it (admin) the offline
replicas are re-created elsewhere; a topic below the target replication factor and a violated replica
distribution are listed (alert only) and the topic is brought up to the target once its switch is on."""

from __future__ import annotations

import os

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from pylog.client.sync import KafkaClient
from pylog.zk.testing import free_port
from support.balancer import balancer_log, cccli, start_balancer, stop_balancer, wait_idle, wait_listening
from support.clients import kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration


def offline(bootstrap: str, topic: str) -> dict[int, list[int]]:
    with KafkaClient(bootstrap, timeout=10) as k:
        md = k.refresh_metadata([topic])
    return {p.partition_index: sorted(p.offline_replicas) for p in md.topics[0].partitions}


def detector(port: int) -> dict:
    return cccli(port, "state", "--add-parameter", "substates=anomaly_detector")[0]["AnomalyDetectorState"]


def threshold_and_hard_goals(bootstrap: str, port: int) -> None:
    """13 replicas, broker 0 holds 6: threshold-only moves exactly its excess over ceil(avg x 1.1) = 5; a hard
    goal (at most 4 replicas per broker) no plan can meet refuses the proposal unless skip_hard_goal_check."""
    counts = {b: sum(b in v.replicas for t in ("df", "low") for v in partitions(bootstrap, t).values())
              for b in range(3)}
    assert counts[0] == 6 and sum(counts.values()) == 13
    only, _ = cccli(port, "rebalance", "--dry-run", "--add-parameter", "threshold_only=true", "verbose=true")
    assert only["summary"]["numReplicaMovements"] == only["pylogLowerBounds"]["numReplicaMovements"] == 1
    assert [0 in m["oldReplicas"] and 0 not in m["newReplicas"] for m in only["proposals"]] == [True]
    refused, _ = cccli(port, "proposals", "--add-parameter", "goals=ReplicaDistributionGoal,ReplicaCapacityGoal")
    assert "hard goal(s) ['ReplicaCapacityGoal']" in refused["errorMessage"]
    forced, _ = cccli(port, "proposals", "--add-parameter", "goals=ReplicaDistributionGoal,ReplicaCapacityGoal",
                      "skip_hard_goal_check=true")
    assert {g["goal"]: g["status"] for g in forced["goalSummary"]}["ReplicaCapacityGoal"] == "VIOLATED"


def test_disk_failure_topic_anomaly_and_goal_violation(cluster_factory, zk_connect, tmp_path):
    d0, d1 = str(tmp_path / "b0-a"), str(tmp_path / "b0-b")
    # Broker 0 has two log dirs; its checkpoints every 300 ms are the I/O that finds the broken one.
    c = cluster_factory(3, overrides={"auto.leader.rebalance.enable": "false", "metrics.sample.interval.ms": "0"},
                        broker_overrides={0: {"log.dirs": f"{d0},{d1}",
                                              "replica.high.watermark.checkpoint.interval.ms": "300"}})
    admin = KafkaAdminClient(bootstrap_servers=c.bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic("df", -1, -1, replica_assignments={p: [0, 1 + p % 2] for p in range(6)}),
                             NewTopic("low", -1, -1, replica_assignments={0: [1]})])
    finally:
        admin.close()
    values = [f"v{i:04d}" for i in range(200)]
    kcat(c.bootstrap, "-P", "-t", "df", "-X", "acks=all", input="\n".join(values) + "\n")
    port = free_port()
    proc = start_balancer(tmp_path, c.bootstrap, zk_connect, port, "anomaly.detection.interval.ms=500",
                          "self.healing.enabled=false", "self.healing.target.topic.replication.factor=2",
                          "topic.excluded.from.replication.factor.check=__.*", "max.replicas.per.broker=4")
    try:
        wait_listening(port)
        state = wait_for(lambda: (s := detector(port))["recentTopicAnomalies"] and s["recentGoalViolations"] and s,
                         30, "the topic anomaly and the goal violation to be listed")
        [topic] = state["recentTopicAnomalies"]
        assert topic["status"] == "DETECTED" and topic["badTopicsByReplicationFactor"] == {"low": 1}
        assert "ReplicaDistributionGoal" in state["recentGoalViolations"][0]["fixableViolatedGoals"]
        threshold_and_hard_goals(c.bootstrap, port)

        os.rename(d1, d1 + ".broken")  # the dir disappears under broker 0; a file stands in its place
        with open(d1, "w") as f:
            f.write("not a directory")
        failing = sorted(wait_for(lambda: [p for p, off in offline(c.bootstrap, "df").items() if off == [0]], 30,
                                  "broker 0's replicas on the failed dir to go offline"))
        [disk] = wait_for(lambda: detector(port)["recentDiskFailures"], 30, "the disk failure to be listed")
        assert list(disk["failedDisksByTimeMs"]) == ["0"] and list(disk["failedDisksByTimeMs"]["0"]) == [d1]
        assert disk["status"] == "DETECTED"  # self-healing is off: only an alert

        plan, _ = cccli(port, "fix_offline_replicas", "--dry-run", "--add-parameter", "verbose=true")
        assert plan["summary"]["numReplicaMovements"] == plan["pylogLowerBounds"]["numReplicaMovements"] == len(failing)
        assert sorted(m["topicPartition"]["partition"] for m in plan["proposals"]) == failing
        assert all(0 not in m["newReplicas"] for m in plan["proposals"])
        assert offline(c.bootstrap, "df")[failing[0]] == [0]  # a dry run moves nothing

        enabled, _ = cccli(port, "admin", "--enable-self-healing-for", "disk_failure", "topic_anomaly")
        assert enabled["selfHealingEnabledAfter"]["DISK_FAILURE"] is True
        assert enabled["selfHealingEnabledAfter"]["GOAL_VIOLATION"] is False
        wait_for(lambda: all(not off for off in offline(c.bootstrap, "df").values()), 60, "no offline replica left")
        wait_for(lambda: len(partitions(c.bootstrap, "low")[0].replicas) == 2, 60, "topic low at replication 2")
        wait_idle(port)
        views = partitions(c.bootstrap, "df")
        assert all(0 not in views[p].replicas and len(views[p].replicas) == 2 for p in failing)
        state = detector(port)
        assert [d["status"] for d in state["recentDiskFailures"]] == ["FIX_STARTED"]
        assert [t["status"] for t in state["recentTopicAnomalies"]] == ["FIX_STARTED"]
        assert state["numSelfHealingStarted"] == 2
        got = kcat(c.bootstrap, "-C", "-t", "df", "-e", "-f", "%s\n").stdout.split()
        assert sorted(got) == sorted(values)
    finally:
        stop = stop_balancer(proc, tmp_path)
        print(balancer_log(tmp_path))
    assert (stop.returncode, proc.returncode) == (0, 0), stop.stderr

