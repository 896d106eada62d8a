"""Kafka's small text files: offset checkpoints, leader-epoch-checkpoint, partition.metadata.

Checkpoint format (CheckpointFile.java): a version line, an entry-count line, one entry per line,
`\\n` line ends. Written to `<file>.tmp`, fsynced, then renamed over the file (and the directory
fsynced) so a crash leaves either the old or the new file, never a torn one.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Callable, Generic, Iterable, Mapping, NamedTuple, TypeVar

from pylog.log.errors import CheckpointError, LogError

T = TypeVar("T")

_WHITESPACE = re.compile(r"\s+")
_INT = re.compile(r"[+-]?[0-9]+")  # Java's Integer.parseInt / Long.parseLong accept exactly this
_LINE_END = re.compile(r"\r\n|\r|\n")  # BufferedReader.readLine's terminators

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"


def fsync_dir(path: str) -> None:
    """fsync a directory so a rename or new file inside it survives a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_file(path: str) -> None:
    """Make a file replaced by write_atomic(sync=False) durable: fsync it, then its directory (the rename)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


_write_locks: dict[str, threading.Lock] = {}
_write_locks_guard = threading.Lock()


def _lock_for(path: str) -> threading.Lock:
    with _write_locks_guard:
        return _write_locks.setdefault(os.path.abspath(path), threading.Lock())


def write_atomic(path: str, data: bytes, sync: bool = True) -> None:
    """Replace `path` with `data` via `<path>.tmp` + fsync + rename (+ directory fsync).

    Writers of the same file are serialized (the broker checkpoints from worker threads while
    the event loop may rewrite the same file): two writers sharing the `.tmp` would tear it.
    """
    with _lock_for(path):
        _write_atomic(path, data, sync)


def _write_atomic(path: str, data: bytes, sync: bool) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(os.path.dirname(os.path.abspath(path)))


def _java_int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise ValueError(text)
    return int(text)


def _split_java(line: str) -> list[str]:
    """Java's Pattern.split: like re.split, but trailing empty strings are dropped."""
    parts = _WHITESPACE.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


