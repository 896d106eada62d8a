"""pylog-reassign-partitions without a cluster: Kafka's checks and messages, golden texts, JSON, exit codes.

The cluster is an in-memory fake (reassign_fakes.py); tests/integration/cli/test_cli_reassign.py runs
the same command against real brokers.
"""

import json

import pytest
from click.testing import CliRunner

from pylog.cli import reassign as reassign_cli
from pylog.cli.common import OperationError
from pylog.cli.reassign import reassign_command
from pylog.cli.reassign_logic import (COMPLETED, IN_PROGRESS, NOT_REASSIGNED, Move, Ongoing, cancellable, move_map,
                                      parse_log_dirs, parse_targets, partition_state, reassigning_brokers, replica_names,
                                      topic_throttles)
from pylog.planner.formats import ReassignmentFormatError

from reassign_fakes import FakeCluster

BS = ["--bootstrap-server", "127.0.0.1:1"]
ZK = ["--zookeeper", "127.0.0.1:1/none"]
CANNOT = ("Cannot execute because there is an existing partition assignment.  Use --additional to override this "
          "and create a new partition assignment in addition to the existing one. The --additional flag can also "
          "be used to change the throttle by resubmitting the current reassignment.\n")


def doc(*entries):
    return json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for t, p, r in entries]})


# ---------------------------------------------------------------- pure logic

@pytest.mark.parametrize("text, message", [
    ('{"version":1,"partitions":[]}', "Partition reassignment list cannot be empty"),
    ('{"version":1}', "Partition reassignment list cannot be empty"),
    (doc(("a", 0, [])), "Partition replica list cannot be empty"),
    (doc(("a", 0, [1]), ("a", 0, [2])), "Partition reassignment contains duplicate topic partitions: a-0"),
    (doc(("a", 0, [1, 1, 2]), ("b", 3, [4, 5, 4])),
     "Partition replica lists may not contain duplicate entries: a-0 contains multiple entries for 1. "
     "b-3 contains multiple entries for 4"),
    ('{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
     "Size of replicas list Vector(1, 2) is different from size of log dirs list Vector(any) for partition a-0"),
    ('{"version":2,"partitions":[]}', "Not supported version field value 2"),
    ("{nope", "The input string is not a valid JSON"),
])
def test_execute_input_checks_have_kafkas_messages(text, message):
    with pytest.raises((OperationError, ReassignmentFormatError), match="^" + message.replace("(", r"\(")
                       .replace(")", r"\)").replace(".", r"\.")):
        parse_targets(text)


def test_log_dirs_become_replica_moves_in_kafkas_order():
    text = ('{"version":1,"partitions":[{"topic":"b","partition":1,"replicas":[2,1],"log_dirs":["/x","any"]},'
            '{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["/y","/z"]}]}')
    assert parse_targets(text) == {("b", 1): [2, 1], ("a", 0): [1, 2]}
    moves = parse_log_dirs(text)
    assert moves == {("b", 1, 2): "/x", ("a", 0, 1): "/y", ("a", 0, 2): "/z"}
    assert replica_names(moves) == ["a-0-1", "a-0-2", "b-1-2"]  # by broker, then topic and partition


def test_move_map_and_throttle_values_follow_kafka():
    ongoing = {("t", 9): Ongoing((5, 6, 1, 2), (5, 6), (1, 2))}
    moves = move_map(ongoing, {("t", 10): [3, 1], ("t", 2): [1, 2], ("t", 9): [7, 1]},
                     {("t", 10): [1, 2], ("t", 2): [2, 1], ("t", 9): [5, 6, 1, 2]})
    # An in-flight partition keeps its original replicas as sources.
    assert moves[("t", 9)] == Move(frozenset({1, 2}), frozenset({7}))
    assert moves[("t", 2)] == Move(frozenset({1, 2}), frozenset())
    # Kafka keeps the items in a TreeSet of strings: "10:1" sorts before "2:1".
    assert topic_throttles(moves) == {"t": ("10:1,10:2,2:1,2:2,9:1,9:2", "10:3,9:7")}
    assert reassigning_brokers(moves) == [1, 2, 3, 7]
    with pytest.raises(OperationError, match="Trying to reassign a topic partition t-4 with 0 replicas"):
        move_map({}, {("t", 4): [1]}, {})


