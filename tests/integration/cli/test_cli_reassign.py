"""pylog-reassign-partitions against real three-broker clusters: throttled moves under acks=all load, the
throttle's rate, --verify clearing throttles, --cancel mid-way, and a controller killed mid-move."""

from __future__ import annotations

import json
import threading
import time

import pytest

from pylog.cli.admin_client import BrokerAdmin
from pylog.cli.reassign import reassign_command
from pylog.cli.topics import topics_command
from pylog.zk.client import ZkClient
from pylog.zk.codecs import TopicAssignment

from cli_helpers import cli, register_brokers, script
from support.clients import kcat, wait_for
from support.inspect import controller, partitions

pytestmark = pytest.mark.integration

# Small follower fetches keep one fetch's overshoot of the throttle small next to the bytes moved.
SETTINGS = {"auto.leader.rebalance.enable": "false", "replica.fetch.max.bytes": "65536",
            "zookeeper.session.timeout.ms": "4000"}
THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
REPLICA_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def rp(*args: str):
    return cli(reassign_command, *args)


def plan_file(tmp_path, topic, partition, replicas, name="plan.json") -> str:
    f = tmp_path / name
    f.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": partition,
                                                            "replicas": replicas}]}))
    return str(f)


def create(c, topic, assignment, *configs):
    extra = [a for kv in configs for a in ("--config", kv)]
    r = cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", topic, "--replica-assignment",
            assignment, *extra)
    assert r.exit_code == 0, r.output
    wait_for(lambda: all(len(p.isr) == len(p.replicas) for p in partitions(c.bootstrap, topic).values()), 30,
             f"{topic}'s full ISR")


def fill(c, topic, nbytes, prefix="pre"):
    """About nbytes of 1000-byte records in partition 0, acks=all; returns their values."""
    values = [f"{prefix}-{i:06d}-" + "x" * 985 for i in range(nbytes // 1000)]
    # Small batches: a follower fetch returns at least one whole batch, whatever the throttle says.
    kcat(c.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "acks=all", "-X", "batch.size=16384",
         input="\n".join(values) + "\n")
    return values


def consume(bootstrap, topic):
    return kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%s\n").stdout.split("\n")[:-1]


def zk_configs(zk_connect, entity_type, names):
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        return {n: zk.get_entity_config(entity_type, n) for n in names}
    finally:
        zk.close()


class Producer:
    """A confluent-kafka producer with acks=all writing numbered records until stopped."""

    def __init__(self, bootstrap, topic, interval=0.01):
        confluent_kafka = pytest.importorskip("confluent_kafka")
        self.p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                                           "message.timeout.ms": 60000})
        self.topic, self.interval = topic, interval
        self.acked: list[str] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self):
        i = 0
        while not self.stop.is_set():
            self.p.produce(self.topic, value=f"live-{i:06d}".encode(), partition=0, on_delivery=self._done)
            i += 1
            self.p.poll(self.interval)
        self.p.flush(60)
        self.p = None  # librdkafka keeps reconnecting until the producer is destroyed

    def _done(self, err, msg):
        (self.errors.append(str(err)) if err else self.acked.append(msg.value().decode()))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(90)


