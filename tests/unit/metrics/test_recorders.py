"""The hot paths' recorders: reservoir quantiles, ISR change counting, http listener parsing, and their cost."""

from __future__ import annotations

import time

import pytest

from pylog.common.configdef import ConfigError
from pylog.common.listeners import parse_http_listener
from pylog.metrics.recorders import BrokerCounters, QUANTILES, RequestMetrics, Reservoir


def test_reservoir_quantiles_count_and_sum_over_recent_observations():
    r = Reservoir()
    for ms in range(1, 101):
        r.observe(float(ms))
    count, total, quantiles = r.summary()
    assert (count, total) == (100, 5050.0)
    assert dict(quantiles) == {0.5: 51.0, 0.75: 76.0, 0.95: 96.0, 0.98: 99.0, 0.99: 100.0, 0.999: 100.0}


def test_reservoir_keeps_the_last_1024():
    r = Reservoir()
    for _ in range(2000):
        r.observe(1.0)
    for _ in range(1024):
        r.observe(9.0)
    count, _total, quantiles = r.summary()
    assert count == 3024 and {v for _q, v in quantiles} == {9.0}


def test_empty_reservoir_reports_zeros():
    assert Reservoir().summary() == (0, 0.0, [(q, 0.0) for q in QUANTILES])


@pytest.mark.parametrize("old,new,shrinks,expands", [
    ([0, 1, 2], [0, 1], 1, 0), ([0, 1], [0, 1, 2], 0, 1), ([0, 1], [0, 2], 1, 1), ([0, 1], [1, 0], 0, 0)])
def test_isr_changes_count_a_member_leaving_and_one_joining(old, new, shrinks, expands):
    c = BrokerCounters()
    c.isr_changed(old, new)
    assert (c.isr_shrinks, c.isr_expands) == (shrinks, expands)


@pytest.mark.parametrize("value,expected", [
    ("", None), (None, None), ("http://127.0.0.1:9404", ("127.0.0.1", 9404)), ("http://:9404", ("0.0.0.0", 9404)),
    ("http://[::1]:9404/", ("::1", 9404))])
def test_http_listener_values(value, expected):
    assert parse_http_listener(value) == expected


@pytest.mark.parametrize("value", ["127.0.0.1:9404", "https://h:1", "http://h", "http://h:99999"])
def test_bad_http_listener_names_the_key(value):
    with pytest.raises(ConfigError, match="prometheus.listener"):
        parse_http_listener(value)


def test_recording_requests_counts_each_one():
    """Every request the server records is counted under its API key and version (its cost is a benchmark
    figure, BENCHMARKS.md "Metrics overhead", not a timed test)."""
    m = RequestMetrics()
    t0 = time.perf_counter()
    for _ in range(1000):
        m.record(0, 9, t0)
    assert m.requests[(0, 9)] == 1000
