"""Whether the console tools ever reached a broker, and Kafka's words when none could be.

librdkafka retries unreachable bootstrap servers until a record's delivery times out (2 minutes in
the console producer) and then says "Local: Message timed out". Kafka's clients log, at once,
`Connection to node -1 (host/ip:port) could not be established. Node may not be available.`; the
console tools stop with that line as soon as librdkafka reports every broker down before any broker
ever answered (an operator's typo or a stopped cluster), and go on retrying otherwise.
"""

from __future__ import annotations

import socket
from typing import Any


def node_address(hostport: str) -> str:
    """Java's InetSocketAddress.toString for a bootstrap entry: `localhost/127.0.0.1:9092`, `/127.0.0.1:9092`."""
    host, _, port = hostport.strip().rpartition(":")
    host = host.strip("[]")
    try:
        ip = socket.getaddrinfo(host, None)[0][4][0]
    except OSError:
        return f"{host}:{port}"
    return f"{'' if ip == host else host}/{ip}:{port}"


class Reachability:
    """An error_cb for librdkafka: notes when all brokers are down before any of them answered."""

    def __init__(self, bootstrap: str, client_id: str, role: str) -> None:
        self.bootstrap, self.client_id, self.role = bootstrap, client_id, role
        self.answered = False  # set by the tool once a broker answered (a delivery, an assignment)
        self.unreachable = False

    def error_cb(self, err: Any) -> None:
        """librdkafka's client-level errors (connection failures among them)."""
        if err.name() == "_ALL_BROKERS_DOWN" and not self.answered:
            self.unreachable = True

    def message(self) -> str:
        """Kafka's NetworkClient warning, for the first bootstrap server."""
        first = self.bootstrap.split(",")[0]
        return (f"WARN [{self.role} clientId={self.client_id}] Connection to node -1 ({node_address(first)}) could "
                "not be established. Node may not be available.")
