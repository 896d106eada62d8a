"""The metrics reporter rides out a ZooKeeper session expiry (issue 30): creating its topic fails with
SessionExpiredError, which is one WARNING line, not an ERROR with a traceback, and the next round retries."""

import asyncio
import logging
from types import SimpleNamespace

from pylog.broker.metrics_reporter import MetricsReporter
from pylog.broker.stats import PartitionStats
from pylog.zk.errors import SessionExpiredError


class ExpiringAdmin:
    def __init__(self) -> None:
        self.calls = 0

    async def auto_create(self, name: str):
        self.calls += 1
        raise SessionExpiredError("Session expired for /brokers/topics/__pylog_metrics")


def test_a_session_expiry_is_one_warning_line_and_the_reporter_keeps_going(caplog):
    caplog.set_level(logging.DEBUG, logger="pylog.metrics")
    admin = ExpiringAdmin()
    replica = SimpleNamespace(log=SimpleNamespace(size_bytes=10), is_leader=True)
    reporter = MetricsReporter(0, SimpleNamespace(partition=lambda t, p: None),
                               SimpleNamespace(partitions={("t", 0): replica}), PartitionStats(), admin, 10)

    async def go():
        task = asyncio.get_running_loop().create_task(reporter.run())
        for _ in range(200):
            if admin.calls >= 2:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(go())
    assert admin.calls >= 2  # it went on after the first failure
    records = [r for r in caplog.records if r.name == "pylog.metrics"]
    assert {r.levelno for r in records} == {logging.WARNING}
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in records)
    assert records[0].getMessage() == ("Could not publish metrics: SessionExpiredError: Session expired for "
                                       "/brokers/topics/__pylog_metrics")
