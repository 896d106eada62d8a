"""Kafka's embedded consumer protocol (ConsumerProtocolSubscription v0-3, ConsumerProtocolAssignment v0-3): the
bytes classic members put in JoinGroup and get back from SyncGroup, which the coordinator reads and writes only
when classic members are served by a KIP-848 group (migration.py, classic.py)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")


class EmbeddedProtocolError(ValueError):
    """Subscription bytes that are not ConsumerProtocolSubscription."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """A classic member's subscription: its topics, the partitions it says it owns (v1+) and its rack (v3+)."""

    version: int
    topics: tuple[str, ...]
    owned: tuple[tuple[str, int], ...] = ()
    rack_id: str | None = None


class _In:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise EmbeddedProtocolError("the subscription ends early")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def i16(self) -> int:
        return _I16.unpack(self.take(2))[0]

    def i32(self) -> int:
        return _I32.unpack(self.take(4))[0]

    def string(self) -> str | None:
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def count(self) -> int:
        return max(self.i32(), 0)


def read_subscription(data: bytes) -> Subscription:
    """Parse a ConsumerProtocolSubscription (versions above 3 are read as 3, as Kafka does)."""
    r = _In(data)
    try:
        version = r.i16()
        if version < 0:
            raise EmbeddedProtocolError(f"subscription version {version}")
        topics = tuple(r.string() or "" for _ in range(r.count()))
        r.take(max(r.i32(), 0))  # user data
        owned: list[tuple[str, int]] = []
        rack = None
        if version >= 1:
            for _ in range(r.count()):
                topic = r.string() or ""
                owned += [(topic, r.i32()) for _ in range(r.count())]
        if version >= 2:
            r.i32()  # generation id
        if version >= 3:
            rack = r.string()
    except UnicodeDecodeError as e:
        raise EmbeddedProtocolError(str(e)) from e
    return Subscription(version, topics, tuple(owned), rack)


def write_assignment(partitions: dict[str, list[int]], version: int) -> bytes:
    """A ConsumerProtocolAssignment in the member's subscription version (its fields are the same in 0-3)."""
    out = bytearray(_I16.pack(max(min(version, 3), 0)) + _I32.pack(len(partitions)))
    for topic in sorted(partitions):
        name = topic.encode()
        out += _I16.pack(len(name)) + name + _I32.pack(len(partitions[topic]))
        for p in sorted(partitions[topic]):
            out += _I32.pack(p)
    return bytes(out + _I32.pack(-1))  # no user data


def read_assignment(data: bytes) -> dict[str, list[int]]:
    """The partitions of a ConsumerProtocolAssignment; empty for no bytes (a member that never synced)."""
    if not data:
        return {}
    r = _In(data)
    r.i16()
    out: dict[str, list[int]] = {}
    for _ in range(r.count()):
        topic = r.string() or ""
        out.setdefault(topic, []).extend(r.i32() for _ in range(r.count()))
    return out


def version_of(data: bytes) -> int:
    """The version a subscription's bytes start with (0 when too short)."""
    return _I16.unpack_from(data)[0] if len(data) >= 2 else 0
