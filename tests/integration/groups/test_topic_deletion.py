"""Deleting a topic removes its committed offsets from every group (Kafka's cleanupGroupMetadata): what
pylog-consumer-groups.sh --describe shows right away and after the coordinator reloads the offsets log."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from support.clients import create_topic, wait_for
from support.groups import GROUPS, committed, poll_values, produce

pytestmark = pytest.mark.integration


BIN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "bin")


def script(name: str, *args: str) -> subprocess.CompletedProcess:
    """bin/<name> as an operator runs it."""
    return subprocess.run([os.path.join(BIN, name), *args], capture_output=True, text=True, timeout=120, cwd="/")


def described(bootstrap: str, *args: str) -> dict[str, dict[tuple[str, int], int]]:
    """{group: {(topic, partition): current offset}} from pylog-consumer-groups.sh --describe --output json."""
    r = script("pylog-consumer-groups.sh", "--bootstrap-server", bootstrap, "--describe", *args, "--output", "json")
    assert r.returncode == 0, r.stderr
    return {g["group"]: {(row["topic"], row["partition"]): row["current_offset"] for row in g["rows"]}
            for g in json.loads(r.stdout)["groups"]}


def listed(bootstrap: str) -> list[str]:
    r = script("pylog-consumer-groups.sh", "--bootstrap-server", bootstrap, "--list")
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_deleting_a_topic_drops_its_committed_offsets_from_every_group(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "gone", partitions=2)
    create_topic(c.bootstrap, "kept", partitions=1)
    produce(c.bootstrap, "gone", [f"g{i}" for i in range(10)], 2)
    produce(c.bootstrap, "kept", [f"k{i}" for i in range(4)])
    sub = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "both", "auto.offset.reset": "earliest"})
    sub.subscribe(["gone", "kept"])
    poll_values(sub, 14)
    sub.commit(asynchronous=False)
    sub.close()
    # An assign() consumer commits as a simple group (generation -1): once its only topic is gone,
    # nothing of the group is left and it disappears, as in Kafka.
    simple = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "simple"})
    simple.commit(offsets=[ck.TopicPartition("gone", 0, 3)], asynchronous=False)
    simple.close()
    assert described(c.bootstrap, "--all-groups") == {
        "both": {("gone", 0): 5, ("gone", 1): 5, ("kept", 0): 4}, "simple": {("gone", 0): 3}}

    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    admin.delete_topics(["gone"])["gone"].result(30)
    wait_for(lambda: "simple" not in listed(c.bootstrap), 30, "the simple group to go with its topic")
    assert described(c.bootstrap, "--all-groups") == {"both": {("kept", 0): 4}}
    assert committed(c.bootstrap, "both") == {("kept", 0): 4}

    c.restart(0)  # the coordinator reloads __consumer_offsets: the tombstones keep the offsets gone
    wait_for(lambda: committed(c.bootstrap, "both") == {("kept", 0): 4}, 60, "the group reloaded without 'gone'")
    assert listed(c.bootstrap) == ["both"]

    create_topic(c.bootstrap, "gone", partitions=2)  # a new topic of the same name starts with no offsets
    again = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "both", "auto.offset.reset": "earliest"})
    again.subscribe(["gone", "kept"])
    produce(c.bootstrap, "gone", ["new"])
    try:
        assert poll_values(again, 1) == ["new"]  # kept's 4 records are not re-delivered
    finally:
        again.close()
