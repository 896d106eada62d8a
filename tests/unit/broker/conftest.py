"""Real partition logs in a temporary directory for broker unit tests."""

from __future__ import annotations

import pytest

from pylog.log import Log, LogConfig


@pytest.fixture
def make_log(tmp_path):
    """make_log(name) -> a fresh Log under tmp_path."""
    def make(name: str = "t") -> Log:
        return Log.open(str(tmp_path / name / "t-0"), LogConfig.from_props({}))
    return make
