"""cccli (cruise-control-client, unmodified) drives pylog's balancer on a real cluster: state, load, a dry-run
rebalance, add_broker executed onto a new broker, remove_broker, user_tasks; data checked by a consumer."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from pylog.cli.admin_client import BrokerAdmin
from pylog.cli.reassign_cluster import BrokerCluster
from pylog.cli.topics import topics_command
from pylog.zk.testing import free_port

from click.testing import CliRunner

from support.balancer import CCCLI, cccli, stop_balancer, throttles_left, wait_idle
from support.balancer import start_balancer as support_start
from support.clients import kcat, wait_for
from support.inspect import partitions

pytestmark = pytest.mark.integration

SETTINGS = {"auto.leader.rebalance.enable": "false", "zookeeper.session.timeout.ms": "4000"}


def start_balancer(tmp_path: Path, bootstrap: str, zk_connect: str, port: int) -> subprocess.Popen:
    return support_start(tmp_path, bootstrap, zk_connect, port,
                         "num.concurrent.partition.movements.per.broker=2", "default.replication.throttle=20000000",
                         # Short broker-failure thresholds so the kill -9 phase heals within seconds.
                         # Only broker failures heal: a goal violation's rebalance would race the flows below.
                         "self.healing.broker.failure.enabled=true", "anomaly.detection.interval.ms=500",
                         "broker.failure.alert.threshold.ms=1000", "broker.failure.self.healing.threshold.ms=2000")


def replica_counts(bootstrap: str, topic: str) -> Counter:
    return Counter(b for v in partitions(bootstrap, topic).values() for b in v.replicas)


def poll_by_user_task_id(port: int) -> None:
    """Without a session cookie, the User-Task-ID header finds the task again (Cruise Control's protocol)."""
    url = f"http://127.0.0.1:{port}/kafkacruisecontrol/rebalance?dryrun=true&json=true"
    first = urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=30)
    task_id = first.headers["User-Task-ID"]
    assert first.status == 202 and "progress" in json.load(first)
    deadline = time.monotonic() + 30
    while True:
        again = urllib.request.urlopen(urllib.request.Request(url, method="POST", headers={"User-Task-ID": task_id}),
                                       timeout=30)
        assert again.headers["User-Task-ID"] == task_id
        if again.status == 200:
            assert json.load(again)["summary"]["numReplicaMovements"] == 0
            return
        assert time.monotonic() < deadline, "the rebalance task did not finish"
        time.sleep(0.05)


def restart_mid_reassignment(c, proc: subprocess.Popen, tmp_path: Path, zk_connect: str, port: int,
                             values: list[str]) -> subprocess.Popen:
    """A reassignment held in flight by a 1 B/s throttle: a restarted balancer follows it (never starts it
    again), refuses a new execution meanwhile, and clears the throttle once it completed."""
    admin = BrokerAdmin(c.bootstrap, 10000)
    try:
        cluster = BrokerCluster(admin)
        # Enough bytes in cc-0 that a 1 B/s throttle holds its new replica back for the whole check.
        big = [f"b{i:04d}" + "x" * 8000 for i in range(400)]
        kcat(c.bootstrap, "-P", "-t", "cc", "-p", "0", "-X", "acks=all", input="\n".join(big) + "\n")
        values += big
        replicas = list(partitions(c.bootstrap, "cc")[0].replicas)
        cluster.set_throttles({"cc": (",".join(f"0:{b}" for b in replicas), "0:0")}, [0, 1, 2, 3], 1)
        assert cluster.start({("cc", 0): [replicas[0], 0]}) == {}
        assert stop_balancer(proc, tmp_path).returncode == 0 and proc.returncode == 0
        proc = start_balancer(tmp_path, c.bootstrap, zk_connect, port)
        wait_for(lambda: subprocess.run([CCCLI, "-a", f"127.0.0.1:{port}", "state"], capture_output=True,
                                        timeout=30).returncode == 0, 30, "the balancer to listen again")
        executor = cccli(port, "state")[0]["ExecutorState"]
        assert executor["state"] == "INTER_BROKER_REPLICA_MOVEMENT_TASK_IN_PROGRESS", executor
        assert executor["triggeredUserTaskId"].startswith("recovered-") and executor["numPendingPartitionMovements"] == 0
        refused, _ = cccli(port, "rebalance")
        assert "Cannot start a new execution" in refused["errorMessage"]
        cluster.clear_throttles([0, 1, 2, 3], [])  # let the follower catch up
        wait_idle(port)
        assert sorted(partitions(c.bootstrap, "cc")[0].replicas) == sorted([replicas[0], 0])
        assert throttles_left(c.bootstrap, range(4)) == []
    finally:
        admin.close()
    return proc


