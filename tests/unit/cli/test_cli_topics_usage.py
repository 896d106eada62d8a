"""pylog-topics option checks: Kafka's messages, exit 2 for usage mistakes, exit 1 for refused input.

None of these reach a cluster: the checks run before any connection is opened (the addresses
below would not answer).
"""

import pytest
from click.testing import CliRunner

from pylog.cli.topics import topics_command

ZK = ["--zookeeper", "127.0.0.1:1/none"]
BS = ["--bootstrap-server", "127.0.0.1:1"]


def run(args):
    return CliRunner().invoke(topics_command, args)


@pytest.mark.parametrize("args, message", [
    (BS, "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (BS + ["--list", "--describe"],
     "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (["--list"], "One of the required --bootstrap-server or --zookeeper arguments must be specified"),
    (BS + ZK + ["--list"], "Only one of --bootstrap-server or --zookeeper must be specified"),
    (BS + ["--create"], 'Missing required argument "[topic]"'),
    (BS + ["--delete"], 'Missing required argument "[topic]"'),
    (BS + ["--describe", "--if-exists"], "--topic or --topic-id is required to describe a topic"),
    (BS + ["--alter", "--topic", "t"], 'Missing required argument "[partitions]"'),
    (BS + ["--alter", "--topic", "t", "--partitions", "2", "--config", "a=b"],
     'Option combination "[bootstrap-server],[config]" can\'t be used with option "[alter]" (the kafka-configs '
     'CLI supports altering topic configs with a --bootstrap-server option)'),
    (ZK + ["--create", "--topic", "t", "--partitions", "1"], 'Missing required argument "[replication-factor]"'),
    (ZK + ["--alter", "--topic", "t"], 'Missing required argument "[partitions]"'),
    (BS + ["--list", "--partitions", "3"], 'Option "[partitions]" can\'t be used with option "[list]"'),
    (BS + ["--alter", "--topic", "t", "--partitions", "3", "--replication-factor", "2"],
     'Option "[replication-factor]" can\'t be used with option "[alter]"'),
    (BS + ["--create", "--topic", "t", "--replica-assignment", "1:2", "--partitions", "1"],
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (BS + ["--describe", "--under-replicated-partitions", "--unavailable-partitions"],
     "can't be used with option"),
    (BS + ["--list", "--under-replicated-partitions"],
     'Option "[under-replicated-partitions]" can\'t be used with option "[list]"'),
    (BS + ["--create", "--topic", "t", "--if-exists"], 'Option "[if-exists]" can\'t be used with option "[create]"'),
    (BS + ["--delete", "--topic", "t", "--if-not-exists"],
     'Option "[if-not-exists]" can\'t be used with option "[delete]"'),
    (BS + ["--create", "--topic", "t", "--exclude-internal"],
     'Option "[exclude-internal]" can\'t be used with option "[create]"'),
    (BS + ["--alter", "--topic", "t", "--partitions", "2", "--delete-config", "a"],
     'Option "[delete-config]" can\'t be used with option "[bootstrap-server]"'),
])
def test_usage_errors_exit_2_with_kafkas_message(args, message):
    r = run(args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Usage: pylog-topics" in r.output


@pytest.mark.parametrize("args, message", [
    (["--create", "--topic", "t", "--replication-factor", "0"],
     "The replication factor must be between 1 and 32767 inclusive"),
    (["--create", "--topic", "t", "--partitions", "0"], "The partitions must be greater than 0"),
    (["--create", "--topic", "t", "--config", "nope=1"], "Unknown topic config name: nope"),
    (["--create", "--topic", "t", "--config", "retention.ms"],
     'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'),
    (["--create", "--topic", "t", "--replica-assignment", "1:1"],
     "Partition replica lists may not contain duplicate entries: 1"),
])
def test_refused_input_exits_1_with_one_error_line(args, message):
    r = run(BS + args)
    assert r.exit_code == 1
    assert r.stdout == ""
    assert r.stderr == f"Error while executing topic command : {message}\n"


def test_unreachable_broker_is_one_line_and_debug_adds_a_traceback():
    r = run(BS + ["--list"])
    assert r.exit_code == 1
    assert r.stderr.startswith("Error while executing topic command : Cannot connect to broker 127.0.0.1:1")
    assert len(r.stderr.splitlines()) == 1
    r = run(BS + ["--list", "--debug"])
    assert r.exit_code == 1 and "Traceback" in r.stderr


def test_help_lists_kafkas_option_spellings():
    r = run(["--help"])
    assert r.exit_code == 0
    for opt in ("--create", "--list", "--describe", "--alter", "--delete", "--topic", "--partitions",
                "--replication-factor", "--replica-assignment", "--config", "--if-exists", "--if-not-exists",
                "--exclude-internal", "--disable-rack-aware", "--under-replicated-partitions",
                "--unavailable-partitions", "--under-min-isr-partitions", "--at-min-isr-partitions",
                "--topics-with-overrides", "--bootstrap-server", "--zookeeper", "--output"):
        assert opt in r.output
