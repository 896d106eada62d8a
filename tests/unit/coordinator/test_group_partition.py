"""A group lands on the same __consumer_offsets partition as in Kafka (Utils.abs(String.hashCode) % n)."""

import pytest

from pylog.coordinator.ownership import java_string_hash, kafka_abs, partition_for


@pytest.mark.parametrize("group,hash_code,partition", [
    ("my-group", -1906497762, 12),
    ("test-group", 627841412, 12),
    ("", 0, 0),
    # Integer.MIN_VALUE: Utils.abs gives 0 where Math.abs would stay negative (and `& 0x7fffffff` gives 0
    # too, but differs for every other negative hash: my-group would land on 36).
    ("polygenelubricants", -2147483648, 0),
])
def test_kafka_vectors(group, hash_code, partition):
    assert java_string_hash(group) == hash_code
    assert partition_for(group, 50) == partition


def test_hash_uses_utf16_code_units():
    # U+1F600 is two surrogates in UTF-16: 0xD83D, 0xDE00.
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("é") == 0xE9


def test_kafka_abs():
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5 and kafka_abs(7) == 7
