"""`__transaction_state` keys and values, byte for byte against Kafka's schemas."""

import struct

import pytest

from pylog.coordinator.transaction.records import (
    RecordFormatError, TxnLogValue, decode_key, decode_value, encode_key, encode_value,
)


def test_key_v0_bytes():
    assert encode_key("txn-é") == b"\x00\x00\x00\x06txn-\xc3\xa9"
    assert decode_key(encode_key("txn-é")) == "txn-é"


def test_ongoing_value_v0_bytes():
    v = TxnLogValue(1000, 3, 60000, 1, {"b": (2, 0), "a": (1,)}, 1700000000123, 1700000000000)
    expected = (struct.pack(">hqhib", 0, 1000, 3, 60000, 1) + struct.pack(">i", 2)
                + b"\x00\x01a" + struct.pack(">ii", 1, 1) + b"\x00\x01b" + struct.pack(">iii", 2, 2, 0)
                + struct.pack(">qq", 1700000000123, 1700000000000))
    assert encode_value(v) == expected
    assert decode_value(expected) == v


def test_empty_value_has_null_partitions():
    v = TxnLogValue(7, 0, 900000, 0, None, 5, -1)
    data = encode_value(v)
    assert data[2 + 8 + 2 + 4 + 1:][:4] == b"\xff\xff\xff\xff"
    assert decode_value(data) == v


def test_flexible_v1_value_with_tagged_fields():
    body = struct.pack(">hqhib", 1, 42, 5, 1000, 4)
    body += bytes([2]) + bytes([2]) + b"t" + bytes([2]) + struct.pack(">i", 9) + b"\x00"  # compact array, 1 topic
    body += struct.pack(">qq", 11, 10)
    body += bytes([3, 0, 8]) + struct.pack(">q", 41) + bytes([1, 8]) + struct.pack(">q", 43) \
        + bytes([2, 2]) + struct.pack(">h", 2)
    v = decode_value(body)
    assert v == TxnLogValue(42, 5, 1000, 4, {"t": (9,)}, 11, 10, previous_producer_id=41, next_producer_id=43,
                            client_transaction_version=2)


@pytest.mark.parametrize("data,message", [
    (b"", "empty TransactionLogValue"),
    (b"\x00\x05", "unknown TransactionLogValue version 5"),
    (b"\x00\x00\x00\x00", "record ends early"),
])
def test_bad_values_are_refused(data, message):
    with pytest.raises(RecordFormatError, match=message):
        decode_value(data)


def test_bad_key_is_refused():
    with pytest.raises(RecordFormatError, match="unknown TransactionLogKey version 1"):
        decode_key(b"\x00\x01\x00\x00")
    with pytest.raises(RecordFormatError, match="bad string length"):
        decode_key(b"\x00\x00\x00\x09ab")


def test_value_v1_written_under_transaction_version_1_reads_back():
    from pylog.coordinator.transaction.records import TxnLogValue, decode_value, encode_value
    v = TxnLogValue(7, 3, 60000, 1, {"a": (0, 2), "bb": (1,)}, 100, 90, previous_producer_id=5)
    data = encode_value(v, 1)
    assert data[:2] == b"\x00\x01" and decode_value(data) == v  # the tagged PreviousProducerId survives
    empty = TxnLogValue(7, 3, 60000, 0, None, 100, -1)
    assert decode_value(encode_value(empty, 1)) == empty
    assert encode_value(empty, 1).endswith(b"\x00")  # defaults are not written as tags
