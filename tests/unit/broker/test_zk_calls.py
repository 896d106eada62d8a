"""run_zk: a ZooKeeper that does not answer becomes REQUEST_TIMED_OUT naming ZooKeeper, within timeout_ms."""

import asyncio
import threading
import time

import pytest

from pylog.broker.zk_calls import ZooKeeperTimeout, run_zk
from pylog.common.errors import ErrorCode
from pylog.zk import errors as zk_errors


def _raise(exc):
    raise exc


def test_a_zookeeper_timeout_is_request_timed_out_naming_zookeeper():
    with pytest.raises(ZooKeeperTimeout) as err:
        asyncio.run(run_zk("zk:2181/c", _raise, zk_errors.ZkTimeoutError("Timed out after 6s")))
    assert err.value.code == ErrorCode.REQUEST_TIMED_OUT
    assert str(err.value) == ("ZooKeeper at zk:2181/c is not answering (Timed out after 6s): is ZooKeeper running "
                              "and reachable from the broker?")


def test_the_request_timeout_bounds_the_wait():
    release = threading.Event()

    async def timed() -> float:
        t0 = time.monotonic()
        with pytest.raises(ZooKeeperTimeout, match="Timed out after 200 ms waiting for ZooKeeper at zk:2181"):
            await run_zk("zk:2181", release.wait, 30, timeout_ms=200)
        return time.monotonic() - t0
    threading.Timer(1.0, release.set).start()  # the stuck call ends later, on its own thread
    try:
        assert asyncio.run(timed()) < 0.9
    finally:
        release.set()


def test_a_znode_error_and_a_result_pass_through():
    with pytest.raises(zk_errors.NoNodeError):
        asyncio.run(run_zk("zk:2181", _raise, zk_errors.NoNodeError("/x")))
    assert asyncio.run(run_zk("zk:2181", lambda a: a + 1, 1, timeout_ms=1000)) == 2
