"""The /metrics endpoint: prometheus-client's threaded HTTP server over a registry of our collectors.

The server runs in its own daemon threads, so a scrape never waits for the broker's event loop to
be free for the HTTP part; only the snapshot (pylog/broker/metrics_view.py) visits the loop, with a
timeout. It starts before the broker and stops with the process, so it answers while the broker
loads, runs, is fenced or shuts down.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from prometheus_client import start_http_server
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import CollectorRegistry

from pylog.common.listeners import parse_http_listener
from pylog.metrics.collector import BrokerCollector
from pylog.metrics.snapshot import BrokerSnapshot

log = logging.getLogger("pylog.metrics")


class Exporter:
    """A running /metrics endpoint; `stop()` closes it."""

    def __init__(self, server: Any, thread: Any, host: str, port: int) -> None:
        self.server, self.thread, self.host, self.port = server, thread, host, port

    def stop(self) -> None:
        """Stop serving (the process exiting stops it too: the threads are daemons)."""
        self.server.shutdown()
        self.server.server_close()


def start_exporter(listener: str | None, snapshot: Callable[[], BrokerSnapshot]) -> Exporter | None:
    """Serve /metrics on `listener` (http://host:port); None when it is empty. OSError if the port is taken."""
    address = parse_http_listener(listener)
    if address is None:
        return None
    registry = CollectorRegistry(auto_describe=False)
    for collector in (ProcessCollector(registry=None), PlatformCollector(registry=None), BrokerCollector(snapshot)):
        registry.register(collector)
    GCCollector(registry=registry)  # registers itself (it refuses registry=None)
    server, thread = start_http_server(address[1], address[0], registry=registry)
    host, port = server.server_address[:2]
    log.info("Serving Prometheus metrics at http://%s:%d/metrics", host, port)
    return Exporter(server, thread, host, port)