def test_partition_states_and_what_can_be_cancelled():
    assert partition_state(Ongoing((1, 2), (2,), ()), [1], [1, 2]) == IN_PROGRESS
    assert partition_state(None, [1, 2], [1, 2]) == COMPLETED
    assert partition_state(None, [2, 1], [1, 2]) == NOT_REASSIGNED
    assert partition_state(None, None, [1]) == NOT_REASSIGNED
    ongoing = {("a", 0): Ongoing((1, 2), (2,), ()), ("a", 1): Ongoing((1,), (), ())}
    assert cancellable(ongoing, [("a", 1), ("a", 0), ("b", 0)]) == [("a", 0)]


# ---------------------------------------------------------------- usage errors (exit 2)

@pytest.mark.parametrize("args, message", [
    (BS, "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list, "
         "--export-snapshot"),
    (BS + ["--list", "--verify"], "Command must include exactly one action"),
    (["--list"], "Please specify --bootstrap-server"),
    (BS + ZK + ["--list"], "Only one of --bootstrap-server or --zookeeper must be specified"),
    (BS + ["--execute"], 'Missing required argument "[reassignment-json-file]"'),
    (BS + ["--generate", "--broker-list", "1"], 'Missing required argument "[topics-to-move-json-file]"'),
    (BS + ["--generate", "--topics-to-move-json-file", "f"], 'Missing required argument "[broker-list]"'),
    (BS + ["--verify", "--reassignment-json-file", "f", "--throttle", "5"],
     'Option "[throttle]" can\'t be used with action "[verify]"'),
    (BS + ["--list", "--additional"], 'Option "[additional]" can\'t be used with action "[list]"'),
    (BS + ["--cancel", "--reassignment-json-file", "f", "--broker-list", "1"],
     'Option "[broker-list]" can\'t be used with action "[cancel]"'),
    (BS + ["--generate", "--topics-to-move-json-file", "f", "--broker-list", "1", "--spark-master", "x"],
     'Option "[spark-master]" can only be used with "[spark]"'),
    (BS + ["--generate", "--topics-to-move-json-file", "f", "--broker-list", "1", "--planner", "kafka",
           "--max-moves", "3"], 'Option "[max-moves]" only applies to the pylog planner'),
    (BS + ["--generate", "--topics-to-move-json-file", "f", "--broker-list", "1", "--planner", "kafka",
           "--leader-changes", "3"], 'Option "[leader-changes]" only applies to the pylog planner'),
    (BS + ["--generate", "--topics-to-move-json-file", "f", "--broker-list", "1", "--cluster-snapshot", "s"],
     "--cluster-snapshot plans offline"),
    (BS + ["--generate", "--topics-to-move-json-file", "f", "--broker-list", "1", "--broker-racks", "3:a"],
     'Option "[broker-racks]" can only be used with "[cluster-snapshot]"'),
    (BS + ["--execute", "--reassignment-json-file", "f", "--preserve-throttles"],
     'Option "[preserve-throttles]" can only be used with "[wait]"'),
    (BS + ["--execute", "--reassignment-json-file", "f", "--wait-timeout", "3"],
     'Option "[wait-timeout]" can only be used with "[wait]"'),
])
def test_usage_errors_exit_2(args, message):
    r = CliRunner().invoke(reassign_command, args)
    assert r.exit_code == 2, r.output
    assert message in r.stderr


# ---------------------------------------------------------------- golden output against a fake cluster

def run(monkeypatch, cluster, *args):
    monkeypatch.setattr(reassign_cli, "_cluster", lambda zk, bs: cluster)
    return CliRunner().invoke(reassign_command, list(args))


def two_topics(via="bootstrap-server", **kw):
    return FakeCluster(via, {1: None, 2: None, 3: None, 4: None},
                       {("foo", 0): [1, 2], ("foo", 1): [2, 3], ("bar", 0): [3, 1]}, **kw)


@pytest.fixture
def plan_file(tmp_path):
    def write(*entries):
        f = tmp_path / "plan.json"
        f.write_text(doc(*entries))
        return str(f)
    return write


