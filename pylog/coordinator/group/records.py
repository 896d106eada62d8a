"""`__consumer_offsets` records in Kafka's key/value schemas (group-coordinator's *Key/*Value.json).

Every key and value starts with an int16 version; the key version tells the record type (0-1
offset commit, 2 group metadata). A null value is a tombstone. We write the versions Kafka 3.x
writes (OffsetCommitKey v1, OffsetCommitValue v3 or v1 with an expire timestamp, GroupMetadataKey
v2, GroupMetadataValue v3) and read every classic version, including the flexible v4 values.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

OFFSETS_TOPIC = "__consumer_offsets"

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_KEY_HEAD = struct.Struct(">hh")  # version, length of the group id
_VALUE_V3_HEAD = struct.Struct(">hqih")  # version, offset, leader epoch, length of the metadata


class RecordFormatError(ValueError):
    """A key or value that is not a classic-group record we can read."""


@dataclass(frozen=True, slots=True)
class OffsetKey:
    """The key of a committed offset."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    """The key of a group's metadata."""

    group: str


@dataclass(frozen=True, slots=True)
class OffsetValue:
    """A committed offset."""

    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1


@dataclass(frozen=True, slots=True)
class MemberValue:
    """One member in a GroupMetadataValue."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupValue:
    """A group's metadata (its members are empty for an Empty group)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: tuple[MemberValue, ...] = field(default_factory=tuple)


class _Writer:
    def __init__(self, version: int) -> None:
        self.buf = bytearray(_I16.pack(version))

    def i32(self, v: int) -> "_Writer":
        self.buf += _I32.pack(v)
        return self

    def i64(self, v: int) -> "_Writer":
        self.buf += _I64.pack(v)
        return self

    def string(self, v: str | None) -> "_Writer":
        if v is None:
            self.buf += _I16.pack(-1)
        else:
            b = v.encode()
            self.buf += _I16.pack(len(b)) + b
        return self

    def bytes_(self, v: bytes) -> "_Writer":
        self.buf += _I32.pack(len(v)) + v
        return self


class _Reader:
    def __init__(self, data: bytes, flexible: bool = False) -> None:
        self.data, self.pos, self.flexible = memoryview(data), 0, flexible

    def _take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise RecordFormatError("record ends early")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def i16(self) -> int:
        return _I16.unpack(self._take(2))[0]

    def i32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def i64(self) -> int:
        return _I64.unpack(self._take(8))[0]

    def varint(self) -> int:
        shift = value = 0
        while True:
            b = self._take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def _length(self, wide: bool) -> int:
        if self.flexible:
            return self.varint() - 1
        return self.i32() if wide else self.i16()

    def string(self) -> str | None:
        n = self._length(False)
        return None if n < 0 else bytes(self._take(n)).decode()

    def bytes_(self) -> bytes:
        n = self._length(True)
        return b"" if n < 0 else bytes(self._take(n))

    def array_len(self) -> int:
        return self._length(True)

    def tags(self) -> None:
        if self.flexible:
            for _ in range(self.varint()):
                self.varint()
                self._take(self.varint())


def encode_offset_key(k: OffsetKey) -> bytes:
    """OffsetCommitKey, version 1 (what Kafka writes)."""
    return offset_key_bytes(k.group, k.topic, k.partition)


def offset_key_bytes(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey v1 from its fields (one per commit: packed in one go, no writer object)."""
    g, t = group.encode(), topic.encode()
    return _KEY_HEAD.pack(1, len(g)) + g + _I16.pack(len(t)) + t + _I32.pack(partition)


def encode_group_key(k: GroupKey) -> bytes:
    """GroupMetadataKey, version 2."""
    return bytes(_Writer(2).string(k.group).buf)


def encode_offset_value(v: OffsetValue) -> bytes:
    """OffsetCommitValue: v1 when an explicit expire timestamp was asked for, else v3 (as Kafka)."""
    if v.expire_timestamp >= 0:
        return bytes(_Writer(1).i64(v.offset).string(v.metadata).i64(v.commit_timestamp)
                     .i64(v.expire_timestamp).buf)
    meta = b"" if v.metadata is None else v.metadata.encode()
    return (_VALUE_V3_HEAD.pack(3, v.offset, v.leader_epoch, -1 if v.metadata is None else len(meta)) + meta
            + _I64.pack(v.commit_timestamp))


def encode_group_value(v: GroupValue) -> bytes:
    """GroupMetadataValue, version 3."""
    w = _Writer(3).string(v.protocol_type).i32(v.generation).string(v.protocol).string(v.leader)
    w.i64(v.current_state_timestamp).i32(len(v.members))
    for m in v.members:
        w.string(m.member_id).string(m.instance_id).string(m.client_id).string(m.client_host)
        w.i32(m.rebalance_timeout).i32(m.session_timeout).bytes_(m.subscription).bytes_(m.assignment)
    return bytes(w.buf)


def decode_key(data: bytes) -> OffsetKey | GroupKey | None:
    """The key of a classic record; None for the other record types (KIP-848, share groups)."""
    r = _Reader(data)
    version = r.i16()
    if version in (0, 1):
        return OffsetKey(r.string() or "", r.string() or "", r.i32())
    if version == 2:
        return GroupKey(r.string() or "")
    if 0 <= version <= 32:
        return None
    raise RecordFormatError(f"unknown __consumer_offsets key version {version}")


def _value_reader(data: bytes, kind: str) -> tuple[int, _Reader]:
    """The version of a v0-4 value (v4 flexible) and a reader positioned after it."""
    if len(data) < 2:
        raise RecordFormatError(f"empty {kind}")
    version = _I16.unpack_from(data)[0]
    if not 0 <= version <= 4:
        raise RecordFormatError(f"unknown {kind} version {version}")
    r = _Reader(data, flexible=version >= 4)
    r.pos = 2
    return version, r


def decode_offset_value(data: bytes) -> OffsetValue:
    """OffsetCommitValue v0-4."""
    version, r = _value_reader(data, "OffsetCommitValue")
    offset = r.i64()
    epoch = r.i32() if version >= 3 else -1
    metadata = r.string() or ""
    ts = r.i64()
    expire = r.i64() if version == 1 else -1
    r.tags()
    return OffsetValue(offset, epoch, metadata, ts, expire)


def decode_group_value(data: bytes) -> GroupValue:
    """GroupMetadataValue v0-4."""
    version, r = _value_reader(data, "GroupMetadataValue")
    protocol_type, generation, protocol, leader = r.string() or "", r.i32(), r.string(), r.string()
    ts = r.i64() if version >= 2 else -1
    members = []
    for _ in range(max(r.array_len(), 0)):
        member_id = r.string() or ""
        instance = r.string() if version >= 3 else None
        client_id, host = r.string() or "", r.string() or ""
        rebalance = r.i32() if version >= 1 else -1
        session = r.i32()
        members.append(MemberValue(member_id, instance, client_id, host, rebalance if version >= 1 else session,
                                   session, r.bytes_(), r.bytes_()))
        r.tags()
    r.tags()
    return GroupValue(protocol_type, generation, protocol, leader, ts, tuple(members))