def test_throttled_move_under_acks_all_load_then_verify_clears_the_throttles(cluster_factory, tmp_path):
    c = cluster_factory(3, overrides=SETTINGS)
    create(c, "mv", "0:1", "min.insync.replicas=2")
    preloaded = fill(c, "mv", 1_200_000)
    rate = 200_000
    f = plan_file(tmp_path, "mv", 0, [1, 2])
    with Producer(c.bootstrap, "mv") as producer:
        wait_for(lambda: len(producer.acked) > 20, 30, "the producer's first acks")
        started = time.monotonic()
        r = rp("--bootstrap-server", c.bootstrap, "--execute", "--reassignment-json-file", f, "--throttle", str(rate))
        assert r.exit_code == 0, r.output
        assert r.stdout.endswith("The inter-broker throttle limit was set to 200000 B/s\n"
                                 "Successfully started partition reassignment for mv-0\n")
        # Kafka's throttle configs, written through ZooKeeper-backed configs the brokers apply at once.
        topic_cfg = zk_configs(c.zk_connect, "topics", ["mv"])["mv"]
        assert (topic_cfg[REPLICA_KEYS[0]], topic_cfg[REPLICA_KEYS[1]]) == ("0:0,0:1", "0:2")
        brokers = zk_configs(c.zk_connect, "brokers", ["0", "1", "2"])
        assert all(brokers[b][k] == str(rate) for b in brokers for k in THROTTLE_KEYS)
        r = rp("--bootstrap-server", c.bootstrap, "--verify", "--reassignment-json-file", f)
        assert r.stdout == "Status of partition reassignment:\nReassignment of partition mv-0 is still in progress.\n\n"
        wait_for(lambda: "mv-0" not in rp("--bootstrap-server", c.bootstrap, "--list").stdout, 60,
                 "the throttled reassignment to finish", interval=0.2)
        elapsed = time.monotonic() - started
    assert producer.errors == [] and len(producer.acked) > 100
    # The new replica copied the whole partition; the throttle bounded how fast (give or take a fetch).
    snapshot = tmp_path / "snap.json"
    assert rp("--bootstrap-server", c.bootstrap, "--export-snapshot", str(snapshot)).exit_code == 0
    size = json.loads(snapshot.read_text())["partitions"][0]["size_bytes"]
    assert size >= 1_200_000
    assert size <= rate * elapsed + 2 * 65536
    assert elapsed >= 0.6 * size / rate, f"{size} bytes moved in {elapsed:.1f}s: not throttled to {rate} B/s"
    r = rp("--bootstrap-server", c.bootstrap, "--verify", "--reassignment-json-file", f)
    assert r.stdout == ("Status of partition reassignment:\nReassignment of partition mv-0 is completed.\n\n"
                        "Clearing broker-level throttles on brokers 0,1,2\n"
                        "Clearing topic-level throttles on topic mv\n")
    assert zk_configs(c.zk_connect, "topics", ["mv"]) == {"mv": {"min.insync.replicas": "2"}}
    assert zk_configs(c.zk_connect, "brokers", ["0", "1", "2"]) == {"0": {}, "1": {}, "2": {}}
    view = partitions(c.bootstrap, "mv")[0]
    assert (view.replicas, set(view.isr), view.leader) == ((1, 2), {1, 2}, 1)
    wait_for(lambda: not (c.brokers[0].data_dir / "logs" / "mv-0").exists(), 30, "broker 0 to delete mv-0")
    got = consume(c.brokers[2].address, "mv")
    assert got[:len(preloaded)] == preloaded
    assert set(producer.acked) <= set(got[len(preloaded):])


def test_cancel_mid_way_reverts_to_the_original_replicas(cluster_factory, tmp_path):
    c = cluster_factory(3, overrides=SETTINGS)
    create(c, "cx", "0:1")
    values = fill(c, "cx", 500_000)
    f = plan_file(tmp_path, "cx", 0, [2, 1])
    zk = ["--zookeeper", c.zk_connect]
    r = rp(*zk, "--execute", "--reassignment-json-file", f, "--throttle", "20000")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Current partition replica assignment\n\n"
                               '{"version":1,"partitions":[{"topic":"cx","partition":0,"replicas":[0,1],')
    wait_for(lambda: rp(*zk, "--list").stdout == "Current partition reassignments:\n"
                                                  "cx-0: replicas: 2,1,0. adding: 2. removing: 0.\n",
             30, "the controller to start the reassignment")
    time.sleep(2)  # at 20 kB/s, 500 kB cannot have moved: the brokers applied the ZooKeeper-written throttle
    r = rp(*zk, "--verify", "--reassignment-json-file", f, "--preserve-throttles")
    assert r.stdout == "Status of partition reassignment:\nReassignment of partition cx-0 is still in progress.\n"
    r = rp(*zk, "--execute", "--reassignment-json-file", f)
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr.startswith("Cannot execute because there is an existing partition assignment.")
    r = rp(*zk, "--cancel", "--reassignment-json-file", f)
    assert r.exit_code == 1 and "Cannot cancel through ZooKeeper while /admin/reassign_partitions" in r.stderr
    r = rp("--bootstrap-server", c.bootstrap, "--cancel", "--reassignment-json-file", f)
    assert (r.exit_code, r.stdout) == (0, "Successfully cancelled partition reassignment for: cx-0\n"
                                          "None of the specified partition moves are active.\n"
                                          "Clearing broker-level throttles on brokers 0,1,2\n"
                                          "Clearing topic-level throttles on topic cx\n")
    wait_for(lambda: rp(*zk, "--list").stdout == "No partition reassignments found.\n", 30, "the cancel")
    # Back on the original replicas, led by the same broker. Like Kafka, the order is the original replicas'
    # order within the in-flight set (2,1,0 without the added 2), so a cancel can swap preferred leaders.
    view = partitions(c.bootstrap, "cx")[0]
    assert (view.replicas, set(view.isr), view.leader) == ((1, 0), {0, 1}, 0)
    wait_for(lambda: not (c.brokers[2].data_dir / "logs" / "cx-0").exists(), 30, "broker 2 to drop its copy")
    r = rp(*zk, "--verify", "--reassignment-json-file", f)
    assert r.stdout == ("Status of partition reassignment:\nThere is no active reassignment of partition cx-0, but "
                        "replica set is 1,0 rather than 2,1.\nClearing broker-level throttles on brokers 0,1,2\n"
                        "Clearing topic-level throttles on topic cx\n")
    assert consume(c.bootstrap, "cx") == values


