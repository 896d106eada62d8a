"""bin/pylog-delete-records.sh against a real broker: kafka-delete-records.sh's file, texts and exit codes."""

from __future__ import annotations

import json

import pytest

from cli_helpers import script
from support.clients import create_topic, kcat

pytestmark = pytest.mark.integration


def test_delete_records_script_prints_kafkas_lines(cluster, tmp_path):
    create_topic(cluster.bootstrap, "cli-dr", partitions=2)
    kcat(cluster.bootstrap, "-P", "-t", "cli-dr", "-p", "0", input="".join(f"m{i}\n" for i in range(10)))
    kcat(cluster.bootstrap, "-P", "-t", "cli-dr", "-p", "1", input="".join(f"m{i}\n" for i in range(4)))
    spec = tmp_path / "offsets.json"
    spec.write_text(json.dumps({"partitions": [{"topic": "cli-dr", "partition": 0, "offset": 6},
                                               {"topic": "cli-dr", "partition": 1, "offset": -1}], "version": 1}))
    r = script("pylog-delete-records.sh", "--bootstrap-server", cluster.bootstrap, "--offset-json-file", str(spec))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Executing records delete operation\nRecords delete operation completed:\n"
                        "partition: cli-dr-0\tlow_watermark: 6\npartition: cli-dr-1\tlow_watermark: 4\n")
    out = kcat(cluster.bootstrap, "-C", "-t", "cli-dr", "-p", "0", "-o", "beginning", "-e", "-f", "%o %s\n").stdout
    assert out.splitlines() == [f"{i} m{i}" for i in range(6, 10)]

    spec.write_text(json.dumps({"partitions": [{"topic": "cli-dr", "partition": 0, "offset": 99},
                                               {"topic": "nope", "partition": 0, "offset": 1}]}))
    r = script("pylog-delete-records.sh", "--bootstrap-server", cluster.bootstrap, "--offset-json-file", str(spec))
    assert r.returncode == 1
    assert r.stdout.splitlines()[2:] == [
        "partition: cli-dr-0\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested "
        "offset is not within the range of offsets maintained by the server.",
        "partition: nope-0\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server "
        "does not host this topic-partition."]
    assert r.stderr.strip() == "Error: 2 partition(s) could not be deleted"


def test_delete_records_script_bad_input(cluster, tmp_path):
    spec = tmp_path / "bad.json"
    spec.write_text("{not json")
    r = script("pylog-delete-records.sh", "--bootstrap-server", cluster.bootstrap, "--offset-json-file", str(spec))
    assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", "Error: The input string is not a valid JSON")
    r = script("pylog-delete-records.sh", "--offset-json-file", str(spec))
    assert r.returncode == 2 and 'Missing required argument "[bootstrap-server]"' in r.stderr
