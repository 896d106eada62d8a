"""kill -9 a broker: everything acknowledged with acks=1 before the kill is there after restart."""

from __future__ import annotations

import glob
import os

import pytest

from support.clients import create_topic, kcat, wait_for

pytestmark = pytest.mark.integration


def _produce_acked(bootstrap: str, topic: str, n: int) -> list[int]:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    acked: list[int] = []

    def on_delivery(err, msg):
        if err is None:
            acked.append(int(msg.value()))

    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 2,
                                  "batch.num.messages": 50})
    for i in range(n):
        p.produce(topic, value=str(i).encode(), partition=0, on_delivery=on_delivery)
        if i % 100 == 0:
            p.poll(0)
    assert p.flush(30) == 0
    return acked


def _consume_all(bootstrap: str, topic: str) -> list[int]:
    out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%s\n").stdout
    return [int(x) for x in out.split()]


def test_acknowledged_records_survive_kill_9(cluster):
    create_topic(cluster.bootstrap, "durable")
    acked = _produce_acked(cluster.bootstrap, "durable", 2000)
    assert len(acked) == 2000
    broker = cluster.brokers[0]
    broker.kill()
    cluster.restart(0)
    got = wait_for(lambda: _consume_all(cluster.bootstrap, "durable"), 60, "records after restart")
    assert got == list(range(2000))


def test_torn_tail_is_truncated_and_earlier_records_kept(cluster):
    create_topic(cluster.bootstrap, "torn")
    _produce_acked(cluster.bootstrap, "torn", 500)
    broker = cluster.brokers[0]
    broker.kill()
    seg = sorted(glob.glob(os.path.join(broker.data_dir, "logs", "torn-0", "*.log")))[-1]
    with open(seg, "ab") as f:  # half a batch: a header promising more bytes than follow
        f.write((10_000).to_bytes(8, "big") + (4_000).to_bytes(4, "big") + b"\x00" * 30)
    cluster.restart(0)
    got = wait_for(lambda: _consume_all(cluster.bootstrap, "torn"), 60, "records after restart")
    assert got == list(range(500))
    log_text = open(broker.log_path).read()
    assert "torn-0" in log_text and "runcat" in log_text  # recovery said what it truncated