def healed(bootstrap: str, dead: int) -> bool:
    views = partitions(bootstrap, "cc").values()
    return all(dead not in v.replicas and set(v.isr) == set(v.replicas) and len(v.replicas) == 2 for v in views)


def heal_a_killed_broker(c, port: int, values: list[str]) -> None:
    """kill -9 broker 1: after the alert threshold the failure is listed, after the healing threshold its
    replicas are re-created on the live brokers until nothing is under-replicated."""
    live = ",".join(c.brokers[b].address for b in (0, 2, 3))
    before = partitions(c.bootstrap, "cc")
    bound = sum(1 in v.replicas for v in before.values())  # each of its replicas must be re-created somewhere
    killed_at = time.monotonic()
    c.brokers[1].kill()
    wait_for(lambda: healed(live, 1), 60, "the balancer to heal broker 1's partitions", interval=0.2)
    after = partitions(live, "cc")
    moves = sum(len(set(after[p].replicas) - set(v.replicas)) for p, v in before.items())
    print(f"kill -9 to zero under-replicated partitions: {time.monotonic() - killed_at:.1f} s; "
          f"{moves} replica moves, lower bound {bound}")
    assert moves == bound
    state = wait_idle(port)
    assert state["ExecutorState"].get("lastExecutionError") is None
    detector, _ = cccli(port, "state", "--add-parameter", "substates=anomaly_detector")
    failures = detector["AnomalyDetectorState"]["recentBrokerFailures"]
    assert [(list(f["failedBrokersByTimeMs"]), f["status"]) for f in failures] == [(["1"], "FIX_STARTED")]
    assert detector["AnomalyDetectorState"]["numSelfHealingStarted"] == 1
    counts = replica_counts(live, "cc")
    assert 1 not in counts and sum(counts.values()) == 12
    got = kcat(live, "-C", "-t", "cc", "-e", "-f", "%s\n").stdout.split()
    assert sorted(got) == sorted(values)


