"""pylog-verifiable-producer.sh and pylog-verifiable-consumer.sh on a real broker: the JSON event lines Kafka's
system tests read (names, field order, counts), keyed placement as the Java client's, clean stop on SIGTERM."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time

import pytest
from kafka.partitioner.default import murmur2

from cli_helpers import REPO, script
from support.clients import create_topic
from tools_cluster import module_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def vcluster(zk_server, _zk_root, tmp_path_factory):
    yield from module_cluster(zk_server, _zk_root, tmp_path_factory, "verifiable-tools", 1)


@pytest.fixture(scope="module")
def produced(vcluster):
    create_topic(vcluster.bootstrap, "vt", partitions=3)
    r = script("pylog-verifiable-producer.sh", "--topic", "vt", "--bootstrap-server", vcluster.bootstrap,
               "--max-messages", "20", "--repeating-keys", "4", "--value-prefix", "7", "--acks", "-1")
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_verifiable_producer_events(produced):
    assert [e["name"] for e in produced] == (["startup_complete"] + ["producer_send_success"] * 20
                                             + ["shutdown_complete", "tool_data"])
    assert all(list(e)[:2] == ["timestamp", "name"] and isinstance(e["timestamp"], int) for e in produced)
    sends = produced[1:21]
    assert list(sends[0]) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"]
    assert sorted(e["value"] for e in sends) == sorted(f"7.{i}" for i in range(20))
    for e in sends:
        i = int(e["value"].split(".")[1])
        assert e["key"] == str(i % 4) and e["topic"] == "vt"
        # Kafka's tools and the Java client: toPositive(murmur2(key)) % partitions
        assert e["partition"] == (murmur2(e["key"].encode()) & 0x7FFFFFFF) % 3
    per_partition = {}
    for e in sends:
        per_partition.setdefault(e["partition"], []).append(e["offset"])
    assert all(sorted(o) == list(range(len(o))) for o in per_partition.values())
    tool = produced[-1]
    assert list(tool) == ["timestamp", "name", "sent", "acked", "target_throughput", "avg_throughput"]
    assert (tool["sent"], tool["acked"], tool["target_throughput"]) == (20, 20, -1)
    assert isinstance(tool["avg_throughput"], float) and tool["avg_throughput"] > 0


def test_verifiable_consumer_events(vcluster, produced):
    r = script("pylog-verifiable-consumer.sh", "--bootstrap-server", vcluster.bootstrap, "--topic", "vt",
               "--group-id", "vg", "--max-messages", "20", "--verbose")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    names = [e["name"] for e in events]
    assert names[:2] == ["startup_complete", "partitions_assigned"] and names[-1] == "shutdown_complete"
    assert sorted((p["topic"], p["partition"]) for p in events[1]["partitions"]) == [("vt", 0), ("vt", 1), ("vt", 2)]
    assert list(events[1]["partitions"][0]) == ["topic", "partition"]
    batches = [e for e in events if e["name"] == "records_consumed"]
    assert sum(p["count"] for b in batches for p in b["partitions"]) == 20
    assert list(batches[0]["partitions"][0]) == ["topic", "partition", "count", "minOffset", "maxOffset"]
    records = [e for e in events if e["name"] == "record_data"]
    assert sorted(e["value"] for e in records) == sorted(f"7.{i}" for i in range(20))
    assert list(records[0]) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"]
    commits = [e for e in events if e["name"] == "offsets_committed"]
    assert commits and all(c["success"] is True and "error" not in c for c in commits)
    assert list(commits[0]) == ["timestamp", "name", "offsets", "success"]
    last = {(o["topic"], o["partition"]): o["offset"] for c in commits for o in c["offsets"]}
    ends = {}
    for e in produced[1:21]:
        ends[("vt", e["partition"])] = max(ends.get(("vt", e["partition"]), 0), e["offset"] + 1)
    assert last == ends
    assert "partitions_revoked" in names[names.index("partitions_assigned"):]


def test_verifiable_tools_stop_on_sigterm(vcluster, produced):
    """Unbounded runs (as system tests start them) print their final events when stopped."""
    proc = subprocess.Popen([os.path.join(REPO, "bin", "pylog-verifiable-producer.sh"), "--topic", "vt",
                             "--bootstrap-server", vcluster.bootstrap, "--throughput", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        # A fixed sleep raced the tool's start under load: SIGTERM came before its handler was installed.
        # Stop it once it has acknowledged a record, as a system test stops it mid-run.
        deadline = time.monotonic() + 60
        while not any('"producer_send_success"' in line for line in seen):
            seen.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        reader.join(timeout=30)
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    while not lines.empty():
        seen.append(lines.get_nowait())
    events = [json.loads(line) for line in seen]
    assert proc.returncode == 0, err
    assert [e["name"] for e in events[-2:]] == ["shutdown_complete", "tool_data"]
    tool = events[-1]
    assert tool["target_throughput"] == 200 and 0 < tool["acked"] == tool["sent"] < 1000