def test_execute_prints_kafkas_lines_and_sets_throttles(monkeypatch, plan_file):
    c = two_topics()
    f = plan_file(("foo", 1, [4, 3]), ("foo", 0, [1, 4]))
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f, "--throttle", "1000")
    assert (r.exit_code, r.stderr) == (0, "")
    assert r.stdout == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.\n"
        "The inter-broker throttle limit was set to 1000 B/s\n"
        "Successfully started partition reassignments for foo-0,foo-1\n")
    assert c.throttles == [({"foo": ("0:1,0:2,1:2,1:3", "0:4,1:4")}, [1, 2, 3, 4], 1000)]
    assert c.started == [{("foo", 1): [4, 3], ("foo", 0): [1, 4]}]


def test_execute_json_carries_the_same_facts(monkeypatch, plan_file):
    c = two_topics()
    f = plan_file(("bar", 0, [4, 1]))
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f, "--output", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["partitions"] == ["bar-0"]
    assert data["current"]["partitions"] == [{"topic": "bar", "partition": 0, "replicas": [3, 1],
                                              "log_dirs": ["any", "any"]}]
    assert data["throttle"] is None and data["throttled_brokers"] == [] and data["via"] == "bootstrap-server"
    assert c.throttles == []


def test_execute_refuses_while_a_reassignment_runs_and_changes_nothing(monkeypatch, plan_file):
    c = two_topics(ongoing={("bar", 0): Ongoing((4, 3, 1), (4,), (3,))})
    f = plan_file(("foo", 0, [4, 2]))
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f, "--throttle", "10")
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", CANNOT)
    assert c.started == [] and c.throttles == []
    # --additional adds to it; the throttle covers the in-flight partition too, as Kafka's move map does.
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f, "--throttle", "10", "--additional")
    assert r.exit_code == 0, r.output
    assert c.throttles == [({"bar": ("0:1,0:3", "0:4"), "foo": ("0:1,0:2", "0:4")}, [1, 2, 3, 4], 10)]


def test_execute_errors_through_a_broker_and_through_zookeeper(monkeypatch, plan_file):
    f = plan_file(("foo", 0, [1, 7]), ("foo", 1, [9, 8]))
    c = two_topics()
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f)
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", "Error: Unknown broker id 7\n")
    c = two_topics("zookeeper")
    r = run(monkeypatch, c, *ZK, "--execute", "--reassignment-json-file", f)
    assert (r.exit_code, r.stderr) == (1, "Error: The proposed assignment contains non-existent brokerIDs: 7,8,9\n")
    f = plan_file(("foo", 5, [1, 2]), ("nope", 0, [1]))
    r = run(monkeypatch, c, *ZK, "--execute", "--reassignment-json-file", f)
    assert r.stderr == "Error: The proposed assignment contains non-existent partitions: List(foo-5, nope-0)\n"
    r = run(monkeypatch, two_topics(), *BS, "--execute", "--reassignment-json-file", f)
    assert r.stderr == ("Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                        "Topic nope not found.\n")
    assert c.started == []


def test_execute_reports_per_partition_failures_after_what_it_printed(monkeypatch, plan_file):
    c = two_topics(errors={("foo", 0): "The partition does not exist."})
    f = plan_file(("foo", 0, [4, 2]))
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f)
    assert r.exit_code == 1
    assert r.stdout.endswith("Save this to use as the --reassignment-json-file option during rollback\n")
    assert r.stderr == "Error reassigning partition(s):\nfoo-0: The partition does not exist.\n"


def test_zookeeper_additional_waits_for_the_legacy_znode(monkeypatch, plan_file):
    c = two_topics("zookeeper", pending={("bar", 0)})
    r = run(monkeypatch, c, *ZK, "--execute", "--reassignment-json-file", plan_file(("foo", 0, [4, 2])),
            "--additional")
    assert r.exit_code == 1 and "Cannot add to the reassignment through ZooKeeper" in r.stderr
    assert c.started == []


