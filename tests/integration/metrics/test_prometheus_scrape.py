"""Debian's Prometheus scraping a real 3-broker cluster: what an operator sees through its query API.

One bounded test (1 s scrape interval): exactly one active controller, records in counted, a group's
lag after a commit, under-replicated partitions after a kill -9 of a broker and none once it is back.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request

import pytest

from pylog.zk.testing import free_port
from support.clients import create_topic, wait_for
from support.groups import GROUPS, committed_group, produce

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="prometheus missing: ./scripts/setup installs it")
pytest.importorskip("confluent_kafka")


class Prometheus:
    """A prometheus server process on a free port, scraping the given targets every second."""

    def __init__(self, base, targets: list[str]) -> None:
        self.port = free_port()
        config = base / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                          "  - job_name: pylog\n    static_configs:\n      - targets: [" +
                          ", ".join(f"'{t}'" for t in targets) + "]\n")
        self.log = open(base / "prometheus.log", "wb")
        self.proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={base / 'tsdb'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def query(self, expr: str) -> list[dict]:
        """An instant query's result vector."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=5) as resp:
            body = json.load(resp)
        assert body["status"] == "success", body
        return body["data"]["result"]

    def scalar(self, expr: str) -> float | None:
        """The single value of a query that returns one series (None when it returns none)."""
        result = self.query(expr)
        return float(result[0]["value"][1]) if len(result) == 1 else None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def test_prometheus_sees_controller_traffic_lag_and_under_replication(cluster_factory, tmp_path):
    c = cluster_factory(3, overrides={**GROUPS, "replica.lag.time.max.ms": "3000"}, prometheus=True)
    prom = Prometheus(tmp_path, [f"127.0.0.1:{b.metrics_port}" for b in c.brokers.values()])
    try:
        wait_for(lambda: prom.scalar('count(up{job="pylog"} == 1)') == 3, timeout=60, what="3 targets up")
        assert wait_for(lambda: prom.scalar("sum(kafka_controller_kafkacontroller_activecontrollercount)") == 1,
                        timeout=30, what="one active controller")
        assert prom.scalar("count(kafka_controller_kafkacontroller_activecontrollercount == 1)") == 1

        create_topic(c.bootstrap, "events", partitions=3, rf=3)
        produce(c.bootstrap, "events", [f"e{i}" for i in range(30)], partitions=3)
        wait_for(lambda: prom.scalar('sum(kafka_server_brokertopicmetrics_messagesin_total{topic="events"})') == 30,
                 timeout=30, what="30 records in")

        committed_group(c.bootstrap, "events", "ops", 30).close()
        produce(c.bootstrap, "events", [f"f{i}" for i in range(12)], partitions=3)
        wait_for(lambda: prom.scalar('sum(kafka_consumergroup_lag{consumergroup="ops",topic="events"})') == 12,
                 timeout=30, what="group ops lagging 12 records")
        assert prom.scalar('sum(kafka_consumergroup_current_offset{consumergroup="ops"})') == 30
        assert prom.scalar("sum(kafka_server_replicamanager_underreplicatedpartitions)") == 0

        victim = next(bid for bid in sorted(c.brokers) if bid != _controller(prom))
        c.brokers[victim].kill()  # kill -9
        wait_for(lambda: (prom.scalar("sum(kafka_server_replicamanager_underreplicatedpartitions)") or 0) >= 3,
                 timeout=60, what="under-replicated partitions after the kill")
        assert prom.scalar(f'up{{instance="127.0.0.1:{c.brokers[victim].metrics_port}"}}') == 0

        c.restart(victim)
        wait_for(lambda: prom.scalar("sum(kafka_server_replicamanager_underreplicatedpartitions)") == 0
                 and prom.scalar('count(up{job="pylog"} == 1)') == 3, timeout=90, what="no under-replicated partitions")
        assert prom.scalar("sum(kafka_controller_kafkacontroller_activecontrollercount)") == 1
    finally:
        prom.stop()


def _controller(prom: Prometheus) -> int:
    """The active controller's broker id, joined through pylog_broker_info."""
    result = prom.query("pylog_broker_info * on(instance) group_left kafka_controller_kafkacontroller_activecontrollercount == 1")
    assert len(result) == 1, result
    return int(result[0]["metric"]["broker_id"])
