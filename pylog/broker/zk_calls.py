"""Blocking ZooKeeper calls from request handlers, bounded by the request's timeout.

A ZK-mode Kafka broker whose ZooKeeper stops answering holds an admin request until ZooKeeper is back
or the client gives up; the request then fails with a timeout, and the connection stays open. pylog
answers the request itself: REQUEST_TIMED_OUT (Kafka's error for an admin operation that did not
finish in timeout_ms) with a message naming ZooKeeper, within the request's timeout_ms (or the
ZooKeeper client's connection timeout, whichever is shorter), so the operator learns where to look.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from pylog.common.errors import KafkaError
from pylog.protocol.errors import ErrorCode
from pylog.zk import errors as zk_errors

# The session is not answering: a stopped, partitioned or overloaded ensemble (not a znode's own error).
UNREACHABLE = (zk_errors.ZkTimeoutError, zk_errors.ConnectionLossError, zk_errors.SessionExpiredError,
               zk_errors.ClientClosedError)


class ZooKeeperTimeout(KafkaError):
    """ZooKeeper did not answer in time: the request fails with REQUEST_TIMED_OUT."""

    code = ErrorCode.REQUEST_TIMED_OUT


def outage(connect: str, exc: BaseException) -> ZooKeeperTimeout:
    """The error to answer for a ZooKeeper call that failed with `exc` (one of UNREACHABLE)."""
    return ZooKeeperTimeout(f"ZooKeeper at {connect} is not answering ({exc}): is ZooKeeper running and reachable "
                            "from the broker?")


async def run_zk(connect: str, fn: Callable[..., Any], *args: Any, timeout_ms: int = 0) -> Any:
    """fn(*args) on an executor thread; ZooKeeperTimeout when ZooKeeper does not answer within timeout_ms
    (<= 0: only the ZooKeeper client's own connection timeout bounds it)."""
    job = asyncio.get_running_loop().run_in_executor(None, fn, *args)
    try:
        if timeout_ms > 0:
            # shield: the thread cannot be stopped; its outcome (the write may still land) is left to it.
            return await asyncio.wait_for(asyncio.shield(job), timeout_ms / 1000)
        return await job
    except UNREACHABLE as exc:  # first: ZkTimeoutError is a TimeoutError too
        raise outage(connect, exc) from None
    except asyncio.TimeoutError:
        raise ZooKeeperTimeout(f"Timed out after {timeout_ms} ms waiting for ZooKeeper at {connect}: is "
                               "ZooKeeper running and reachable from the broker?") from None
