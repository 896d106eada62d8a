"""Fixtures for the log tests: real segment files in tmp dirs."""

from __future__ import annotations

import os

import pytest
from logtest import BASE_TS

from pylog.log import Log, LogConfig


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
