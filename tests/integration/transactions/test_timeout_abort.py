"""A transaction left open by a killed producer process is aborted by the coordinator once its
transaction.timeout.ms has passed: the last stable offset moves on, so a read_committed consumer
sees the records written after it, and never the dead producer's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from support.clients import create_topic, wait_for
from support.txn import TXN, read_all, stable_end

pytestmark = pytest.mark.integration

# The dead producer's process: open a transaction (6 s timeout), write, say so, then hang until killed.
PRODUCER = """
import sys, time
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "doomed", "transaction.timeout.ms": 6000})
p.init_transactions(60)
p.begin_transaction()
p.produce("t", value=b"never-committed", partition=0)
assert p.flush(30) == 0
print("written", flush=True)
time.sleep(600)
"""


def test_a_killed_producer_s_transaction_is_aborted_after_its_timeout(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    cluster = cluster_factory(1, overrides={**TXN, "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"})
    create_topic(cluster.bootstrap, "t", partitions=1)
    proc = subprocess.Popen([sys.executable, "-c", PRODUCER, cluster.bootstrap], stdout=subprocess.PIPE,
                            env={**os.environ})
    try:
        assert proc.stdout.readline().strip() == b"written"
        written_at = time.monotonic()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    later = ck.Producer({"bootstrap.servers": cluster.bootstrap})
    later.produce("t", value=b"later", partition=0)
    assert later.flush(30) == 0
    lso = stable_end(cluster.bootstrap, "t")
    if time.monotonic() - written_at < 5:  # surely before the timeout: the open transaction holds the LSO at 0
        assert lso == 0
    wait_for(lambda: stable_end(cluster.bootstrap, "t") == 3, timeout=30, what="the timed-out transaction's abort")
    assert time.monotonic() - written_at < 30
    assert read_all(cluster.bootstrap, {"t": 1}, None, 1) == [b"later"]
    assert sorted(read_all(cluster.bootstrap, {"t": 1}, "read_uncommitted", 2)) == [b"later", b"never-committed"]
