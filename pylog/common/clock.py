"""The broker's wall clock in Kafka's unit."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the epoch (Kafka's time.milliseconds())."""
    return int(time.time() * 1000)
