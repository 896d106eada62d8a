"""Kafka's LineMessageReader and DefaultMessageFormatter rules, as the console tools apply them."""

import pytest

from pylog.cli.console_io import ConsumedRecord, LineError, LineReader, RecordFormatter, parse_properties


@pytest.mark.parametrize("props,line,expected", [
    ({}, "hello\tworld", (None, b"hello\tworld", [])),
    ({"parse.key": "true"}, "k1\tv1\tmore", (b"k1", b"v1\tmore", [])),
    ({"parse.key": "TRUE ", "key.separator": "::"}, "k::v::w", (b"k", b"v::w", [])),
    ({"parse.key": "true", "key.separator": ":"}, ":empty-key", (b"", b"empty-key", [])),
    ({"parse.key": "true", "key.separator": ":", "null.marker": "<null>"}, "k:<null>", (b"k", None, [])),
    ({"parse.key": "true", "key.separator": ":", "null.marker": "<null>"}, "<null>:v", (None, b"v", [])),
    ({"parse.headers": "true", "parse.key": "true"}, "h1:v1,h2:v2\tkey\tvalue",
     (b"key", b"value", [("h1", b"v1"), ("h2", b"v2")])),
    ({"parse.headers": "true", "null.marker": "N"}, "h1:N\tvalue", (None, b"value", [("h1", None)])),
    ({"parse.key": "true", "ignore.error": "true"}, "no separator", (None, b"no separator", [])),
    ({"parse.headers": "true", "ignore.error": "true"}, "h1\tv", (None, b"v", [("h1", None)])),
])
def test_lines_become_records(props, line, expected):
    assert LineReader(props).parse(line, 1) == expected


@pytest.mark.parametrize("props,line,message", [
    ({"parse.key": "true"}, "no separator", "No key separator found on line number 7: 'no separator'"),
    ({"parse.headers": "true"}, "h:v", "No headers delimiter found on line number 7: 'h:v'"),
    ({"parse.headers": "true"}, "h\tv", "No header key separator found in pair 'h' on line number 7"),
    ({"parse.headers": "true", "null.marker": "N"}, "N:x\tv",
     "Header keys should not be equal to the null marker 'N' as they can't be null"),
])
def test_bad_lines_name_the_line(props, line, message):
    with pytest.raises(LineError) as e:
        LineReader(props).parse(line, 7)
    assert str(e.value) == message


@pytest.mark.parametrize("props,message", [
    ({"headers.delimiter": ","}, "headers.delimiter and headers.separator may not be equal"),
    ({"null.marker": "\t"}, "null.marker and key.separator may not be equal"),
])
def test_conflicting_reader_properties(props, message):
    with pytest.raises(LineError, match=message):
        LineReader(props)


def test_properties_split_at_the_first_equals_sign():
    assert parse_properties(["key.separator==", "print.key=true"]) == {"key.separator": "=", "print.key": "true"}
    with pytest.raises(LineError, match="Invalid command line properties: print.key"):
        parse_properties(["print.key"])


RECORD = ConsumedRecord(3, 42, 1, 1_700_000_000_000, b"k", b"v", [("h1", b"x"), ("h2", None)])


@pytest.mark.parametrize("props,golden", [
    ({}, b"v\n"),
    ({"print.key": "true"}, b"k\tv\n"),
    ({"print.key": "true", "key.separator": " | "}, b"k | v\n"),
    ({"print.timestamp": "true", "print.partition": "true", "print.offset": "true", "print.key": "true"},
     b"CreateTime:1700000000000\tPartition:3\tOffset:42\tk\tv\n"),
    ({"print.headers": "true", "print.value": "false"}, b"h1:x,h2:null\n"),
    ({"print.key": "true", "print.value": "false"}, b"k\n"),
    ({"print.value": "false"}, b""),
    ({"print.offset": "true", "line.separator": "|"}, b"Offset:42\tv|"),
])
def test_formatter_golden_lines(props, golden):
    assert RecordFormatter(props).format(RECORD) == golden


def test_nulls_and_missing_timestamps():
    r = ConsumedRecord(0, 0, 0, -1, None, None)
    assert RecordFormatter({"print.key": "true", "print.timestamp": "true", "print.headers": "true"}).format(r) \
        == b"NO_TIMESTAMP\tNO_HEADERS\tnull\tnull\n"
    assert RecordFormatter({"print.key": "true", "null.literal": "-"}).format(r) == b"-\t-\n"
    appended = ConsumedRecord(0, 0, 2, 5, b"k", b"v")
    assert RecordFormatter({"print.timestamp": "true"}).format(appended) == b"LogAppendTime:5\tv\n"