class CheckpointFile(Generic[T]):
    """A versioned list of entries in Kafka's checkpoint text format."""

    def __init__(
        self,
        path: str,
        version: int,
        to_line: Callable[[T], str],
        from_fields: Callable[[list[str]], T],
    ) -> None:
        self.path = os.path.abspath(path)
        self.version = version
        self._to_line = to_line
        self._from_fields = from_fields  # raises ValueError/IndexError on a malformed line
        if not os.path.exists(self.path):  # Kafka creates the file up front (empty = no entries)
            open(self.path, "ab").close()

    def write(self, entries: Iterable[T], sync: bool = True) -> None:
        """Write all entries atomically (tmp + fsync + rename)."""
        lines = [self._to_line(e) for e in entries]
        text = f"{self.version}\n{len(lines)}\n" + "".join(line + "\n" for line in lines)
        write_atomic(self.path, text.encode("utf-8"), sync)

    def read(self) -> list[T]:
        """Read the entries; a malformed file raises CheckpointError with Kafka's message."""
        with open(self.path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        lines = _LINE_END.split(text)
        if lines and lines[-1] == "":
            lines.pop()  # the terminator of the last line, not an empty line
        if not lines:
            return []
        version = self._int_line(lines[0])
        if version != self.version:
            raise CheckpointError(
                f"Unrecognised version:{version}, expected version: {self.version} "
                f"in checkpoint file at: {self.path}"
            )
        if len(lines) < 2:
            return []
        expected = self._int_line(lines[1])
        entries: list[T] = []
        for line in lines[2:]:
            try:
                entries.append(self._from_fields(_split_java(line)))
            except (ValueError, IndexError):
                raise self._malformed(line) from None
        if len(entries) != expected:
            raise CheckpointError(
                f"Expected [{expected}] entries in checkpoint file [{self.path}], "
                f"but found only [{len(entries)}]"
            )
        return entries

    def _int_line(self, line: str) -> int:
        try:
            return _java_int(line)
        except ValueError:
            raise self._malformed(line) from None

    def _malformed(self, line: str) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file [{self.path}]: {line}")


def _offset_entry(fields: list[str]) -> tuple[tuple[str, int], int]:
    topic, partition, offset = fields  # ValueError unless exactly three fields
    return (topic, _java_int(partition)), _java_int(offset)


class OffsetCheckpoint:
    """`<topic> <partition> <offset>` checkpoints: recovery points, high watermarks, log starts."""

    VERSION = 0

    def __init__(self, path: str) -> None:
        self._file: CheckpointFile[tuple[tuple[str, int], int]] = CheckpointFile(
            path, self.VERSION, lambda e: f"{e[0][0]} {e[0][1]} {e[1]}", _offset_entry
        )
        self.path = self._file.path

    def write(self, offsets: Mapping[tuple[str, int], int], sync: bool = True) -> None:
        """Write {(topic, partition): offset}, sorted for stable files."""
        self._file.write(sorted(offsets.items()), sync)

    def read(self) -> dict[tuple[str, int], int]:
        """Read {(topic, partition): offset}."""
        return dict(self._file.read())


class EpochEntry(NamedTuple):
    """A leader epoch and the first offset written in it."""

    epoch: int
    start_offset: int

    def __str__(self) -> str:
        return f"EpochEntry(epoch={self.epoch}, startOffset={self.start_offset})"


def _epoch_entry(fields: list[str]) -> EpochEntry:
    epoch, offset = fields
    return EpochEntry(_java_int(epoch), _java_int(offset))


class LeaderEpochCheckpoint:
    """The partition dir's `leader-epoch-checkpoint`: `<epoch> <startOffset>` lines."""

    VERSION = 0

    def __init__(self, path: str) -> None:
        self._file: CheckpointFile[EpochEntry] = CheckpointFile(
            path, self.VERSION, lambda e: f"{e.epoch} {e.start_offset}", _epoch_entry
        )
        self.path = self._file.path

    def write(self, entries: Iterable[EpochEntry], sync: bool = True) -> None:
        """Write the entries in order."""
        self._file.write(entries, sync)

    def read(self) -> list[EpochEntry]:
        """Read the entries in file order."""
        return self._file.read()


class PartitionMetadataFile:
    """`partition.metadata`: `version: 0\\ntopic_id: <base64 uuid>` (no trailing newline)."""

    VERSION = 0
    _SEP = re.compile(r":\s+")

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)

    def exists(self) -> bool:
        """Whether the file is there."""
        return os.path.exists(self.path)

    def write(self, topic_id: str, sync: bool = True) -> None:
        """Record the topic id, atomically."""
        write_atomic(self.path, f"version: {self.VERSION}\ntopic_id: {topic_id}".encode(), sync)

    def read_or_none(self) -> str | None:
        """The topic id, or None when the file is not there."""
        return self.read() if self.exists() else None

    def assign(self, topic_id: str, partition: str) -> None:
        """Write the topic id unless already there; a different id there is an error (Kafka's check)."""
        existing = self.read_or_none()
        if existing is None:
            self.write(topic_id)
        elif existing != topic_id:
            raise LogError(
                f"Tried to assign topic ID {topic_id} to log for topic partition {partition}, "
                f"but log already contained topic ID {existing}"
            )

    def read(self) -> str:
        """Return the topic id; malformed content raises CheckpointError (Kafka's messages)."""
        with open(self.path, "rb") as f:
            lines = _LINE_END.split(f.read().decode("utf-8", errors="replace"))
        line = lines[0] if lines else ""
        try:
            fields = self._SEP.split(line)
            if len(fields) != 2:
                raise self._malformed(line)
            version = _java_int(fields[1])
            if version != self.VERSION:
                raise CheckpointError(
                    f"Unrecognized version of partition metadata file ({self.path}): {version}"
                )
            line = lines[1] if len(lines) > 1 else ""
            fields = self._SEP.split(line)
            if len(fields) != 2:
                raise self._malformed(line)
        except ValueError:
            raise self._malformed(line) from None
        topic_id = fields[1]
        if topic_id == "AAAAAAAAAAAAAAAAAAAAAA":  # Uuid.ZERO_UUID
            raise CheckpointError(f"Invalid topic ID in partition metadata file ({self.path})")
        return topic_id

    def _malformed(self, line: str) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file ({self.path}): '{line}'")
