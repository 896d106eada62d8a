"""pylog-replica-verification.sh (Kafka 3.9's ReplicaVerificationTool) on a real three-broker cluster: the
followers answer its debug-consumer fetches (KIP-392), its lines are Kafka's, and a follower that stops
shows as lag on the partition it holds back."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time

import pytest

from pylog.client.sync import KafkaClient
from pylog.localcluster import wait_until

from cli_helpers import REPO, script
from support.clients import create_topic, kcat
from tools_cluster import module_cluster

pytestmark = pytest.mark.integration
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"


@pytest.fixture(scope="module")
def rv_cluster(zk_server, _zk_root, tmp_path_factory):
    yield from module_cluster(zk_server, _zk_root, tmp_path_factory, "replica-verif", 3)


def _partition(bootstrap: str, topic: str):
    with KafkaClient(bootstrap) as k:
        meta = k.refresh_metadata(topics=[topic])
    return meta.topics[0].partitions[0]


def _lines(proc: subprocess.Popen) -> queue.Queue:
    q: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [q.put(line.rstrip("\n")) for line in proc.stdout], daemon=True).start()
    return q


def _wait_line(q: queue.Queue, pattern: str, timeout: float) -> str:
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        try:
            line = q.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        if re.fullmatch(pattern, line):
            return line
    raise AssertionError(f"no line matching {pattern!r} in {timeout}s; got {seen[-5:]}")


def test_no_matching_topic_is_one_error_line(rv_cluster):
    p = script("pylog-replica-verification.sh", "--bootstrap-server", rv_cluster.bootstrap,
               "--topics-include", "no-such-topic.*", timeout=60)
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == ("Error: No topics found. [topics-include] if specified, is either filtering out all topics "
                        "or there is no topic.\n")


def test_replicas_agree_then_a_stopped_follower_shows_as_lag(rv_cluster):
    create_topic(rv_cluster.bootstrap, "rv", partitions=1, rf=3)
    wait_until(lambda: len(_partition(rv_cluster.bootstrap, "rv").isr_nodes) == 3, 30, "rv's ISR to be full")
    kcat(rv_cluster.bootstrap, "-P", "-t", "rv", "-p", "0", input="".join(f"m{i}\n" for i in range(10)))
    proc = subprocess.Popen([os.path.join(REPO, "bin", "pylog-replica-verification.sh"), "--broker-list",
                             rv_cluster.bootstrap, "--topics-include", "rv", "--time", "-2",
                             "--report-interval-ms", "300", "--max-wait-ms", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    try:
        lines = _lines(proc)
        _wait_line(lines, STAMP + r": verification process is started", 30)
        # Every replica, followers included, answered with the same ten records.
        _wait_line(lines, STAMP + r": max lag is 0 for partition rv-0 at offset 10 among 1 partitions", 30)
        part = _partition(rv_cluster.bootstrap, "rv")
        follower = next(b for b in part.replica_nodes if b != part.leader_id)
        rv_cluster.stop([follower])
        kcat(rv_cluster.bootstrap, "-P", "-t", "rv", "-p", "0", input="".join(f"n{i}\n" for i in range(5)))
        # The stopped follower holds verification at 10 while the high watermark moved to 15.
        _wait_line(lines, STAMP + r": max lag is 5 for partition rv-0 at offset 10 among 1 partitions", 30)
        assert proc.poll() is None  # like Kafka's, it keeps verifying until stopped
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()
