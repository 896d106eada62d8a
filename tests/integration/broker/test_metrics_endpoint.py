"""prometheus.listener: a real broker's /metrics serves every documented family, with its type and labels.

docs/metrics.md holds the list (its table is the contract dashboards and alerts are written against);
the test fails for a documented family not served, served with another type or other labels, or a
`kafka_`/`pylog_` family served but not documented.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pylog.zk.testing import free_port
from support.clients import create_topic, wait_for
from support.groups import GROUPS, committed_group, produce
from support.metrics import documented, scrape, scrape_text, value

pytest.importorskip("confluent_kafka")

# Families the test gives data to: each must have at least one series with exactly its documented labels.
EXERCISED = {"kafka_server_brokertopicmetrics_bytesin", "kafka_server_brokertopicmetrics_messagesin",
             "kafka_network_requestmetrics_requests", "kafka_network_requestmetrics_totaltimems", "kafka_log_log_size",
             "kafka_consumergroup_lag", "kafka_consumergroup_current_offset", "kafka_consumergroup_members",
             "kafka_topic_partition_current_offset", "pylog_log_dir_free_bytes", "pylog_broker_state",
             "pylog_group_coordinator_groups", "pylog_replication_throttle_bytes_per_second"}


def test_every_documented_family_is_served_with_its_type_and_labels(cluster_factory):
    c = cluster_factory(1, overrides=GROUPS, prometheus=True)
    b = c.brokers[0]
    create_topic(c.bootstrap, "orders", partitions=2)
    produce(c.bootstrap, "orders", [f"v{i}" for i in range(10)], partitions=2)
    consumer = committed_group(c.bootstrap, "orders", "billing", 10)
    try:
        produce(c.bootstrap, "orders", [f"w{i}" for i in range(6)], partitions=2)  # 3 more per partition
        fams = wait_for(lambda: (f := scrape(b.metrics_port)) and value(
            f, "kafka_consumergroup_lag", consumergroup="billing", topic="orders", partition="0") == 3 and f,
            timeout=30, what="the group's lag of 3 on orders-0")
    finally:
        consumer.close()

    docs = {d.family: d for d in documented()}
    assert len(docs) >= 50
    problems = []
    for fam, d in docs.items():
        served = fams.get(fam)
        if served is None:
            problems.append(f"{d.name}: not served")
            continue
        if served.type != d.type:
            problems.append(f"{d.name}: served as {served.type}, documented as {d.type}")
        label_sets = {frozenset(s.labels) - {"quantile"} if d.type == "summary" else frozenset(s.labels)
                      for s in served.samples}
        want = d.labels - {"quantile"}
        allowed = {want, want | d.optional}
        if d.optional:
            allowed.add(want)  # the all-topics series
        bad = [sorted(ls) for ls in label_sets if ls not in allowed]
        if bad:
            problems.append(f"{d.name}: labels {bad}, documented {sorted(d.labels | d.optional)}")
        if fam in EXERCISED and want | d.optional not in label_sets:
            problems.append(f"{d.name}: no series with labels {sorted(want | d.optional)}")
    undocumented = sorted(n for n in fams if n.startswith(("kafka_", "pylog_")) and n not in docs)
    assert problems == [] and undocumented == [], (problems, undocumented)

    # What an operator reads off it.
    assert value(fams, "kafka_controller_kafkacontroller_activecontrollercount") == 1
    assert value(fams, "kafka_server_brokertopicmetrics_messagesin_total", topic="orders") == 16
    assert value(fams, "kafka_server_brokertopicmetrics_messagesin_total") >= 16
    assert value(fams, "kafka_consumergroup_current_offset", consumergroup="billing", topic="orders",
                  partition="1") == 5
    assert value(fams, "kafka_topic_partition_current_offset", topic="orders", partition="1") == 8
    assert value(fams, "kafka_server_replicamanager_leadercount") >= 2
    assert value(fams, "pylog_broker_state", state="running") == 1
    assert value(fams, "kafka_network_requestmetrics_totaltimems_count", request="Produce") >= 1
    assert value(fams, "kafka_network_requestmetrics_requests_total", request="OffsetCommit", version="8") is not None \
        or any(s.labels.get("request") == "OffsetCommit" for s in fams["kafka_network_requestmetrics_requests"].samples)
    assert value(fams, "pylog_group_coordinator_groups", state="Stable") == 1


def test_endpoint_answers_while_the_broker_cannot_start(tmp_path):
    """No ZooKeeper: the broker waits for it at start-up, and /metrics already says it is starting."""
    port, metrics_port, zk_port = free_port(), free_port(), free_port()
    props = tmp_path / "server.properties"
    props.write_text(f"broker.id=7\nlisteners=PLAINTEXT://127.0.0.1:{port}\nlog.dirs={tmp_path / 'logs'}\n"
                     f"zookeeper.connect=127.0.0.1:{zk_port}\nzookeeper.connection.timeout.ms=20000\n"
                     f"prometheus.listener=http://127.0.0.1:{metrics_port}\n")
    proc = subprocess.Popen([sys.executable, "-m", "pylog.broker.main", str(props)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        text = wait_for(lambda: scrape_text(metrics_port, timeout=2), timeout=30, what="/metrics to answer")
        assert "kafka_server_kafkaserver_brokerstate 1.0" in text
        assert 'pylog_broker_state{state="starting"} 1.0' in text
        assert "pylog_zookeeper_connected 0.0" in text
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(10)


def test_a_taken_port_is_a_start_up_error_naming_the_key(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        props = tmp_path / "server.properties"
        props.write_text(f"broker.id=7\nlog.dirs={tmp_path / 'logs'}\nzookeeper.connect=127.0.0.1:1\n"
                         f"prometheus.listener=http://127.0.0.1:{taken}\n")
        r = subprocess.run([sys.executable, "-m", "pylog.broker.main", str(props)], capture_output=True, text=True,
                           timeout=60)
    assert r.returncode != 0
    assert f"prometheus.listener http://127.0.0.1:{taken}" in r.stderr.splitlines()[-1]


def test_endpoint_reports_shutting_down_during_a_controlled_shutdown(cluster_factory):
    """SIGTERM: the controlled shutdown cannot move the only broker's leaderships (its retries take ~1.5 s), and
    /metrics answers meanwhile that the broker is shutting down."""
    import signal
    c = cluster_factory(1, overrides={"controlled.shutdown.max.retries": "3"}, prometheus=True)
    b = c.brokers[0]
    create_topic(c.bootstrap, "kept", partitions=1)
    assert value(scrape(b.metrics_port), "pylog_broker_state", state="running") == 1
    b.signal(signal.SIGTERM)
    fams = wait_for(lambda: (f := scrape(b.metrics_port)) and value(
        f, "pylog_broker_state", state="shutting_down") == 1 and f, timeout=20, what="state shutting_down", interval=0.05)
    assert value(fams, "kafka_server_kafkaserver_brokerstate") == 7
    assert value(fams, "pylog_broker_state", state="running") == 0
    b.proc.wait(60)
