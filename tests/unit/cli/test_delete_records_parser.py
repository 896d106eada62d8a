"""pylog-delete-records without a cluster: the --offset-json-file parser and its Kafka texts."""

import pytest

from pylog.cli.common import OperationError
from pylog.cli.delete_records import parse_offset_json
from pylog.zk.codecs import TopicPartition


def test_parses_kafkas_format_version_optional():
    text = '{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}, {"topic": "foo", "partition": 0, ' \
           '"offset": -1}], "version": 1}'
    assert parse_offset_json(text) == {TopicPartition("foo", 1): 1, TopicPartition("foo", 0): -1}
    assert parse_offset_json('{"partitions": []}') == {}


@pytest.mark.parametrize("text, message", [
    ("nope", "The input string is not a valid JSON"),
    ('{"version": 2, "partitions": []}', "Not supported version field value 2"),
    ('{"version": 1}', "Missing partitions field"),
    ('{"partitions": [{"topic": "foo", "offset": 1}]}', "No such field exists: `partition`"),
    ('{"partitions": [{"topic": "foo", "partition": "1", "offset": 1}]}', "Field `partition`"),
    ('{"partitions": [{"topic": "a", "partition": 0, "offset": 1}, {"topic": "a", "partition": 0, "offset": 2}]}',
     "Offset json file contains duplicate topic partitions: a-0"),
])
def test_bad_files_get_kafkas_message(text, message):
    with pytest.raises(OperationError, match=message.replace("[", r"\[")):
        parse_offset_json(text)
