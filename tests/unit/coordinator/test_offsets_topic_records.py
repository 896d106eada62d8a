"""__consumer_offsets records: Kafka's key/value layouts byte for byte, every classic version read back."""

import struct

from pylog.coordinator.group.records import (
    GroupKey, GroupValue, MemberValue, OffsetKey, OffsetValue, decode_group_value, decode_key, decode_offset_value,
    encode_group_key, encode_group_value, encode_offset_key, encode_offset_value,
)
from pylog.coordinator.group.store import replay


def test_offset_key_v1_bytes():
    assert encode_offset_key(OffsetKey("g", "t", 3)) == b"\x00\x01" b"\x00\x01g" b"\x00\x01t" b"\x00\x00\x00\x03"
    assert decode_key(encode_offset_key(OffsetKey("g", "t", 3))) == OffsetKey("g", "t", 3)


def test_group_key_v2_bytes():
    assert encode_group_key(GroupKey("grp")) == b"\x00\x02\x00\x03grp"
    assert decode_key(b"\x00\x02\x00\x03grp") == GroupKey("grp")


def test_offset_value_v3_and_v1():
    v3 = encode_offset_value(OffsetValue(42, 7, "m", 1000))
    assert v3 == struct.pack(">hqih1sq", 3, 42, 7, 1, b"m", 1000)
    assert decode_offset_value(v3) == OffsetValue(42, 7, "m", 1000)
    v1 = encode_offset_value(OffsetValue(42, -1, "", 1000, 5000))
    assert v1 == struct.pack(">hqhqq", 1, 42, 0, 1000, 5000)
    assert decode_offset_value(v1) == OffsetValue(42, -1, "", 1000, 5000)


def test_offset_value_v0_and_flexible_v4():
    assert decode_offset_value(struct.pack(">hqh2sq", 0, 9, 2, b"ab", 77)) == OffsetValue(9, -1, "ab", 77)
    # v4: compact string (length + 1 as a varint), then an empty tagged-field section.
    v4 = struct.pack(">hqi", 4, 9, 3) + b"\x03ab" + struct.pack(">q", 77) + b"\x00"
    assert decode_offset_value(v4) == OffsetValue(9, 3, "ab", 77)


def test_group_value_v3_round_trip():
    value = GroupValue("consumer", 5, "range", "m1", 1234, (
        MemberValue("m1", None, "c1", "/127.0.0.1", 300000, 45000, b"sub", b"asg"),
        MemberValue("m2", "inst-2", "c2", "/127.0.0.2", 300000, 10000, b"", b""),
    ))
    data = encode_group_value(value)
    assert data[:2] == b"\x00\x03"
    assert decode_group_value(data) == value


def test_empty_group_value_and_v0():
    empty = GroupValue("consumer", 3, None, None, 99, ())
    assert decode_group_value(encode_group_value(empty)) == empty
    v0 = struct.pack(">hh8sihh", 0, 8, b"consumer", 1, -1, -1) + struct.pack(">i", 0)
    assert decode_group_value(v0) == GroupValue("consumer", 1, None, None, -1, ())


def test_replay_keeps_the_latest_value_and_applies_tombstones():
    k1, k2 = encode_offset_key(OffsetKey("g", "t", 0)), encode_offset_key(OffsetKey("g", "t", 1))
    gk = encode_group_key(GroupKey("g"))
    state = replay([
        (k1, encode_offset_value(OffsetValue(1, -1, "", 1))),
        (k2, encode_offset_value(OffsetValue(5, -1, "", 1))),
        (k1, encode_offset_value(OffsetValue(3, -1, "", 2))),
        (gk, encode_group_value(GroupValue("consumer", 1, None, None))),
        (k2, None),
        (b"\x00\x03\x00\x01g", b"\x00\x00"),  # a KIP-848 record: skipped, not an error
    ])
    assert state.offsets == {"g": {("t", 0): OffsetValue(3, -1, "", 2)}}
    assert state.groups["g"].generation == 1
    assert state.skipped == 1
    assert replay([(gk, encode_group_value(GroupValue("consumer", 1, None, None))), (gk, None)]).groups == {}
