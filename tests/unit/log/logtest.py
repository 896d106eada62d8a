"""Helpers shared by the log tests (imported as `logtest`; pytest puts this dir on sys.path)."""

from __future__ import annotations

from kafka.record.memory_records import MemoryRecords

from pylog.log import FileSlice, Log
from pylog.protocol.records import build_batch, validate_batches

BASE_TS = 1_690_000_000_000


def make_batch(n: int = 1, ts: int = BASE_TS, value: bytes = b"v" * 10, key: bytes | None = None,
               compression: int = 0) -> bytearray:
    """A client-style batch (base offset 0, epoch -1) of `n` records, timestamps ts, ts+1, ..."""
    return bytearray(build_batch([(key, value, [], ts + i) for i in range(n)], compression=compression))


def append(log: Log, n: int = 1, ts: int = BASE_TS, epoch: int = 0, value: bytes = b"v" * 10,
           now_ms: int | None = None, key: bytes | None = None):
    """Validate and append one batch of `n` records as leader."""
    buf = make_batch(n, ts, value, key)
    return log.append_as_leader(buf, validate_batches(buf), epoch, now_ms=BASE_TS if now_ms is None else now_ms)


def slice_bytes(slices: list[FileSlice]) -> bytes:
    return b"".join(s.read() for s in slices)


def offsets_in(data: bytes) -> list[int]:
    """Offsets as kafka-python's consumer reads them (also checks every CRC)."""
    records, out = MemoryRecords(data), []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        out.extend(r.offset for r in batch)
    return out
