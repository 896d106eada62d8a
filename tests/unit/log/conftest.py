"""Helpers for the log tests: real segment files in tmp dirs, batches built like a client would."""

from __future__ import annotations

import os

import pytest

from pylog.log import Log, LogConfig
from pylog.protocol.records import build_batch, validate_batches

BASE_TS = 1_690_000_000_000


def make_batch(n: int = 1, ts: int = BASE_TS, value: bytes = b"v" * 10, key: bytes | None = None,
               compression: int = 0) -> bytearray:
    """A client-style batch (base offset 0, epoch -1) of `n` records, timestamps ts, ts+1, ..."""
    return bytearray(build_batch([(key, value, [], ts + i) for i in range(n)], compression=compression))


def append(log: Log, n: int = 1, ts: int = BASE_TS, epoch: int = 0, value: bytes = b"v" * 10,
           now_ms: int | None = None):
    """Validate and append one batch of `n` records as leader."""
    buf = make_batch(n, ts, value)
    return log.append_as_leader(buf, validate_batches(buf), epoch, now_ms=BASE_TS if now_ms is None else now_ms)


@pytest.fixture
def log_dir(tmp_path) -> str:
    """A log dir root."""
    return str(tmp_path)


@pytest.fixture
def open_log(log_dir):
    """Factory: open `<log_dir>/foo-0` with config overrides; closes everything at the end."""
    opened: list[Log] = []

    def _open(recovery_point: int = 0, clean_shutdown: bool = False, name: str = "foo-0", **cfg) -> Log:
        plog = Log.open(os.path.join(log_dir, name), LogConfig(**cfg), recovery_point,
                        clean_shutdown=clean_shutdown, now_ms=BASE_TS)
        opened.append(plog)
        return plog

    yield _open
    for plog in opened:
        try:
            plog.close()
        except OSError:
            pass