def test_reassignment_survives_the_controller_being_killed_mid_move(cluster_factory, tmp_path):
    c = cluster_factory(3, overrides=SETTINGS)
    ctl, epoch = controller(c.zk_connect)
    a, b = sorted(set(c.brokers) - {ctl})
    create(c, "fo", str(a))
    values = fill(c, "fo", 400_000)
    f = plan_file(tmp_path, "fo", 0, [b])
    r = rp("--bootstrap-server", c.bootstrap, "--execute", "--reassignment-json-file", f, "--throttle", "30000")
    assert r.exit_code == 0, r.output
    wait_for(lambda: "fo-0" in rp("--bootstrap-server", c.bootstrap, "--list").stdout, 30, "the move to start")
    c.brokers[ctl].kill()
    rest = ",".join(c.brokers[x].address for x in (a, b))
    wait_for(lambda: controller(c.zk_connect)[1] > epoch and controller(c.zk_connect)[0] in (a, b), 30,
             "a new controller")

    def metadata_settled():  # both survivors know the new controller and that the old one is gone
        for x in (a, b):
            admin = BrokerAdmin(c.brokers[x].address)
            try:
                md = admin.metadata([])
            finally:
                admin.close()
            if set(md.brokers) != {a, b} or md.controller_id not in (a, b):
                return False
        return True
    wait_for(metadata_settled, 30, "the survivors' metadata to drop the dead controller")
    # The new controller resumed the move from the topic znode; --additional raises the throttle.
    r = rp("--bootstrap-server", rest, "--execute", "--reassignment-json-file", f, "--additional", "--throttle",
           "10000000", "--wait", "--wait-timeout", "60")
    assert r.exit_code == 0, r.output
    assert r.stdout.endswith("Successfully started partition reassignment for fo-0\n"
                             "Status of partition reassignment:\nReassignment of partition fo-0 is completed.\n\n"
                             f"Clearing broker-level throttles on brokers {a},{b}\n"
                             "Clearing topic-level throttles on topic fo\n")
    view = partitions(rest, "fo")[0]
    assert (view.replicas, view.isr, view.leader) == ((b,), (b,), b)
    assert consume(rest, "fo") == values
    p = script("pylog-reassign-partitions.sh", "--bootstrap-server", rest, "--list")
    assert (p.returncode, p.stdout, p.stderr) == (0, "No partition reassignments found.\n", "")


def test_zookeeper_list_cancel_and_additional_without_a_controller(zk, zk_connect, tmp_path):
    """The ZooKeeper path reads in-flight moves from the topic znodes and asks through the legacy znode."""
    register_brokers(zk, [1, 2, 3])
    zk.create_topic_assignment("z", TopicAssignment({0: (3, 1, 2), 1: (1, 2)}, None, {0: (3,)}, {0: (2,)}))
    conn = ["--zookeeper", zk_connect]
    assert rp(*conn, "--list").stdout == ("Current partition reassignments:\n"
                                          "z-0: replicas: 3,1,2. adding: 3. removing: 2.\n")
    f = plan_file(tmp_path, "z", 1, [2, 3])
    r = rp(*conn, "--execute", "--reassignment-json-file", f)
    assert (r.exit_code, r.stdout) == (1, "") and r.stderr.startswith("Cannot execute because there is an existing")
    r = rp(*conn, "--cancel", "--reassignment-json-file", plan_file(tmp_path, "z", 0, [3, 1], "cancel.json"),
           "--preserve-throttles")
    assert (r.exit_code, r.stdout) == (0, "Successfully cancelled partition reassignment for: z-0\n"
                                          "None of the specified partition moves are active.\n")
    # Cancelling is a reassignment back to the original replicas, for the controller to carry out.
    assert json.loads(zk.get("/admin/reassign_partitions")[0]) == {
        "version": 1, "partitions": [{"topic": "z", "partition": 0, "replicas": [1, 2]}]}
    r = rp(*conn, "--execute", "--reassignment-json-file", f, "--additional")
    assert r.exit_code == 1 and "while /admin/reassign_partitions is still being processed" in r.stderr
    r = rp(*conn, "--verify", "--reassignment-json-file", f)
    assert r.stdout == ("Status of partition reassignment:\nThere is no active reassignment of partition z-1, but "
                        "replica set is 1,2 rather than 2,3.\n")  # no throttle clearing: moves are pending
