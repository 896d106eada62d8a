"""What the performance tools share: Java's number formatting, Kafka's ThroughputThrottler, SimpleDateFormat.

The perf tools' lines are parsed by people's scripts, so they follow Java's printf: HALF_UP rounding,
"NaN" and "Infinity" rather than Python's "nan" and "inf".
"""

from __future__ import annotations

import math
import re
import time
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

_MIN_SLEEP_NS = 2_000_000


def jfloat(value: float, decimals: int = 6) -> str:
    """Java's String.format("%.Nf", value) (plain %f is six decimals)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    # Java rounds the shortest decimal form of the double half-up, not the binary value.
    return str(Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def now_ms() -> int:
    """System.currentTimeMillis()."""
    return time.time_ns() // 1_000_000


class ThroughputThrottler:
    """Kafka's ThroughputThrottler: sleep off a deficit of 1/throughput seconds per record, in >= 2 ms naps."""

    def __init__(self, target: float, start_ms: int) -> None:
        self.target = target
        self.start_ms = start_ms
        self.sleep_ns = int(1e9 / target) if target > 0 else None
        self.deficit_ns = 0

    def should_throttle(self, sent: int, send_start_ms: int) -> bool:
        """Whether the rate so far is above the target (never, for a negative target)."""
        if self.target < 0:
            return False
        elapsed = (send_start_ms - self.start_ms) / 1000.0
        return elapsed > 0 and sent / elapsed > self.target

    def throttle(self) -> None:
        """Sleep, on average, 1/target seconds per call."""
        if self.sleep_ns is None:  # target 0: Kafka blocks until woken, which nothing does
            while True:
                time.sleep(3600)
        self.deficit_ns += self.sleep_ns
        if self.deficit_ns >= _MIN_SLEEP_NS:
            time.sleep(self.deficit_ns / 1e9)
            self.deficit_ns = 0


_DATE_FIELDS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "hh": "%I", "mm": "%M",
                "ss": "%S", "a": "%p", "EEE": "%a", "MMM": "%b", "Z": "%z"}
_DATE_TOKEN = re.compile(r"'[^']*'|(([A-Za-z])\2*)|.", re.S)


class JavaDateFormat:
    """The SimpleDateFormat patterns the perf tools are given (yyyy-MM-dd HH:mm:ss:SSS and the like)."""

    def __init__(self, pattern: str) -> None:
        self.parts: list[str | int] = []  # strftime text, or the width of a milliseconds field
        for m in _DATE_TOKEN.finditer(pattern):
            token = m.group(0)
            if token.startswith("'"):
                self.parts.append(token[1:-1].replace("%", "%%") or "'")
            elif m.group(1) and token[0] == "S":
                self.parts.append(len(token))
            elif m.group(1):
                if token not in _DATE_FIELDS:  # Java's text for a letter it has no field for
                    raise ValueError(f"Illegal pattern character '{token[0]}' (pylog supports "
                                     f"{', '.join(sorted(_DATE_FIELDS))} and S...)")
                self.parts.append(_DATE_FIELDS[token])
            else:
                self.parts.append(token.replace("%", "%%"))

    def format(self, ms: int) -> str:
        """The local time of epoch milliseconds `ms` in this pattern."""
        when = datetime.fromtimestamp(ms / 1000).astimezone()
        return "".join(when.strftime(p) if isinstance(p, str) else str(ms % 1000).zfill(p) for p in self.parts)
