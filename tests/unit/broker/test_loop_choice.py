"""Which event loop a broker runs: uvloop by default (it measured 11-18 % less CPU per small request),
the stock loop on PYLOG_EVENT_LOOP=asyncio, and one clear error for anything else."""

import click
import pytest

from pylog.broker.main import _loop_factory

uvloop = pytest.importorskip("uvloop")


@pytest.mark.parametrize("value", [None, "", "uvloop", " UVLOOP "])
def test_uvloop_is_the_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("PYLOG_EVENT_LOOP", raising=False)
    else:
        monkeypatch.setenv("PYLOG_EVENT_LOOP", value)
    assert _loop_factory() is uvloop.new_event_loop


def test_asyncio_selects_the_stock_loop(monkeypatch):
    monkeypatch.setenv("PYLOG_EVENT_LOOP", "asyncio")
    assert _loop_factory() is None


def test_an_unknown_loop_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("PYLOG_EVENT_LOOP", "trio")
    with pytest.raises(click.ClickException, match="expected asyncio or uvloop"):
        _loop_factory()
