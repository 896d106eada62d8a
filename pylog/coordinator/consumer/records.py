"""KIP-848's records in `__consumer_offsets`, in Kafka's schemas (group-coordinator's common/message/*.json).

Keys are non-flexible (int16 version, then the group id and maybe the member id as int16-length
strings); the key version names the record type: 3 ConsumerGroupMetadata, 4 ConsumerGroupPartitionMetadata,
5 ConsumerGroupMemberMetadata, 6 ConsumerGroupTargetAssignmentMetadata, 7 ConsumerGroupTargetAssignmentMember,
8 ConsumerGroupCurrentMemberAssignment. Values are version 0, flexible (compact strings and arrays,
tagged fields). A null value is a tombstone. `ConsumerReplay` folds them back into groups on load.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field

from pylog.coordinator.consumer.model import Assignment, ClassicMeta, ConsumerGroup, Member, MemberState

GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT = range(3, 9)
KEY_VERSIONS = frozenset(range(3, 9))
Record = tuple[bytes, "bytes | None"]
_I8, _I16, _I32 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i")


class ConsumerRecordError(ValueError):
    """A KIP-848 record that cannot be read."""


class _Out:
    def __init__(self) -> None:
        self.buf = bytearray(_I16.pack(0))  # every value is version 0

    def uvarint(self, n: int) -> "_Out":
        while n >= 0x80:
            self.buf.append((n & 0x7F) | 0x80)
            n >>= 7
        self.buf.append(n)
        return self

    def i8(self, v: int) -> "_Out":
        self.buf += _I8.pack(v)
        return self

    def i32(self, v: int) -> "_Out":
        self.buf += _I32.pack(v)
        return self

    def string(self, s: str | None) -> "_Out":
        if s is None:
            return self.uvarint(0)
        b = s.encode()
        self.uvarint(len(b) + 1)
        self.buf += b
        return self

    def strings(self, xs: tuple[str, ...] | list[str]) -> "_Out":
        self.uvarint(len(xs) + 1)
        for x in xs:
            self.string(x)
        return self

    def topic_partitions(self, a: Assignment) -> "_Out":
        self.uvarint(len(a) + 1)
        for tid in sorted(a, key=str):
            self.buf += tid.bytes
            self.uvarint(len(a[tid]) + 1)
            for p in sorted(a[tid]):
                self.i32(p)
            self.uvarint(0)
        return self

    def done(self, tagged: dict[int, bytes] | None = None) -> bytes:
        self.uvarint(len(tagged or {}))
        for tag, data in sorted((tagged or {}).items()):
            self.uvarint(tag).uvarint(len(data))
            self.buf += data
        return bytes(self.buf)


def _classic_bytes(c: ClassicMeta) -> bytes:
    """ConsumerGroupMemberMetadataValue's ClassicMemberMetadata (tag 0): session timeout, supported protocols."""
    out = _Out()
    del out.buf[:]  # a struct inside the value: no version of its own
    out.i32(c.session_timeout_ms).uvarint(len(c.protocols) + 1)
    for name, meta in c.protocols:
        out.string(name).uvarint(len(meta) + 1)
        out.buf += meta
        out.uvarint(0)
    return out.done()


class _In:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = memoryview(data), 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ConsumerRecordError("record ends early")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def i8(self) -> int:
        return _I8.unpack(self.take(1))[0]

    def i16(self) -> int:
        return _I16.unpack(self.take(2))[0]

    def i32(self) -> int:
        return _I32.unpack(self.take(4))[0]

    def string(self) -> str | None:
        n = self.uvarint() - 1
        return None if n < 0 else bytes(self.take(n)).decode()

    def key_string(self) -> str:
        n = self.i16()
        return bytes(self.take(n)).decode() if n >= 0 else ""

    def strings(self) -> list[str]:
        return [self.string() or "" for _ in range(self.uvarint() - 1)]

    def tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())

    def topic_partitions(self) -> Assignment:
        out: Assignment = {}
        for _ in range(self.uvarint() - 1):
            tid = uuid.UUID(bytes=bytes(self.take(16)))
            out[tid] = frozenset(self.i32() for _ in range(self.uvarint() - 1))
            self.tags()
        return out


def _key(version: int, group_id: str, member_id: str | None = None) -> bytes:
    out = bytearray(_I16.pack(version))
    for s in (group_id,) if member_id is None else (group_id, member_id):
        b = s.encode()
        out += _I16.pack(len(b)) + b
    return bytes(out)


def group_epoch_record(g: ConsumerGroup) -> Record:
    """ConsumerGroupMetadata: the group epoch."""
    return _key(GROUP_METADATA, g.group_id), _Out().i32(g.group_epoch).done()


def partition_metadata_record(g: ConsumerGroup) -> Record:
    """ConsumerGroupPartitionMetadata: the subscribed topics' ids, names and partition counts."""
    out = _Out().uvarint(len(g.subscribed_topics) + 1)
    for tid in sorted(g.subscribed_topics, key=str):
        name, n = g.subscribed_topics[tid]
        out.buf += tid.bytes
        out.string(name).i32(n).uvarint(1).uvarint(0)  # no per-partition racks
    return _key(PARTITION_METADATA, g.group_id), out.done()


