"""Snapshot JSON validation, Kafka reassignment JSON and topics-to-move parsing, --generate baseline."""
import json
import random

import pytest

from pylog.planner.formats import (ReassignmentFormatError, SnapshotError, dump_snapshot, format_reassignment_json,
                                   load_snapshot, parse_broker_list, parse_reassignment_json,
                                   parse_topics_to_move_json, snapshot_from_dict)
from pylog.planner.kafka_generate import broker_metadata, calculate_assignment
from pylog.planner.model import PlanError


def test_reassignment_json_is_kafkas_exact_layout():
    out = format_reassignment_json({("foo", 1): [6, 5], ("bar", 0): [1], ("foo", 0): [5, 6]})
    assert out == ('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1],"log_dirs":["any"]},'
                   '{"topic":"foo","partition":0,"replicas":[5,6],"log_dirs":["any","any"]},'
                   '{"topic":"foo","partition":1,"replicas":[6,5],"log_dirs":["any","any"]}]}')


def test_topics_to_move_parsing_and_kafka_errors():
    assert parse_topics_to_move_json('{"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}') == ["foo", "foo1"]
    assert parse_topics_to_move_json('{"topics":[{"topic":"foo"}]}') == ["foo"]
    cases = [('{"topics":[],"version":2}', "Not supported version field value 2"),
             ('{"topics":[{"topic":"a"},{"topic":"b"},{"topic":"a"}]}',
              "List of topics to reassign contains duplicate entries: a"),
             ("{nope", "The input string is not a valid JSON")]
    for text, message in cases:
        with pytest.raises(ReassignmentFormatError) as err:
            parse_topics_to_move_json(text)
        assert str(err.value) == message
    with pytest.raises(ReassignmentFormatError, match="^Broker list contains duplicate entries: 1$"):
        parse_broker_list("1,2,1")


def test_reassignment_json_parsing():
    text = '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'
    assert parse_reassignment_json(text) == [(("foo", 0), [1, 2], ["any", "any"])]
    bad = '{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}'
    with pytest.raises(ReassignmentFormatError, match="^Size of replicas list Vector\\(1, 2\\) is different"):
        parse_reassignment_json(bad)


@pytest.mark.parametrize("data, message", [
    ({"brokers": [{"id": 0}], "partitions": [{"topic": "t", "partition": 0, "replicas": [0, 0]}]},
     "partitions[0] (t-0): \"replicas\" lists a broker twice: [0, 0]"),
    ({"brokers": [{"id": 0}, {"id": 0}], "partitions": []}, "brokers[1]: broker id 0 already listed at brokers[0]"),
    ({"brokers": [{"id": "x"}], "partitions": []}, "brokers[0]: \"id\" must be a non-negative integer, got 'x'"),
    ({"brokers": [], "partitions": [{"topic": "t", "partition": 1, "replicas": [0], "size_bytes": -1}]},
     "partitions[0] (t-1): \"size_bytes\" must be a non-negative integer, got -1"),
    ({"brokers": [], "partitions": [{"topic": "t", "partition": 0, "replicas": [0]},
                                    {"topic": "t", "partition": 0, "replicas": [1]}]},
     "partitions[1]: t-0 already listed at partitions[0]"),
    ({"version": 2, "brokers": [], "partitions": []}, "cluster snapshot: unsupported \"version\" 2"),
])
def test_snapshot_errors_name_the_offending_entry(data, message):
    with pytest.raises(SnapshotError) as err:
        snapshot_from_dict(data)
    assert str(err.value).startswith(message)


def test_snapshot_round_trip_keeps_extra_keys(tmp_path):
    data = {"version": 1, "cluster_id": "abc", "brokers": [{"id": 0, "rack": "r1"}, {"id": 1}],
            "partitions": [{"topic": "t", "partition": 0, "replicas": [0, 1], "size_bytes": 1234}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    snap = load_snapshot(str(path))
    assert snap.brokers[0].rack == "r1" and snap.partitions[0].size_bytes == 1234
    dump_snapshot(snap, str(path))
    assert json.loads(path.read_text()) == data


def test_kafka_generate_baseline_is_kafkas_assignment_per_topic():
    current = {("a", p): [0, 1, 2] for p in range(10)} | {("b", 0): [1, 2]}
    brokers = [(b, None) for b in range(5)]

    class Zero:
        def randrange(self, n):
            return 0

    got = calculate_assignment(current, brokers, rng=Zero())
    # Start index and shift 0 for every topic: the AdminRackAwareTest vector.
    assert [got[("a", p)] for p in range(10)] == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1],
                                                  [0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2]]
    assert got[("b", 0)] == [0, 1]
    assert calculate_assignment(current, brokers, random.Random(3)) == calculate_assignment(current, brokers,
                                                                                            random.Random(3))
    with pytest.raises(PlanError, match="Add --disable-rack-aware"):
        broker_metadata([(0, "r"), (1, None)], [0, 1])
    assert broker_metadata([(0, "r"), (1, None), (2, "q")], [2, 0], rack_aware=False) == [(0, None), (2, None)]
