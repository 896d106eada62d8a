"""pylog-producer-perf-test.sh and pylog-consumer-perf-test.sh on a real broker: Kafka's flags and the exact
shape of ProducerPerformance's and ConsumerPerformance's interval and summary lines (short runs)."""

from __future__ import annotations

import re

import pytest

from cli_helpers import script
from support.clients import create_topic, kcat
from tools_cluster import module_cluster

pytestmark = pytest.mark.integration

NUM = r"\d+\.\d"
WINDOW = re.compile(rf"\d+ records sent, {NUM} records/sec \(\d+\.\d\d MB/sec\), {NUM} ms avg latency, {NUM} ms "
                    r"max latency\.")
TOTAL = re.compile(r"(\d+) records sent, \d+\.\d{6} records/sec \(\d+\.\d\d MB/sec\), \d+\.\d\d ms avg latency, "
                   r"\d+\.\d\d ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.")
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
F4 = r"-?\d+\.\d{4}"


@pytest.fixture(scope="module")
def perf_cluster(zk_server, _zk_root, tmp_path_factory):
    yield from module_cluster(zk_server, _zk_root, tmp_path_factory, "perf-tools", 1)


@pytest.fixture(scope="module")
def produced(perf_cluster):
    """A throttled run long enough (5.5 s) for one of Kafka's 5-second interval lines: 5500 records of 100 bytes."""
    create_topic(perf_cluster.bootstrap, "perf", partitions=2)
    r = script("pylog-producer-perf-test.sh", "--topic", "perf", "--num-records", "5500", "--record-size", "100",
               "--throughput", "1000", "--producer-props", f"bootstrap.servers={perf_cluster.bootstrap}", "acks=all",
               "key.serializer=org.apache.kafka.common.serialization.ByteArraySerializer")
    assert r.returncode == 0, r.stderr
    return r


def test_producer_perf_prints_window_and_summary_lines(perf_cluster, produced):
    lines = produced.stdout.splitlines()
    assert len(lines) >= 2
    assert all(WINDOW.fullmatch(line) for line in lines[:-1]), lines
    assert TOTAL.fullmatch(lines[-1]) and TOTAL.fullmatch(lines[-1]).group(1) == "5500"
    assert produced.stderr == ""  # a Java serializer property is understood, not warned about
    out = kcat(perf_cluster.bootstrap, "-C", "-t", "perf", "-o", "beginning", "-e", "-f", "%S\n").stdout.split()
    assert len(out) == 5500 and set(out) == {"100"}
    rate = float(lines[-1].split(", ")[1].split()[0])
    assert 700 < rate < 1100  # --throughput 1000 is honoured


def test_producer_perf_options_and_errors(perf_cluster, tmp_path):
    payloads = tmp_path / "payloads.txt"
    payloads.write_text("alpha\nbeta\n")
    cfg = tmp_path / "producer.properties"
    cfg.write_text(f"bootstrap.servers={perf_cluster.bootstrap}\nmax.block.ms=60000\n")
    r = script("pylog-producer-perf-test.sh", "--topic", "perf-p", "--num-records", "20", "--payload-file",
               str(payloads), "--throughput", "-1", "--producer.config", str(cfg))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == [f"Reading payloads from: {payloads}", "Number of messages read: 2"]
    assert TOTAL.fullmatch(lines[-1]).group(1) == "20"
    assert r.stderr.count("max.block.ms") == 1  # no librdkafka equivalent: one warning, not a failure
    r = script("pylog-producer-perf-test.sh", "--topic", "perf", "--num-records", "5", "--throughput", "-1",
               "--producer-props", f"bootstrap.servers={perf_cluster.bootstrap}")
    assert r.returncode == 2 and "exactly one of the arguments --record-size --payload-file --payload-monotonic" \
        in r.stderr
    r = script("pylog-producer-perf-test.sh", "--topic", "perf", "--num-records", "5", "--record-size", "1",
               "--throughput", "-1")
    assert r.returncode == 2 and "Either --producer-props or --producer.config must be specified." in r.stderr


def test_consumer_perf_prints_header_and_summary(perf_cluster, produced):
    r = script("pylog-consumer-perf-test.sh", "--bootstrap-server", perf_cluster.bootstrap, "--topic", "perf",
               "--messages", "5500", "--timeout", "20000")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                        "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
    m = re.fullmatch(rf"({DATE}), ({DATE}), ({F4}), {F4}, (\d+), {F4}, (\d+), (\d+), {F4}, {F4}", lines[1])
    assert m and len(lines) == 2, lines
    assert float(m.group(3)) == round(5500 * 100 / 1024 / 1024, 4) and m.group(4) == "5500"


def test_consumer_perf_detailed_stats_and_timeout(perf_cluster, produced):
    r = script("pylog-consumer-perf-test.sh", "--bootstrap-server", perf_cluster.bootstrap, "--topic", "perf",
               "--messages", "6000", "--timeout", "1500", "--show-detailed-stats", "--reporting-interval", "1",
               "--hide-header", "--date-format", "HH:mm:ss")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == ("WARNING: Exiting before consuming the expected number of messages: timeout (1500 ms) "
                         "exceeded. You can use the --timeout option to increase the timeout.")
    assert lines[:-1], "no interval line"
    for line in lines[:-1]:
        assert re.fullmatch(rf"\d\d:\d\d:\d\d, 0, {F4}, {F4}, \d+, {F4}, \d+, -?\d+, {F4}, {F4}", line), line


def test_e2e_latency_prints_progress_avg_and_percentiles(perf_cluster):
    r = script("pylog-e2e-latency.sh", perf_cluster.bootstrap, "e2e", "30", "all", "64")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == 'Topic "e2e" does not exist. Will create topic with 1 partition(s) and replication factor = 1'
    assert re.fullmatch(r"0\t\d+\.\d+(E-?\d+)?", lines[1])
    assert re.fullmatch(r"Avg latency: \d+\.\d{4} ms", lines[2])
    assert re.fullmatch(r"Percentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+", lines[3]) and len(lines) == 4
    # Kafka's payloads: one letter Random(0).nextInt(26) + 'A' repeated; Java's first draw is 18, an 'S'.
    first = kcat(perf_cluster.bootstrap, "-C", "-t", "e2e", "-o", "beginning", "-c", "1", "-e").stdout
    assert first == "S" * 64 + "\n"
    r = script("pylog-e2e-latency.sh", perf_cluster.bootstrap, "e2e", "3", "0", "64")
    assert (r.returncode, r.stderr.strip()) == (1, "Latency testing requires synchronous acknowledgement. Please "
                                                   "use 1 or all")
    r = script("pylog-e2e-latency.sh", perf_cluster.bootstrap, "e2e")
    assert r.returncode == 1 and r.stderr.startswith("USAGE: java org.apache.kafka.tools.EndToEndLatency broker_list")
