"""bin/pylog-console-producer.sh and bin/pylog-console-consumer.sh against a real broker: golden outputs,
Kafka's texts for bad input, exit codes, and the --group path against the group coordinator."""

from __future__ import annotations

import os
import subprocess

import pytest

from cli_helpers import REPO
from support.clients import create_topic

confluent_kafka = pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.integration


def tool(name: str, *args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run bin/pylog-console-<name>.sh as an operator would, from another directory."""
    return subprocess.run([os.path.join(REPO, "bin", f"pylog-console-{name}.sh"), *args], input=input,
                          capture_output=True, text=True, timeout=timeout, cwd="/")


def produce(cluster, topic: str, lines: str, *args: str) -> subprocess.CompletedProcess:
    return tool("producer", "--bootstrap-server", cluster.bootstrap, "--topic", topic, *args, input=lines)


def consume(cluster, topic: str, *args: str) -> subprocess.CompletedProcess:
    return tool("consumer", "--bootstrap-server", cluster.bootstrap, "--topic", topic, "--timeout-ms", "20000", *args)


def test_keyed_lines_round_trip_with_kafka_formats(cluster):
    create_topic(cluster.bootstrap, "lines")
    r = produce(cluster, "lines", "k1:v1\nk2:v:2\n:empty key\nk4:<null>\n", "--property", "parse.key=true",
                "--property", "key.separator=:", "--property", "null.marker=<null>")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = consume(cluster, "lines", "--from-beginning", "--max-messages", "4", "--property", "print.key=true",
                "--property", "print.partition=true", "--property", "print.offset=true",
                "--property", "key.separator= | ")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Partition:0 | Offset:0 | k1 | v1\n"
                        "Partition:0 | Offset:1 | k2 | v:2\n"
                        "Partition:0 | Offset:2 |  | empty key\n"
                        "Partition:0 | Offset:3 | k4 | null\n")
    assert r.stderr == "Processed a total of 4 messages\n"
    # --partition with a numeric --offset, and the default (value only) format
    r = consume(cluster, "lines", "--partition", "0", "--offset", "1", "--max-messages", "2")
    assert (r.returncode, r.stdout) == (0, "v:2\nempty key\n")


def test_timestamps_headers_and_every_partition_without_a_group(cluster):
    create_topic(cluster.bootstrap, "three", partitions=3)
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(6):
        p.produce("three", key=b"key%d" % i, value=b"value%d" % i, partition=i % 3, timestamp=1_700_000_000_000 + i,
                  headers=[("n", str(i).encode())])
    assert p.flush(30) == 0
    r = consume(cluster, "three", "--from-beginning", "--max-messages", "6", "--property", "print.timestamp=true",
                "--property", "print.headers=true", "--property", "print.key=true")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == [
        f"CreateTime:{1_700_000_000_000 + i}\tn:{i}\tkey{i}\tvalue{i}" for i in range(6)]


def test_compression_codec_and_acks(cluster):
    create_topic(cluster.bootstrap, "zipped")
    r = produce(cluster, "zipped", "a\nb\n", "--compression-codec", "--request-required-acks", "1")
    assert r.returncode == 0, r.stderr
    r = produce(cluster, "zipped", "c\n", "--compression-codec", "zstd", "--acks", "0")
    assert r.returncode == 0, r.stderr
    r = consume(cluster, "zipped", "--partition", "0", "--offset", "earliest", "--max-messages", "3")
    assert r.stdout == "a\nb\nc\n"
    r = produce(cluster, "zipped", "d\n", "--compression-codec", "brotli")
    assert (r.returncode, r.stderr.strip()) == (1, "Invalid value brotli for configuration compression.type: "
                                                   "String must be one of: none, gzip, snappy, lz4, zstd")


def test_a_bad_line_stops_the_producer_after_what_came_before(cluster):
    create_topic(cluster.bootstrap, "strict")
    r = produce(cluster, "strict", "k1\tv1\nno separator here\nk3\tv3\n", "--property", "parse.key=true")
    assert (r.returncode, r.stderr) == (1, "ERROR No key separator found on line number 2: 'no separator here'\n")
    r = consume(cluster, "strict", "--from-beginning", "--timeout-ms", "3000", "--property", "print.key=true")
    assert (r.returncode, r.stdout) == (0, "k1\tv1\n")
    assert r.stderr.splitlines()[-1] == "Processed a total of 1 messages"


def test_refused_records_make_the_producer_fail(cluster):
    create_topic(cluster.bootstrap, "compacted", configs={"cleanup.policy": "compact"})
    r = produce(cluster, "compacted", "no key\n")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "ERROR Error when sending message to topic compacted with key: null, value: 6 bytes with error: "
        "Broker: Broker failed to validate record",
        "ERROR 1 record(s) could not be sent to compacted"]
    create_topic(cluster.bootstrap, "safe", configs={"min.insync.replicas": "2"})  # one broker: acks=all must fail
    r = produce(cluster, "safe", "x\n", "--producer-property", "message.timeout.ms=3000")
    assert r.returncode == 1 and "Broker: Not enough in-sync replicas" in r.stderr
    assert produce(cluster, "safe", "x\n", "--acks", "1").returncode == 0


@pytest.mark.parametrize("args,code,message", [
    (["--offset", "3"], 2, "The partition is required when offset is specified."),
    (["--partition", "0", "--offset", "x"], 2,
     "The provided offset value 'x' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
    (["--partition", "0", "--offset", "1", "--from-beginning"], 2,
     "Options from-beginning and offset cannot be specified together."),
    (["--partition", "0", "--group", "g"], 2, "Options group and partition cannot be specified together."),
    (["--isolation-level", "dirty"], 1, "Invalid value dirty for configuration isolation.level: String must be one "
                                        "of: read_committed, read_uncommitted"),
])
def test_consumer_option_mistakes(cluster, args, code, message):
    r = consume(cluster, "any", *args)
    assert r.returncode == code and message in r.stderr and r.stdout == ""


def test_consumer_of_a_missing_topic_or_partition_fails_clearly(cluster):
    r = consume(cluster, "nope", "--from-beginning")
    assert r.returncode == 1 and r.stdout == ""
    assert "ERROR Topic nope does not exist" in r.stderr.splitlines()[0]
    create_topic(cluster.bootstrap, "one")
    r = consume(cluster, "one", "--partition", "5")
    assert (r.returncode, r.stderr.splitlines()[0]) == (1, "ERROR Partition 5 of topic one does not exist")


def test_bad_bootstrap_server(cluster):
    r = tool("producer", "--bootstrap-server", "localhost", "--topic", "t", input="x\n")
    assert (r.returncode, r.stderr) == (1, "Please provide valid host:port like host1:9091,host2:9092\n")


def test_timeout_with_nothing_to_read_exits_cleanly(cluster):
    create_topic(cluster.bootstrap, "quiet")
    r = consume(cluster, "quiet", "--timeout-ms", "1500", "--property", "print.key=true")
    assert (r.returncode, r.stdout) == (0, "")
    assert r.stderr.splitlines()[-1] == "Processed a total of 0 messages"


def test_group_consumer_commits_so_a_second_run_resumes(cluster):
    create_topic(cluster.bootstrap, "grouped", partitions=2)
    assert produce(cluster, "grouped", "".join(f"m{i}\n" for i in range(6))).returncode == 0
    first = consume(cluster, "grouped", "--group", "console-g", "--from-beginning", "--max-messages", "6")
    assert first.returncode == 0, first.stderr
    assert sorted(first.stdout.split()) == [f"m{i}" for i in range(6)]
    assert produce(cluster, "grouped", "m6\nm7\n").returncode == 0
    # The group's committed offsets, not --from-beginning, decide where the second run starts.
    second = consume(cluster, "grouped", "--group", "console-g", "--from-beginning", "--max-messages", "2")
    assert second.returncode == 0, second.stderr
    assert sorted(second.stdout.split()) == ["m6", "m7"]
