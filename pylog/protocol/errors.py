"""Kafka's error codes as the protocol layer names them (the registry itself is pylog.common.errors)."""

from __future__ import annotations

from pylog.common.errors import ErrorCode

__all__ = ["ErrorCode"]
