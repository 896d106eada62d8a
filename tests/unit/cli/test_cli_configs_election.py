"""pylog-configs and pylog-leader-election without a cluster: parsers, option checks, outcome grouping."""

import json
import re

import pytest
from click.testing import CliRunner

from pylog.cli.admin_client import ApiError
from pylog.cli.common import OperationError
from pylog.cli.configs import configs_command, parse_add_config, parse_delete_config
from pylog.cli.configs_ops import validate_update
from pylog.cli.leader_election import _result, leader_election_command, parse_election_file
from pylog.common.configdef import ConfigError
from pylog.protocol.errors import ErrorCode
from pylog.zk.codecs import TopicPartition

BS = ["--bootstrap-server", "127.0.0.1:1"]
ZK = ["--zookeeper", "127.0.0.1:1/none"]


def test_add_config_splits_outside_brackets():
    assert parse_add_config("retention.ms=1000, cleanup.policy=[compact,delete],x = y") == {
        "retention.ms": "1000", "cleanup.policy": "compact,delete", "x": "y"}
    assert parse_add_config("a=1,") == {"a": "1"}
    assert parse_add_config("ssl.endpoint.identification.algorithm=") == {"ssl.endpoint.identification.algorithm": ""}
    for bad in ("a", "a=1,b", "a=b=c"):
        with pytest.raises(OperationError, match='Invalid entity config: all configs to be added must be in the '
                                                 'format "key=val"'):
            parse_add_config(bad)
    assert parse_delete_config(("a, b", "c")) == ["a", "b", "c"]


def test_updates_are_validated_by_name():
    validate_update("topics", "t", {"retention.ms": "1"})
    with pytest.raises(ConfigError, match="^Unknown topic config name: nope$"):
        validate_update("topics", "t", {"nope": "1"})
    validate_update("brokers", "1", {"log.retention.ms": "5"})
    with pytest.raises(ConfigError, match="^Unknown broker config name: log.retentoin.ms$"):
        validate_update("brokers", "1", {"log.retentoin.ms": "5"})
    with pytest.raises(ConfigError, match=r"^Cannot update these configs dynamically: Set\(broker.id\)$"):
        validate_update("brokers", "1", {"broker.id": "5"})
    with pytest.raises(ConfigError, match="log.retention.ms"):
        validate_update("brokers", "", {"log.retention.ms": "soon"})


@pytest.mark.parametrize("args, message", [
    (BS + ["--topic", "t"], "Command must include exactly one action: --describe, --alter"),
    (BS + ["--describe"], "At least one entity type must be specified"),
    (BS + ["--entity-type", "ips", "--describe"],
     "Invalid entity-type ips, --entity-type must be one of topics,brokers,users,clients with the --bootstrap-server "
     "argument"),
    (BS + ["--topic", "t", "--entity-type", "topics", "--describe"],
     "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
    (ZK + ["--topic", "t", "--describe", "--all"], "--bootstrap-server must be specified for --all"),
    (BS + ["--broker", "x", "--describe"],
     "The entity name for brokers must be a valid integer broker id, but it is: x"),
    (BS + ["--entity-type", "topics", "--alter", "--add-config", "a=1"],
     "an entity name must be specified with --alter of topics"),
    (BS + ["--topic", "t", "--alter"],
     "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"),
    (BS + ["--topic", "t", "--describe", "--add-config", "a=1"],
     'Option "[describe]" can\'t be used with option "[add-config]"'),
    (["--topic", "t", "--describe"], "One of the required --bootstrap-server or --zookeeper arguments must be "
                                     "specified"),
])
def test_configs_usage_errors(args, message):
    r = CliRunner().invoke(configs_command, args)
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_configs_bad_input_is_one_line_exit_1(tmp_path):
    r = CliRunner().invoke(configs_command, BS + ["--topic", "t", "--alter", "--add-config", "a"])
    assert (r.exit_code, r.stderr) == (1, 'requirement failed: Invalid entity config: all configs to be added must '
                                          'be in the format "key=val".\n')
    r = CliRunner().invoke(configs_command, BS + ["--topic", "t", "--alter", "--add-config-file",
                                                  str(tmp_path / "missing.properties")])
    assert r.exit_code == 1 and r.stderr.startswith("No such file or directory")


@pytest.mark.parametrize("args, message", [
    ([], "Missing required option(s): election-type, bootstrap-server"),
    (["--election-type", "preferred"], "Missing required option(s): bootstrap-server"),
    (BS, "Missing required option(s): election-type"),
    (BS + ["--election-type", "preferred"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"),
    (BS + ["--election-type", "preferred", "--all-topic-partitions", "--topic", "t"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"),
    (BS + ["--election-type", "preferred", "--topic", "t"], "Missing required option(s): partition"),
    (BS + ["--election-type", "preferred", "--all-topic-partitions", "--partition", "0"],
     "Option partition is only allowed if topic is used"),
    (ZK + ["--election-type", "UNCLEAN", "--all-topic-partitions"], "Unclean elections need --bootstrap-server"),
    (BS + ["--election-type", "sometimes", "--all-topic-partitions"], "Invalid value for '--election-type'"),
])
def test_election_usage_errors(args, message):
    r = CliRunner().invoke(leader_election_command, args)
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_election_file(tmp_path):
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}))
    assert parse_election_file(str(f)) == [TopicPartition("foo", 1), TopicPartition("foobar", 2)]
    cases = [
        ({"partitions": [{"topic": "a", "partition": 1}, {"topic": "a", "partition": 1}]},
         "Replica election data contains duplicate partitions: a-1"),
        ({"version": 1}, 'Replica election data is missing "partitions" field'),
        ({"partitions": [{"topic": "a"}]}, 'Each entry of "partitions" needs'),
    ]
    for doc, message in cases:
        f.write_text(json.dumps(doc))
        with pytest.raises(OperationError, match=message.replace("(", r"\(")):
            parse_election_file(str(f))
    for text in ("{not json", ""):
        f.write_text(text)
        with pytest.raises(OperationError, match="^Replica election data is empty: " + re.escape(str(f)) + " is not valid JSON"):
            parse_election_file(str(f))


def test_outcomes_are_grouped_sorted_and_failures_counted():
    outcome = {("b", 0): None, ("a", 2): None, ("a", 1): ApiError(ErrorCode.ELECTION_NOT_NEEDED),
               ("c", 0): ApiError(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, "nope")}
    r = _result("PREFERRED", outcome, False, "bootstrap-server")
    assert (r.succeeded, r.not_needed) == (["a-2", "b-0"], ["a-1"])
    assert [(f.partition, f.exception, f.message) for f in r.failed] == [
        ("c-0", "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException", "nope")]
    assert r.failure == "1 replica(s) could not be elected"
    quiet = _result("PREFERRED", {("a", 1): ApiError(ErrorCode.ELECTION_NOT_NEEDED)}, True, "bootstrap-server")
    assert (quiet.succeeded, quiet.not_needed, quiet.failed, quiet.failure) == ([], [], [], None)
