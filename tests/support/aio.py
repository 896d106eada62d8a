"""Waiting inside asyncio tests that drive the real controller in the test's own event loop."""

from __future__ import annotations

import asyncio
from typing import Callable


async def until(cond: Callable[[], object], timeout: float, what: str, interval: float = 0.02) -> None:
    """Poll `cond` on the loop until it is truthy; AssertionError after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(interval)
