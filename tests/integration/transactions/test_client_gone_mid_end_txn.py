"""A client that dies while its EndTxn is being handled must not wedge its transactional id.

The broker used to cancel a request's handler when the connection dropped. An EndTxn cancelled while its
PrepareCommit record waited for the ISR left the record written but the transaction marked "pending" in
the coordinator's memory, so the producer's next incarnation got CONCURRENT_TRANSACTIONS for ever (the
stalled consume-transform-produce chaos runs: a worker killed inside commit_transaction). Kafka's handlers
run to their end whatever the client does; so do ours now.

Here the EndTxn waits because the coordinator's follower of `__transaction_state` is stopped (SIGSTOP):
the client is killed inside commit_transaction, the follower resumed, and a new producer with the same
transactional.id (confluent-kafka at its defaults) must initialise, and the killed one's commit must be whole.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Producer

from support.clients import create_topic
from support.txn import TXN, coordinator_of, read_all

pytestmark = pytest.mark.integration

TID = "gone-mid-end-txn"
CHILD = """
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": sys.argv[2]})
p.init_transactions(60)
p.begin_transaction()
p.produce("t", b"committed-by-the-dead")
assert p.flush(30) == 0
print("flushed", flush=True)
sys.stdin.readline()
p.commit_transaction(60)
print("committed", flush=True)
"""


def test_end_txn_of_a_killed_client_completes_and_frees_its_id(cluster_factory):
    cluster = cluster_factory(2, overrides={**TXN, "transaction.state.log.replication.factor": "2",
                                            "transaction.state.log.min.isr": "1"})
    create_topic(cluster.bootstrap, "t", rf=2)
    coordinator = coordinator_of(cluster.bootstrap, TID)
    follower = cluster.brokers[1 - coordinator]
    child = subprocess.Popen([sys.executable, "-c", CHILD, cluster.bootstrap, TID], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    stopped = False
    try:
        assert child.stdout.readline().strip() == "flushed"
        follower.signal(signal.SIGSTOP)  # the PrepareCommit append now waits for the ISR
        stopped = True
        child.stdin.write("go\n")
        child.stdin.flush()
        time.sleep(1.5)  # EndTxn sent and waiting inside the coordinator (the replica lag time is 10 s)
        assert child.poll() is None, "commit_transaction returned while the follower was stopped"
        child.kill()
        child.wait(10)
        time.sleep(0.5)  # the broker sees the connection go
    finally:
        if stopped:
            follower.signal(signal.SIGCONT)
        if child.poll() is None:
            child.kill()
            child.wait(10)

    heir = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": TID})
    heir.init_transactions(60)  # CONCURRENT_TRANSACTIONS until it timed out, before the fix
    heir.begin_transaction()
    heir.produce("t", b"heir")
    heir.commit_transaction(60)
    assert sorted(read_all(cluster.bootstrap, {"t": 1}, None, 2)) == [b"committed-by-the-dead", b"heir"]
