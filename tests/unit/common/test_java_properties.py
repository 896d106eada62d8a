"""Java .properties parsing/writing: the java.util.Properties rules Kafka's files rely on."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pylog.common import properties
from pylog.common.properties import PropertiesError, dumps, loads


@pytest.mark.parametrize("text, expected", [
    ("a=b", {"a": "b"}),
    ("a:b", {"a": "b"}),
    ("a b", {"a": "b"}),
    ("  a  =  b  ", {"a": "b"}),
    ("a\t:\tb", {"a": "b"}),
    ("a   b c", {"a": "b c"}),          # only the first whitespace run separates
    ("a = = b", {"a": "= b"}),          # one separator is consumed, the rest is value
    ("a=", {"a": ""}),
    ("a", {"a": ""}),
    ("a=b=c:d", {"a": "b=c:d"}),
    ("url=PLAINTEXT://:9092", {"url": "PLAINTEXT://:9092"}),
])
def test_separators_and_whitespace(text: str, expected: dict[str, str]) -> None:
    assert loads(text) == expected


def test_comments_and_blank_lines_are_skipped() -> None:
    text = "# comment\n! also comment\n   # indented comment\n\n   \t\nkey=value # not a comment\n"
    assert loads(text) == {"key": "value # not a comment"}


def test_later_keys_win_and_order_is_first_appearance() -> None:
    assert loads("a=1\nb=2\na=3\n") == {"a": "3", "b": "2"}
    assert list(loads("b=1\na=2\nb=3")) == ["b", "a"]


def test_line_continuation_drops_leading_whitespace_of_next_line() -> None:
    text = "log.dirs=/a,\\\n         /b,\\\n\t/c\nnext=1\n"
    assert loads(text) == {"log.dirs": "/a,/b,/c", "next": "1"}


def test_even_number_of_backslashes_does_not_continue() -> None:
    assert loads("a=x\\\\\nb=y") == {"a": "x\\", "b": "y"}


def test_continued_line_starting_with_hash_is_value_not_comment() -> None:
    assert loads("a=1\\\n  #2") == {"a": "1#2"}


def test_comment_line_ending_in_backslash_does_not_continue() -> None:
    assert loads("# comment \\\na=1") == {"a": "1"}


def test_continuation_at_end_of_file() -> None:
    assert loads("a=b\\") == {"a": "b"}


@pytest.mark.parametrize("text, expected", [
    (r"a=x\ty", "x\ty"),
    (r"a=x\ny", "x\ny"),
    (r"a=x\ry", "x\ry"),
    (r"a=x\fy", "x\fy"),
    (r"a=C:\\dir", "C:\\dir"),
    (r"a=\u0041\u00e9", "Aé"),
    (r"a=\uD83D\uDE00", "\U0001F600"),   # a surrogate pair is one character
    (r"a=\q", "q"),                       # unknown escape: the character itself
    (r"a=\#\!\=\:", "#!=:"),
])
def test_escapes(text: str, expected: str) -> None:
    assert loads(text) == {"a": expected}


def test_escaped_separators_and_spaces_in_keys() -> None:
    assert loads(r"my\ key\=x\:y=v") == {"my key=x:y": "v"}


def test_trailing_whitespace_is_trimmed_unless_escaped() -> None:
    assert loads("a=b \t ") == {"a": "b"}
    assert loads("a=b\\ ") == {"a": "b "}
    assert loads("a=\\  ") == {"a": " "}


def test_line_endings() -> None:
    assert loads("a=1\r\nb=2\rc=3\n") == {"a": "1", "b": "2", "c": "3"}


def test_malformed_unicode_escape_names_the_line() -> None:
    with pytest.raises(PropertiesError, match=r"Malformed \\uxxxx encoding\. \(line 2\)"):
        loads("a=1\nb=\\u12G4\n")


def test_kafka_shipped_server_properties() -> None:
    text = (
        "# Licensed to the Apache Software Foundation (ASF)\n"
        "############################# Server Basics #############################\n\n"
        "# The id of the broker.\nbroker.id=0\n"
        "#listeners=PLAINTEXT://:9092\n"
        "log.dirs=/tmp/kafka-logs\n"
        "zookeeper.connect=localhost:2181\n"
        "group.initial.rebalance.delay.ms=0\n"
    )
    assert loads(text) == {"broker.id": "0", "log.dirs": "/tmp/kafka-logs", "zookeeper.connect": "localhost:2181",
                           "group.initial.rebalance.delay.ms": "0"}


def test_dumps_escapes_like_properties_store() -> None:
    text = dumps({"a b": " lead=x:y#z!", "k": "tab\there", "u": "é"})
    assert text == "a\\ b=\\ lead\\=x\\:y\\#z\\!\nk=tab\\there\nu=\\u00E9\n"


def test_dumps_with_comment_and_timestamp_like_meta_properties() -> None:
    lines = dumps({"version": "0", "broker.id": "1"}, comments="", timestamp=True).splitlines()
    assert lines[0] == "#"
    assert lines[1].startswith("#") and len(lines[1].split()) == 6   # "#Thu Oct 14 10:00:00 UTC 2021"
    assert lines[2:] == ["version=0", "broker.id=1"]


def test_load_and_dump_files(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    properties.dump({"cluster.id": "Q3d0tlcKRqmP8CEmlQ1Tyg", "version": "0"}, path, comments="")
    assert properties.load(path) == {"cluster.id": "Q3d0tlcKRqmP8CEmlQ1Tyg", "version": "0"}
    latin1 = tmp_path / "latin1.properties"
    latin1.write_bytes("name=caf\xe9\n".encode("iso-8859-1"))
    assert properties.load(latin1) == {"name": "café"}


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@given(st.dictionaries(_text.filter(lambda s: s != ""), _text, max_size=6))
def test_dumps_loads_round_trip(props: dict[str, str]) -> None:
    assert loads(dumps(props)) == props
