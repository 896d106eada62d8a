"""What log reads and appends hand back to the broker."""

from __future__ import annotations

import os
from typing import NamedTuple


class FileSlice(NamedTuple):
    """A byte range of a segment file holding whole batches; the server sends it with sendfile.

    The range is only valid until the log is truncated or the segment deleted (retention):
    a sender must treat a short read as an error, never pad it.
    """

    path: str
    position: int
    size: int
    inode: int = 0  # of the segment file read; a different inode at `path` means the file was swapped

    def read(self) -> bytes:
        """The bytes of the slice (for tests and tools; the broker uses sendfile)."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            return os.pread(fd, self.size, self.position)
        finally:
            os.close(fd)


class OffsetTimestamp(NamedTuple):
    """A ListOffsets answer: the offset found and the timestamp of that record (-1 if none)."""

    offset: int
    timestamp: int


class AppendInfo(NamedTuple):
    """What an append wrote."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    num_records: int
    size: int
    log_append_time: int = -1  # the broker's timestamp when message.timestamp.type=LogAppendTime
    duplicate: bool = False  # a producer's retry of a batch already in the log: nothing was appended
