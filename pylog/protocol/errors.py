"""Kafka's error codes as the protocol layer names them (the registry itself is pylog.common.errors)."""

from __future__ import annotations

from pylog.common.errors import ErrorCode, KafkaError

__all__ = ["ErrorCode", "KafkaProtocolError"]


class KafkaProtocolError(KafkaError):
    """An error that maps to a Kafka error code; handlers turn it into a per-entity code."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        self.code = code
        super().__init__(message or code.message)
        self.message = message or code.message