def test_verify_texts_differ_by_version_like_kafkas(monkeypatch, plan_file):
    c = two_topics(ongoing={("foo", 1): Ongoing((4, 2, 3), (4,), (2,))})
    f = plan_file(("foo", 0, [1, 2]), ("foo", 1, [4, 3]), ("bar", 0, [1, 3]))
    r = run(monkeypatch, c, *BS, "--verify", "--reassignment-json-file", f)
    assert (r.exit_code, r.stdout) == (0, "Status of partition reassignment:\n"
                                          "There is no active reassignment of partition bar-0, but replica set is "
                                          "3,1 rather than 1,3.\n"
                                          "Reassignment of partition foo-0 is completed.\n"
                                          "Reassignment of partition foo-1 is still in progress.\n\n")
    assert c.cleared == []  # something is still moving
    c.finish(("foo", 1))
    r = run(monkeypatch, c, *BS, "--verify", "--reassignment-json-file", f)
    assert r.stdout.endswith("Reassignment of partition foo-1 is completed.\n\n"
                             "Clearing broker-level throttles on brokers 1,2,3,4\n"
                             "Clearing topic-level throttles on topics bar,foo\n")
    assert c.cleared == [([1, 2, 3, 4], ["bar", "foo"])]
    c.via = "zookeeper"
    r = run(monkeypatch, c, *ZK, "--verify", "--reassignment-json-file", plan_file(("foo", 1, [4, 3])),
            "--preserve-throttles")
    assert r.stdout == "Status of partition reassignment:\nReassignment of partition foo-1 is complete.\n"
    assert len(c.cleared) == 1
    r = run(monkeypatch, c, *ZK, "--verify", "--reassignment-json-file", plan_file(("foo", 1, [4, 3])))
    assert r.stdout.endswith("is complete.\nClearing broker-level throttles on brokers 1,2,3,4\n"
                             "Clearing topic-level throttles on topic foo\n")


def test_cancel_and_list(monkeypatch, plan_file):
    c = two_topics(ongoing={("foo", 1): Ongoing((4, 2, 3), (4,), (2,)), ("bar", 0): Ongoing((3, 1, 4), (), (4,))})
    r = run(monkeypatch, c, *BS, "--list")
    assert r.stdout == ("Current partition reassignments:\nbar-0: replicas: 3,1,4. removing: 4.\n"
                        "foo-1: replicas: 4,2,3. adding: 4. removing: 2.\n")
    r = run(monkeypatch, c, *BS, "--cancel", "--reassignment-json-file",
            plan_file(("foo", 1, [4, 3]), ("foo", 0, [1, 2]), ("bar", 0, [3, 1])), "--preserve-throttles")
    assert (r.exit_code, r.stdout) == (0, "Successfully cancelled partition reassignments for: bar-0,foo-1\n"
                                          "None of the specified partition moves are active.\n")
    assert c.cancelled == [[("bar", 0), ("foo", 1)]] and c.cleared == []
    r = run(monkeypatch, c, *BS, "--cancel", "--reassignment-json-file", plan_file(("foo", 1, [4, 3])))
    assert r.stdout == ("None of the specified partition reassignments are active.\n"
                        "None of the specified partition moves are active.\n"
                        "Clearing broker-level throttles on brokers 1,2,3,4\n"
                        "Clearing topic-level throttles on topic foo\n")
    r = run(monkeypatch, c, *BS, "--list", "--output", "json")
    assert json.loads(r.stdout) == {"reassignments": [], "via": "bootstrap-server"}
    assert run(monkeypatch, c, *BS, "--list").stdout == "No partition reassignments found.\n"


def test_execute_wait_follows_until_done_then_verifies(monkeypatch, plan_file):
    c = two_topics()
    polls = []

    def ongoing():
        polls.append(1)
        if len(polls) == 3:  # the controller finishes on the third look
            c.finish(("foo", 0))
        return dict(c.in_flight)
    c.ongoing = ongoing
    monkeypatch.setattr("pylog.cli.reassign_wait.POLL_S", 0.0)  # (not time.sleep: that is every thread's)
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", plan_file(("foo", 0, [4, 2])),
            "--throttle", "100", "--wait")
    assert r.exit_code == 0, r.output
    assert r.stdout.endswith("Successfully started partition reassignment for foo-0\n"
                             "Status of partition reassignment:\n"
                             "Reassignment of partition foo-0 is completed.\n\n"
                             "Clearing broker-level throttles on brokers 1,2,3,4\n"
                             "Clearing topic-level throttles on topic foo\n")


ROLLBACK = ("Current partition replica assignment\n\n"
            '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
            "Save this to use as the --reassignment-json-file option during rollback\n")


