"""Compact JSON like Kafka's Jackson ObjectMapper, and a strict reader with errors naming path and field."""

from __future__ import annotations

import json
from typing import Any, Mapping

_MISSING: Any = object()


def dumps(obj: Any) -> bytes:
    """Encode compactly (no spaces) and in UTF-8 without \\u escapes, as Jackson does."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _reject_constant(name: str) -> Any:
    """json parse_constant hook: NaN/Infinity are not JSON and Kafka never writes them."""
    raise ValueError(f"invalid JSON constant {name}")


def is_int(value: Any) -> bool:
    """True for JSON integers (Python bools are ints, but not JSON integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


class JsonReader:
    """Typed access to one JSON object; every failure is a ValueError naming `where` and the field."""

    def __init__(self, data: bytes | str | None, where: str, obj: Mapping[str, Any] | None = None):
        self.where = where
        if obj is not None:
            self.obj = obj
            return
        if data is None:
            raise ValueError(f"Malformed {where}: no data")
        try:
            text = data.decode("utf-8") if isinstance(data, (bytes, bytearray, memoryview)) else data
            if isinstance(text, memoryview):  # pragma: no cover - memoryview has no decode
                text = bytes(text).decode("utf-8")
            parsed = json.loads(text, parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError(f"Malformed {where}: not valid JSON ({e})") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"Malformed {where}: expected a JSON object, got {type(parsed).__name__}")
        self.obj = parsed

    def fail(self, key: str, problem: str) -> ValueError:
        """Build the error for one field."""
        return ValueError(f"Malformed {self.where}: field '{key}' {problem}")

    def has(self, key: str) -> bool:
        """True if the key is present (even with a null value)."""
        return key in self.obj

    def _get(self, key: str, default: Any) -> Any:
        if key in self.obj:
            return self.obj[key]
        if default is _MISSING:
            raise self.fail(key, "is missing")
        return default

    def int(self, key: str, default: Any = _MISSING) -> int:
        """An integer field."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if not is_int(value):
            raise self.fail(key, f"must be an integer, got {value!r}")
        return value

    def int_or_numeric_string(self, key: str, default: Any = _MISSING) -> int:
        """An integer written either as a number or as a decimal string (Kafka's timestamps, block ids)."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if is_int(value):
            return value
        if isinstance(value, str) and value.lstrip("-").isdigit():
            return int(value)
        raise self.fail(key, f"must be an integer or a numeric string, got {value!r}")

    def str(self, key: str, default: Any = _MISSING, nullable: bool = False) -> Any:
        """A string field (None allowed only when nullable)."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {value!r}")
        return value

    def int_list(self, key: str, default: Any = _MISSING) -> tuple[int, ...]:
        """A list of integers, as a tuple."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        return self.check_int_list(key, value)

    def check_int_list(self, key: str, value: Any) -> tuple[int, ...]:
        """Validate that value is a list of integers; key names it in the error."""
        if not isinstance(value, list) or not all(is_int(v) for v in value):
            raise self.fail(key, f"must be a list of integers, got {value!r}")
        return tuple(value)

    def object(self, key: str, default: Any = _MISSING) -> Mapping[str, Any]:
        """A nested JSON object (as a dict)."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object, got {value!r}")
        return value

    def list(self, key: str, default: Any = _MISSING) -> list[Any]:
        """A JSON array."""
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list, got {value!r}")
        return value

    def child(self, key: str, value: Any) -> "JsonReader":
        """A reader over a nested object, reported as `where` + key."""
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object, got {value!r}")
        return JsonReader(None, f"{self.where} ({key})", obj=value)

    def version(self, supported: tuple[int, ...], key: str = "version", default: Any = _MISSING) -> int:
        """The version field, which must be one of `supported`."""
        value = self.int(key, default)
        if value not in supported:
            raise self.fail(key, f"has unsupported value {value} (supported: {', '.join(map(str, supported))})")
        return value