def test_cccli_drives_the_balancer(cluster_factory, zk_connect, tmp_path):
    c = cluster_factory(3, overrides=SETTINGS)
    r = CliRunner().invoke(topics_command, ["--bootstrap-server", c.bootstrap, "--create", "--topic", "cc",
                                            "--partitions", "6", "--replication-factor", "2"])
    assert r.exit_code == 0, r.output
    values = [f"v{i:05d}" for i in range(300)]
    kcat(c.bootstrap, "-P", "-t", "cc", "-X", "acks=all", input="\n".join(values) + "\n")
    port = free_port()
    proc = start_balancer(tmp_path, c.bootstrap, zk_connect, port)
    try:
        wait_for(lambda: subprocess.run([CCCLI, "-a", f"127.0.0.1:{port}", "state"], capture_output=True,
                                        timeout=30).returncode == 0, 30, "the balancer to listen")
        state, _ = cccli(port, "state", "--add-parameter", "substates=monitor,executor,analyzer")
        assert state["ExecutorState"]["state"] == "NO_TASK_IN_PROGRESS"
        assert state["MonitorState"]["numTotalPartitions"] == 6
        assert state["AnalyzerState"]["isProposalReady"] is True

        load, _ = cccli(port, "load")
        assert {b["Broker"]: b["Replicas"] for b in load["brokers"]} == {0: 4, 1: 4, 2: 4}
        assert sum(b["Leaders"] for b in load["brokers"]) == 6

        cluster_state, _ = cccli(port, "kafka_cluster_state")
        assert cluster_state["KafkaBrokerState"]["ReplicaCountByBrokerId"] == {"0": 4, "1": 4, "2": 4}
        assert cluster_state["KafkaPartitionState"]["urp"] == []
        proposals, _ = cccli(port, "proposals", "--add-parameter", "verbose=true")
        assert proposals["summary"]["numReplicaMovements"] == 0 and proposals["proposals"] == []
        stopped, _ = cccli(port, "stop_proposal_execution")
        assert stopped["message"] == "No ongoing proposal execution to stop."
        poll_by_user_task_id(port)
        admin, _ = cccli(port, "admin", "--disable-self-healing-for", "broker_failure")
        assert (admin["selfHealingEnabledBefore"]["BROKER_FAILURE"], admin["selfHealingEnabledAfter"]) == (
            True, {t: False for t in ("BROKER_FAILURE", "DISK_FAILURE", "TOPIC_ANOMALY", "GOAL_VIOLATION",
                                      "METRIC_ANOMALY")})
        cccli(port, "admin", "--enable-self-healing-for", "broker_failure")
        detector = cccli(port, "state", "--add-parameter", "substates=anomaly_detector")[0]["AnomalyDetectorState"]
        assert detector["selfHealingEnabled"] == ["BROKER_FAILURE"]

        new = c.add_broker()
        before = partitions(c.bootstrap, "cc")
        plan, _ = cccli(port, "rebalance", "--dry-run")
        assert plan["summary"]["numReplicaMovements"] == plan["pylogLowerBounds"]["numReplicaMovements"] == 3
        assert partitions(c.bootstrap, "cc") == before  # a dry run changes nothing

        done, polled = cccli(port, "add_broker", str(new))
        assert '"progress"' in polled  # cccli was answered 202 and polled the task again
        assert done["summary"]["numReplicaMovements"] == 3
        wait_idle(port)
        assert replica_counts(c.bootstrap, "cc") == {0: 3, 1: 3, 2: 3, new: 3}
        assert throttles_left(c.bootstrap, range(4)) == []  # set for the moves, cleared after them

        cccli(port, "remove_broker", "0")
        state = wait_idle(port)
        assert state["ExecutorState"]["recentlyRemovedBrokers"] == [0]
        counts = replica_counts(c.bootstrap, "cc")
        assert 0 not in counts and sorted(counts.values()) == [4, 4, 4]

        demoted, _ = cccli(port, "demote_broker", "2")
        assert demoted["summary"]["numReplicaMovements"] == 0 and demoted["summary"]["numLeaderMovements"] > 0
        state = wait_idle(port)
        assert state["ExecutorState"]["recentlyDemotedBrokers"] == [2]
        views = partitions(c.bootstrap, "cc").values()
        assert all(v.leader != 2 and v.replicas[-1] == 2 for v in views if 2 in v.replicas)
        assert sum(2 in v.replicas for v in views) == 4  # leadership moved, replicas did not

        tasks, _ = cccli(port, "user_tasks")
        statuses = {t["RequestURL"].split("?")[0]: t["Status"] for t in tasks["userTasks"]}
        assert statuses["POST /kafkacruisecontrol/add_broker"] == "Completed"
        assert statuses["POST /kafkacruisecontrol/remove_broker"] == "Completed"
        got = kcat(c.bootstrap, "-C", "-t", "cc", "-e", "-f", "%s\n").stdout.split()
        assert sorted(got) == sorted(values)
        proc = restart_mid_reassignment(c, proc, tmp_path, zk_connect, port, values)
        heal_a_killed_broker(c, port, values)
    finally:
        stop = stop_balancer(proc, tmp_path)
        log = (tmp_path / "balancer.log").read_text()
        print("\n".join(line for line in log.splitlines() if " GET " not in line and " POST " not in line))
    assert (stop.returncode, proc.returncode) == (0, 0), stop.stderr
