"""Measuring a throttled client's rate the way Kafka's windowed quotas let it through."""

from __future__ import annotations

import bisect
import itertools


def rate_over_whole_periods(events: list[tuple[float, float]], quota: float) -> float:
    """Units/s (bytes, requests) from the start of the first burst to the start of the last one.

    Kafka's windowed rate lets a throttled client through in a burst each time its oldest sample expires
    (every quota.window.num seconds), then in a trickle; averaged over whole periods it is the quota. A
    burst starts at the first event of half a second that carries more than a second's quota.
    """
    times = [t for t, _ in events]
    total = [0, *itertools.accumulate(n for _, n in events)]
    starts: list[float] = []
    for i, t in enumerate(times):
        if (not starts or t - starts[-1] >= 1.0) and total[bisect.bisect_left(times, t + 0.5)] - total[i] > quota:
            starts.append(t)
    assert len(starts) >= 2, f"bursts at {starts}"
    counted = sum(n for t, n in events if starts[0] <= t < starts[-1])
    return counted / (starts[-1] - starts[0])
