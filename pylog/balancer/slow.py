"""Slow brokers (Cruise Control's METRIC_ANOMALY from its SlowBrokerFinder), from the brokers' own latency.

Cruise Control compares each broker's log flush time with its history and its peers; pylog compares what a
client feels: each broker's Produce request p99 (`kafka_network_requestmetrics_totaltimems`, read from its
`prometheus.listener` /metrics as pylog-top does). A broker is slow when its p99 is at least
slow.broker.latency.min.ms and at least slow.broker.latency.ratio times the median of its peers' (pylog's
keys); at least three brokers must answer, so that "its peers" means something. The fix demotes the slow
brokers (demote_broker: leadership moves off them, no replica moves).
"""

from __future__ import annotations

import logging
import statistics

from pylog.balancer.analyzer import demote
from pylog.balancer.cluster import ClusterFacts, close_cluster, open_cluster
from pylog.balancer.config import BalancerConfig
from pylog.balancer.findings import Finding
from pylog.cli.top_data import metrics_urls, scrape

log = logging.getLogger("pylog.balancer")
P99 = "kafka_network_requestmetrics_totaltimems"


def produce_p99(bootstrap: str) -> dict[int, float]:
    """Each live broker's Produce p99 in ms (brokers without /metrics, or that did not answer, left out)."""
    cluster = open_cluster(bootstrap)
    try:
        urls = metrics_urls(cluster.admin, {})
    finally:
        close_cluster(cluster)
    out = {}
    for b, url in urls.items():
        value = scrape(url).get(P99, request="Produce", quantile="0.99") if url else None
        if value is not None:
            out[b] = float(value)
    return out


def slow_brokers(p99: dict[int, float], ratio: float, min_ms: float) -> dict[int, float]:
    """The brokers whose p99 is over min_ms and over ratio x the median of the others'."""
    if len(p99) < 3:
        return {}
    return {b: v for b, v in sorted(p99.items())
            if v >= min_ms and v >= ratio * statistics.median(x for o, x in p99.items() if o != b)}


class SlowBrokerFinder:
    """The anomaly detector's METRIC_ANOMALY finder."""

    def __init__(self, cfg: BalancerConfig) -> None:
        self.cfg = cfg

    def __call__(self, facts: ClusterFacts) -> Finding | None:
        try:
            p99 = produce_p99(self.cfg["bootstrap.servers"])
        except Exception as exc:  # the metrics are best effort: no figure, no anomaly
            log.debug("reading the brokers' request latency failed: %s", exc)
            return None
        slow = slow_brokers(p99, self.cfg["slow.broker.latency.ratio"], self.cfg["slow.broker.latency.min.ms"])
        if not slow:
            return None
        text = ", ".join(f"broker {b} ({v:.0f} ms)" for b, v in slow.items())
        details = {"description": f"Slow brokers, Produce p99 at least {self.cfg['slow.broker.latency.ratio']}x "
                                  f"their peers' median: {text}",
                   "slowBrokersByProduceP99Ms": {str(b): round(v, 3) for b, v in slow.items()}}
        ids = sorted(slow)
        return Finding(details, lambda f: demote(f, ids, False, True), text)