def test_execute_wait_prints_the_rollback_json_even_when_the_wait_times_out(monkeypatch, plan_file):
    c = two_topics()  # the controller never finishes; a zero timeout gives up at the first look
    f = plan_file(("foo", 0, [4, 2]))
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", f, "--wait", "--wait-timeout", "0")
    assert r.exit_code == 1
    assert r.stdout == ROLLBACK + "Successfully started partition reassignment for foo-0\n"
    # Not a terminal: one progress line (issue 25), then the failure.
    assert r.stderr.startswith("Reassigning: 0/1 partitions done, 0 s\nError: Timed out after 0 s waiting for the "
                               "reassignment of 1 of 1 partition(s)")
    r = run(monkeypatch, two_topics(), *BS, "--execute", "--reassignment-json-file", f, "--wait", "--wait-timeout",
            "0", "--output", "json")
    assert r.exit_code == 1 and r.stderr.splitlines()[1].startswith("Error: Timed out")
    data = json.loads(r.stdout)  # still one document, with the rollback assignment
    assert (data["partitions"], data["current"]["partitions"][0]["replicas"], data["waited"]) == (["foo-0"], [1, 2],
                                                                                               None)


def test_execute_wait_shows_the_rollback_json_before_waiting(monkeypatch, plan_file):
    c = two_topics()

    def interrupted():  # the operator presses Ctrl-C while the bar runs
        if c.in_flight:
            raise KeyboardInterrupt
        return {}
    c.ongoing = interrupted
    r = run(monkeypatch, c, *BS, "--execute", "--reassignment-json-file", plan_file(("foo", 0, [4, 2])), "--wait")
    assert r.exit_code == 1
    assert r.stdout == ROLLBACK + "Successfully started partition reassignment for foo-0\n"


# ---------------------------------------------------------------- --generate offline, --export-snapshot

@pytest.fixture
def kip6(tmp_path):
    """KIP-6's example: brokers 0 and 1 hold 7 and 6 replicas, brokers 2 and 3 are new."""
    parts = [{"topic": "t", "partition": p, "replicas": [0 if p < 7 else 1], "size_bytes": 100 * (p + 1)}
             for p in range(13)]
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"version": 1, "brokers": [{"id": 0}, {"id": 1}], "partitions": parts}))
    topics = tmp_path / "topics.json"
    topics.write_text('{"topics":[{"topic":"t"}],"version":1}')
    return ["--cluster-snapshot", str(snap), "--topics-to-move-json-file", str(topics)]


def test_generate_from_a_snapshot_proposes_the_minimal_moves(kip6):
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2,3"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.split("\n")
    assert lines[0] == "Current partition replica assignment" and lines[2] == ""
    assert lines[3] == "Proposed partition reassignment configuration" and lines[5] == ""
    current, proposed = json.loads(lines[1]), json.loads(lines[4])
    # Every partition of the topics is proposed, as Kafka does, so the file can go to --execute as it is.
    assert len(current["partitions"]) == len(proposed["partitions"]) == 13
    moved = [p for p in proposed["partitions"] if p["replicas"] != [0 if p["partition"] < 7 else 1]]
    assert len(moved) == 6  # 7,6,0,0 -> 4,3,3,3 in six moves
    assert "replicas moved: 6  lower bound: 6  gap: 0" in r.stderr
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2,3", "--output", "json"])
    data = json.loads(r.stdout)
    assert data["proposed"] == proposed and data["current"] == current and data["via"] == "snapshot"
    assert (data["report"]["replicas_moved"], data["report"]["lower_bound"], data["planner"]) == (6, 6, "pylog")
    assert r.stderr == ""
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2,3", "--changed-only",
                                              "--output", "json"])
    assert json.loads(r.stdout)["proposed"]["partitions"] == moved


def test_generate_for_a_balanced_cluster_proposes_a_plan_execute_accepts(kip6):
    # Kafka's tool always prints a full proposal, and runbooks pipe it into --execute; a balanced cluster
    # must give a valid (no-op) reassignment file, not an empty one that --execute refuses.
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1"])
    assert r.exit_code == 0, r.output
    current, proposed = (json.loads(line) for line in r.stdout.split("\n")[1:5:3])
    assert proposed == current and len(proposed["partitions"]) == 13


