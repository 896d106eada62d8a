"""Kafka release / inter-broker protocol version strings (MetadataVersion) up to 3.3, for validation."""

from __future__ import annotations

from typing import Any

from pylog.common.configdef import ConfigError, LambdaValidator

__all__ = ["METADATA_VERSIONS", "is_valid_version", "METADATA_VERSION_VALIDATOR"]

# (release, sub-version) in MetadataVersion order; "" means the release has no IV suffix.
_IBPS: list[tuple[str, str]] = [
    ("0.8.0", ""), ("0.8.1", ""), ("0.8.2", ""), ("0.9.0", ""),
    ("0.10.0", "IV0"), ("0.10.0", "IV1"), ("0.10.1", "IV0"), ("0.10.1", "IV1"), ("0.10.1", "IV2"),
    ("0.10.2", "IV0"), ("0.11.0", "IV0"), ("0.11.0", "IV1"), ("0.11.0", "IV2"),
    ("1.0", "IV0"), ("1.1", "IV0"), ("2.0", "IV0"), ("2.0", "IV1"),
    ("2.1", "IV0"), ("2.1", "IV1"), ("2.1", "IV2"), ("2.2", "IV0"), ("2.2", "IV1"),
    ("2.3", "IV0"), ("2.3", "IV1"), ("2.4", "IV0"), ("2.4", "IV1"), ("2.5", "IV0"), ("2.6", "IV0"),
    ("2.7", "IV0"), ("2.7", "IV1"), ("2.7", "IV2"), ("2.8", "IV0"), ("2.8", "IV1"),
    ("3.0", "IV0"), ("3.0", "IV1"), ("3.1", "IV0"), ("3.2", "IV0"),
    ("3.3", "IV0"), ("3.3", "IV1"), ("3.3", "IV2"), ("3.3", "IV3"),
]
# Full versions ("2.8-IV1") and bare releases ("2.8"), which MetadataVersion.fromVersionString accepts too.
METADATA_VERSIONS: tuple[str, ...] = tuple(r if not iv else f"{r}-{iv}" for r, iv in _IBPS)
_KEYS = frozenset(METADATA_VERSIONS) | {r for r, _ in _IBPS}


def is_valid_version(version: str) -> bool:
    """MetadataVersion.fromVersionString: only the first 2 dotted parts count (3 for 0.x)."""
    segments = version.split(".")
    n = 3 if version.startswith("0.") else 2
    key = version if n >= len(segments) else ".".join(segments[:n])
    return key in _KEYS


def _check(name: str, value: Any) -> None:
    if not is_valid_version(str(value)):
        raise ConfigError.invalid(name, value, f"Version {value} is not a valid version")


METADATA_VERSION_VALIDATOR = LambdaValidator(_check, f"a Kafka version from {METADATA_VERSIONS[0]} to "
                                             f"{METADATA_VERSIONS[-1]}, e.g. 2.8 or 3.0-IV1")
