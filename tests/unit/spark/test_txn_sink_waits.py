"""The exactly-once sink's guards against kafka-python's unbounded transactional waits (txn_sink.py)."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("pyspark")

from kafka.errors import KafkaConnectionError  # noqa: E402

from pylog.spark.txn_sink import _retry_on_dead_coordinator, _within  # noqa: E402


def test_within_returns_raises_or_times_out():
    _within(lambda: None, 5, "nothing")
    with pytest.raises(ValueError, match="boom"):
        _within(lambda: (_ for _ in ()).throw(ValueError("boom")), 5, "a failing call")
    stuck = threading.Event()
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="the transaction's commit did not finish within 0 s"):
        _within(stuck.wait, 0.2, "the transaction's commit")
    assert time.monotonic() - started < 5
    stuck.set()
    with pytest.raises(TimeoutError):  # a deadline already past still gives a clear error, not a hang
        _within(threading.Event().wait, -1, "the transaction's abort")


class _Client:
    def __init__(self) -> None:
        self.asked: list[tuple[object, int]] = []

    def await_ready(self, node_id, timeout_ms=30000):
        self.asked.append((node_id, timeout_ms))
        if node_id == "coordinator-1":
            raise KafkaConnectionError("Node coordinator-1 not ready after 30000 ms")
        return True


class _Producer:
    def __init__(self) -> None:
        self._sender = type("Sender", (), {})()
        self._sender._client = _Client()


def test_a_refused_coordinator_reads_as_not_ready_so_the_sender_resends():
    producer = _Producer()
    client = producer._sender._client
    _retry_on_dead_coordinator(producer)
    assert client.await_ready("coordinator-1", timeout_ms=500) is False
    assert client.await_ready(0) is True
    assert [node for node, _ in client.asked] == ["coordinator-1", 0]
    assert client.asked[0][1] == 500
    _retry_on_dead_coordinator(object())  # a producer without those internals is left alone
