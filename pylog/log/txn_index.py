"""A segment's aborted-transactions index, `<base>.txnindex`, in Kafka's format (TransactionIndex.java).

Fixed 34-byte entries, big-endian: version int16 (0) | producerId int64 | firstOffset int64 |
lastOffset int64 | lastStableOffset int64. An entry belongs to the segment holding the ABORT
marker (its lastOffset); the transaction may have started in an earlier segment. The file is
created on the first entry and only grows at its end, so a crash can leave at most a torn tail,
which loading drops.
"""

from __future__ import annotations

import os
import struct
from typing import Iterable, NamedTuple

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34
VERSION = 0


class AbortedTxn(NamedTuple):
    """One aborted transaction: its producer, first and last (marker) offset, and the LSO after it."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnIndexError(ValueError):
    """An entry that breaks the index's order, or a file that is not a transaction index."""


def encode_entry(t: AbortedTxn) -> bytes:
    """The 34 bytes Kafka writes for one aborted transaction."""
    return _ENTRY.pack(VERSION, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)


def decode_entries(data: bytes) -> list[AbortedTxn]:
    """Every whole entry in `data` (a torn tail is ignored); TxnIndexError on an unknown version."""
    out = []
    for pos in range(0, len(data) - ENTRY_SIZE + 1, ENTRY_SIZE):
        version, *fields = _ENTRY.unpack_from(data, pos)
        if version != VERSION:
            raise TxnIndexError(f"unknown transaction index entry version {version} at byte {pos}")
        out.append(AbortedTxn(*fields))
    return out


def overlapping(entries: Iterable[AbortedTxn], fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
    """Entries whose range meets [fetch_offset, upper_bound), and whether the search may stop here.

    The search is complete once an entry's lastStableOffset reaches `upper_bound`: no transaction
    aborted in a later segment can have started below it (Kafka's collectAbortedTxns).
    """
    found = []
    for t in entries:
        if t.last_offset >= fetch_offset and t.first_offset < upper_bound:
            found.append(t)
            if t.last_stable_offset >= upper_bound:
                return found, True
    return found, False


def collect_across(segments: Iterable[Iterable[AbortedTxn]], fetch_offset: int,
                   upper_bound: int) -> list[AbortedTxn]:
    """The aborted transactions of a fetch, from the segment holding `fetch_offset` onward, in order.

    A transaction aborted in a later segment may have started inside the fetched range, so the
    search goes on until an entry proves nothing later can overlap (LocalLog.collectAbortedTransactions).
    """
    out: list[AbortedTxn] = []
    for entries in segments:
        found, complete = overlapping(entries, fetch_offset, upper_bound)
        out += found
        if complete:
            break
    return out


class TransactionIndex:
    """One segment's `.txnindex`: entries in memory, appended to the file as they come."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.entries: list[AbortedTxn] = []
        if os.path.exists(path):
            with open(path, "rb") as f:
                self.entries = decode_entries(f.read())

    def append(self, t: AbortedTxn) -> None:
        """Add an aborted transaction; its lastOffset must be above every earlier entry's."""
        if self.entries and t.last_offset <= self.entries[-1].last_offset:
            raise TxnIndexError(f"the last offset of appended aborted transaction {t} is not above "
                                f"the last one in the index ({self.entries[-1].last_offset})")
        with open(self.path, "ab") as f:
            f.write(encode_entry(t))
        self.entries.append(t)

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """The aborted transactions a fetch of [fetch_offset, upper_bound) must be told about."""
        return overlapping(self.entries, fetch_offset, upper_bound)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose abort marker is at or above `offset` (log truncation)."""
        keep = [t for t in self.entries if t.last_offset < offset]
        if len(keep) != len(self.entries):
            self.entries = keep
            if os.path.exists(self.path):
                os.truncate(self.path, len(keep) * ENTRY_SIZE)

    def flush(self) -> None:
        """Make the appended entries durable."""
        if os.path.exists(self.path):
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def delete(self) -> None:
        """Remove the file with its segment."""
        self.entries = []
        if os.path.exists(self.path):
            os.remove(self.path)