def test_generate_caps_and_kafkas_planner(kip6):
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2,3", "--max-moves", "2",
                                              "--output", "json"])
    assert json.loads(r.stdout)["report"]["replicas_moved"] == 2
    # RF 1: every move changes its partition's leader, so a budget of 2 leader changes keeps 2 moves.
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2,3",
                                              "--leader-changes", "2", "--output", "json"])
    report = json.loads(r.stdout)["report"]
    assert (report["leader_changes"], report["leader_bound"], report["replicas_moved"]) == (2, 2, 2)
    assert report["caps"]["dropped_leader_changes"] == 4
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2,3", "--planner",
                                              "kafka", "--output", "json"])
    data = json.loads(r.stdout)
    # Kafka's --generate lists every partition and spreads them round-robin regardless of where they are.
    assert len(data["proposed"]["partitions"]) == 13 and data["planner"] == "kafka"
    counts = {}
    for p in data["proposed"]["partitions"]:
        counts[p["replicas"][0]] = counts.get(p["replicas"][0], 0) + 1
    assert sorted(counts.values()) == [3, 3, 3, 4]
    assert data["report"]["replicas_moved"] >= 6


def test_generate_errors(kip6, tmp_path):
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,1"])
    assert (r.exit_code, r.stderr) == (1, "Error: Broker list contains duplicate entries: 1\n")
    r = CliRunner().invoke(reassign_command, ["--generate", *kip6, "--broker-list", "0,1,2",
                                              "--broker-racks", "2:r1"])
    assert r.exit_code == 1 and "Not all brokers have rack information" in r.stderr
    bad = tmp_path / "dup-topics.json"
    bad.write_text('{"topics":[{"topic":"x"},{"topic":"x"}]}')
    r = CliRunner().invoke(reassign_command, ["--generate", "--cluster-snapshot", kip6[1],
                                              "--topics-to-move-json-file", str(bad), "--broker-list", "0"])
    assert r.stderr == "Error: List of topics to reassign contains duplicate entries: x\n"
    r = CliRunner().invoke(reassign_command, ["--generate", "--cluster-snapshot", str(tmp_path / "none.json"),
                                              "--topics-to-move-json-file", kip6[3], "--broker-list", "0"])
    assert r.exit_code == 1 and r.stderr.startswith("Error: No such file or directory")


def test_generate_refuses_unregistered_brokers_of_a_live_cluster(monkeypatch, tmp_path):
    topics = tmp_path / "topics.json"
    topics.write_text('{"topics":[{"topic":"foo"}]}')
    r = run(monkeypatch, two_topics(), *BS, "--generate", "--topics-to-move-json-file", str(topics),
            "--broker-list", "1,2,5")
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: Broker(s) 5 in --broker-list are not registered in the cluster")


def test_export_snapshot_round_trips_into_generate(monkeypatch, tmp_path):
    c = two_topics(sizes={(("foo", 0), 1): 10, (("foo", 0), 2): 12, (("foo", 1), 2): 5, (("foo", 1), 3): 5,
                          (("bar", 0), 3): 7})
    out = tmp_path / "snap.json"
    r = run(monkeypatch, c, *BS, "--export-snapshot", str(out))
    assert (r.exit_code, r.stdout) == (0, f"Wrote a cluster snapshot of 4 brokers and 3 partitions (with partition "
                                          f"sizes) to {out}\n")
    snap = json.loads(out.read_text())
    assert snap["brokers"] == [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]
    assert snap["partitions"][1] == {"topic": "foo", "partition": 0, "replicas": [1, 2], "size_bytes": 12}



def test_generate_gives_new_snapshot_brokers_their_racks(tmp_path):
    parts = [{"topic": "t", "partition": p, "replicas": [p % 2, (p + 1) % 2]} for p in range(8)]
    snap = tmp_path / "racks.json"
    snap.write_text(json.dumps({"version": 1, "brokers": [{"id": 0, "rack": "r1"}, {"id": 1, "rack": "r2"}],
                                "partitions": parts}))
    topics = tmp_path / "t.json"
    topics.write_text('{"topics":[{"topic":"t"}]}')
    args = ["--generate", "--cluster-snapshot", str(snap), "--topics-to-move-json-file", str(topics),
            "--broker-list", "0,1,2,3", "--output", "json"]
    r = CliRunner().invoke(reassign_command, args + ["--broker-racks", "2:r1,3:r2"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)["report"]
    assert report["rack_violations"] == 0 and report["replicas_moved"] == report["lower_bound"] == 8
    assert {b["id"]: b["rack"] for b in report["brokers"]} == {0: "r1", 1: "r2", 2: "r1", 3: "r2"}
    r = CliRunner().invoke(reassign_command, args + ["--broker-racks", "2:r1,3"])
    assert (r.exit_code, r.stderr) == (1, "Error: --broker-racks expects BROKER:RACK pairs separated by commas, "
                                          "got '3'\n")
