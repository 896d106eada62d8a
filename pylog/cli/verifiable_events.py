"""The JSON event lines of Kafka's verifiable clients (what Kafka's system tests parse), and their stop signal.

Every line is one compact JSON object that starts with "timestamp" and "name" (Jackson's
@JsonPropertyOrder in VerifiableProducer/VerifiableConsumer), then the event's own fields.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

from pylog.cli.perf_common import now_ms
from pylog.common.errors import ErrorCode

# librdkafka's local errors, as the Java exception the Java client would have raised.
_LOCAL_EXCEPTIONS = {"_MSG_TIMED_OUT": "org.apache.kafka.common.errors.TimeoutException",
                     "_TIMED_OUT": "org.apache.kafka.common.errors.TimeoutException",
                     "_TRANSPORT": "org.apache.kafka.common.errors.NetworkException",
                     "_ALL_BROKERS_DOWN": "org.apache.kafka.common.errors.NetworkException",
                     "_UNKNOWN_TOPIC": "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
                     "_UNKNOWN_PARTITION": "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"}


def emit(name: str, **fields: Any) -> None:
    """Print one event line and flush it (the tests read it as it happens)."""
    sys.stdout.write(json.dumps({"timestamp": now_ms(), "name": name, **fields}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def exception_class(err: Any) -> str:
    """Java's exception.getClass().toString() for a librdkafka KafkaError."""
    code = err.code()
    if code >= 0:
        try:
            name = ErrorCode(code).exception_name
        except ValueError:
            name = ""
        return f"class {name or 'org.apache.kafka.common.KafkaException'}"
    return f"class {_LOCAL_EXCEPTIONS.get(err.name(), 'org.apache.kafka.common.KafkaException')}"


class StopSignal:
    """SIGTERM and SIGINT ask the loop to stop, so the final events still print (Kafka's shutdown hook)."""

    def __init__(self) -> None:
        self.stopped = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)

    def _stop(self, *_: Any) -> None:
        self.stopped = True
