"""The crash-shaped faults that pylog/chaos/faults.py has always injected, as a nemesis.

kill -9 of a leader, the controller or a random broker then a restart, a short pause, a
controlled shutdown and restart, and a pause until ZooKeeper expires the session. The fault
driver waits until the victim has rejoined; the runner then waits for full ISRs.
"""

from __future__ import annotations

import random

from pylog.chaos import faults as fl
from pylog.chaos.nemesis.base import Context, Entry

KINDS = fl.KINDS


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """One fault of the fault driver, with its own generator for the victim and the downtime."""
    driver = ctx.driver
    saved, settle = driver.rng, driver.settle
    driver.rng, driver.settle = rng, "rejoin"  # the runner waits for health itself
    try:
        start = ctx.now()
        fault = driver.inject(kind)
    finally:
        driver.rng, driver.settle = saved, settle
    detail = {"down_s": round(fault.down_s, 1)}
    if fault.note:
        detail["note"] = fault.note
    return Entry(start, ctx.now(), f"kill:{kind}", [f"b{fault.broker}"], detail)