def member_metadata_record(group_id: str, m: Member) -> Record:
    """ConsumerGroupMemberMetadata: the member's identity and subscription."""
    out = (_Out().string(m.instance_id).string(m.rack_id).string(m.client_id).string(m.client_host)
           .strings(m.subscribed_names).string(m.subscribed_regex).i32(m.rebalance_timeout_ms)
           .string(m.server_assignor))
    return _key(MEMBER_METADATA, group_id, m.member_id), out.done(
        {0: _classic_bytes(m.classic)} if m.classic is not None else None)


def target_epoch_record(g: ConsumerGroup) -> Record:
    """ConsumerGroupTargetAssignmentMetadata: the epoch the target assignment was computed at."""
    return _key(TARGET_METADATA, g.group_id), _Out().i32(g.assignment_epoch).done()


def target_member_record(group_id: str, member_id: str, a: Assignment) -> Record:
    """ConsumerGroupTargetAssignmentMember: one member's target partitions."""
    return _key(TARGET_MEMBER, group_id, member_id), _Out().topic_partitions(a).done()


def current_assignment_record(group_id: str, m: Member) -> Record:
    """ConsumerGroupCurrentMemberAssignment: the member's epochs, state, assigned and revoking partitions."""
    out = (_Out().i32(m.member_epoch).i32(m.previous_member_epoch).i8(int(m.state))
           .topic_partitions(m.assigned).topic_partitions(m.pending_revocation))
    return _key(CURRENT_ASSIGNMENT, group_id, m.member_id), out.done()


def member_tombstones(group_id: str, member_id: str) -> list[Record]:
    """A removed member's records, in the order Kafka writes them (current assignment, target, metadata)."""
    return [(_key(v, group_id, member_id), None) for v in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER_METADATA)]


def group_tombstones(group_id: str) -> list[Record]:
    """A deleted group's own records."""
    return [(_key(v, group_id), None) for v in (TARGET_METADATA, PARTITION_METADATA, GROUP_METADATA)]


def _read_classic(v: _In) -> ClassicMeta:
    timeout = v.i32()
    protocols = []
    for _ in range(v.uvarint() - 1):
        name = v.string() or ""
        protocols.append((name, bytes(v.take(v.uvarint() - 1))))
        v.tags()
    return ClassicMeta(timeout, tuple(protocols))


def _state(n: int) -> MemberState:
    try:
        return MemberState(n)
    except ValueError:
        return MemberState.UNKNOWN


def key_version(key: bytes) -> int:
    """The version (record type) of a `__consumer_offsets` key."""
    if len(key) < 2:
        raise ConsumerRecordError("key too short")
    return _I16.unpack_from(key)[0]


@dataclass(slots=True)
class ConsumerReplay:
    """The consumer groups a partition's KIP-848 records leave behind."""

    groups: dict[str, ConsumerGroup] = field(default_factory=dict)

    def apply(self, key: bytes, value: bytes | None) -> None:
        """Fold one record (key version 3-8) into the groups."""
        k = _In(key)
        version = k.i16()
        gid = k.key_string()
        mid = k.key_string() if version in (MEMBER_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT) else None
        if value is None:
            self._tombstone(version, gid, mid)
            return
        v = _In(value)
        if v.i16() != 0:
            raise ConsumerRecordError("unknown value version")
        g = self.groups.setdefault(gid, ConsumerGroup(gid))
        if version == GROUP_METADATA:
            g.group_epoch = v.i32()
        elif version == PARTITION_METADATA:
            g.subscribed_topics = {}
            for _ in range(v.uvarint() - 1):
                tid = uuid.UUID(bytes=bytes(v.take(16)))
                name, n = v.string() or "", v.i32()
                for _ in range(v.uvarint() - 1):
                    v.i32()
                    v.strings()
                    v.tags()
                v.tags()
                g.subscribed_topics[tid] = (name, n)
        elif version == MEMBER_METADATA:
            m = g.members.setdefault(mid or "", Member(mid or ""))
            m.instance_id, m.rack_id, m.client_id, m.client_host = v.string(), v.string(), v.string() or "", v.string() or ""
            m.subscribed_names, m.subscribed_regex = tuple(v.strings()), v.string()
            m.rebalance_timeout_ms, m.server_assignor = v.i32(), v.string()
            m.classic = None
            for _ in range(v.uvarint()):
                tag, size = v.uvarint(), v.uvarint()
                data = v.take(size)
                if tag == 0:
                    m.classic = _read_classic(_In(bytes(data)))
        elif version == TARGET_METADATA:
            g.assignment_epoch = v.i32()
        elif version == TARGET_MEMBER:
            g.target[mid or ""] = v.topic_partitions()
        elif version == CURRENT_ASSIGNMENT:
            m = g.members.setdefault(mid or "", Member(mid or ""))
            m.member_epoch, m.previous_member_epoch = v.i32(), v.i32()
            m.state = _state(v.i8())
            m.assigned, m.pending_revocation = v.topic_partitions(), v.topic_partitions()

    def _tombstone(self, version: int, gid: str, mid: str | None) -> None:
        g = self.groups.get(gid)
        if g is None:
            return
        if version == MEMBER_METADATA:
            g.members.pop(mid or "", None)
        elif version == TARGET_MEMBER:
            g.target.pop(mid or "", None)
        elif version == GROUP_METADATA:
            self.groups.pop(gid, None)
