"""Scraping a broker's /metrics and reading docs/metrics.md's table, for the metrics tests."""

from __future__ import annotations

import re
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


@dataclass(frozen=True)
class Documented:
    """One row of the documented table."""

    name: str  # the series name as written (counters with _total)
    type: str
    labels: frozenset[str]  # always present
    optional: frozenset[str]  # [in brackets]: some series of the family lack them

    @property
    def family(self) -> str:
        """The family name prometheus-client's parser reports (counters without _total)."""
        return self.name[:-len("_total")] if self.type == "counter" else self.name


def documented() -> list[Documented]:
    """The rows between the metrics-table markers of docs/metrics.md."""
    text = DOC.read_text()
    table = text.split("<!-- BEGIN metrics-table", 1)[1].split("<!-- END metrics-table", 1)[0]
    rows = []
    for line in table.splitlines():
        m = re.match(r"\|\s*`([a-z0-9_]+)`\s*\|\s*(\w+)\s*\|([^|]*)\|", line)
        if m is None:
            continue
        labels = [x.strip() for x in m.group(3).split(",") if x.strip()]
        rows.append(Documented(m.group(1), m.group(2), frozenset(x for x in labels if not x.startswith("[")),
                               frozenset(x.strip("[]") for x in labels if x.startswith("["))))
    return rows


def scrape_text(port: int, timeout: float = 10) -> str:
    """GET /metrics from a broker's prometheus.listener."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as resp:
        return resp.read().decode()


def scrape(port: int) -> dict[str, object]:
    """The families served, by family name (prometheus-client's parsed Metric objects)."""
    return {f.name: f for f in text_string_to_metric_families(scrape_text(port))}


def value(families: dict[str, object], series: str, **labels: str) -> float | None:
    """The value of one sample (series name as exposed, e.g. with _total), or None when absent."""
    for fam in families.values():
        for s in fam.samples:
            if s.name == series and s.labels == labels:
                return s.value
    return None
