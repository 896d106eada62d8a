"""Well-formed requests with random field values, built from the codec's own JSON schemas.

A client may send anything the schema allows: empty or illegal topic names, negative partitions,
absurd sizes, garbage record bytes. The broker must answer each with error codes, never by
closing the connection (DESIGN.md: an exception means "close this connection" or a bug).
"""

from __future__ import annotations

import random
import re
import uuid
from typing import Any

INT_RANGES = {"int8": (-128, 127), "int16": (-32768, 32767), "int32": (-2**31, 2**31 - 1),
              "int64": (-2**63, 2**63 - 1), "uint16": (0, 65535)}
TOPIC_NAMES = ["fz", "nope", "", "a/b", "x" * 300, "__pylog_metrics"]
# Waits and timeouts stay short so a request answers within the test's socket timeout.
SHORT = re.compile(r"(timeout|max_wait)", re.I)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _in_version(field: dict, version: int) -> bool:
    spec = field.get("versions", "0+")
    if spec == "none":
        return False
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    lo, _, hi = spec.partition("-")
    return int(lo) <= version <= int(hi or lo)


def _int(kind: str, name: str, rnd: random.Random) -> int:
    lo, hi = INT_RANGES[kind]
    if SHORT.search(_snake(name)):
        return rnd.choice([0, 1, 50])
    if "Partition" in name and "Max" not in name:  # mostly partitions that may exist
        return rnd.choice([0, 1, -1, 2, 99])
    return rnd.choice([v for v in (0, 1, -1, lo, hi, rnd.randint(lo, hi), 1000, 1 << 20) if lo <= v <= hi])


def _value(field: dict, cls: type, version: int, rnd: random.Random, depth: int) -> Any:
    kind, name = field["type"], field["name"]
    if kind.startswith("[]"):
        inner = kind[2:]
        count = rnd.choice([0, 1, 1, 2, 3]) if depth < 3 else 0
        if inner in INT_RANGES or inner in ("string", "bool", "uuid", "float64"):
            return [_value({**field, "type": inner}, cls, version, rnd, depth + 1) for _ in range(count)]
        return [build(getattr(cls, inner), field.get("fields", []), version, rnd, depth + 1) for _ in range(count)]
    if kind in INT_RANGES:
        return _int(kind, name, rnd)
    if kind == "string":
        return rnd.choice(TOPIC_NAMES + ([None] if "nullableVersions" in field else ["a"]))
    if kind == "bool":
        return rnd.choice([True, False])
    if kind == "uuid":
        return rnd.choice([uuid.UUID(int=0), uuid.UUID(int=rnd.getrandbits(128))])
    if kind == "float64":
        return 0.0
    if kind in ("bytes", "records"):
        return rnd.choice([None, b"", rnd.randbytes(rnd.choice([1, 10, 61, 100]))])
    return build(getattr(cls, kind), field["fields"], version, rnd, depth + 1)


def build(cls: type, fields: list[dict], version: int, rnd: random.Random, depth: int = 0) -> Any:
    """An instance of message class `cls` at `version` with random values for every field."""
    values = {_snake(f["name"]): _value(f, cls, version, rnd, depth) for f in fields if _in_version(f, version)}
    while True:
        try:
            return cls(**values)
        except ValueError as exc:  # the codec renames a few fields (e.g. authorized operations): drop those
            unknown = [k for k in values if k in str(exc)]
            if not unknown:
                raise
            for k in unknown:
                values.pop(k)


def random_request(request_cls: type, version: int, rnd: random.Random) -> Any:
    """A random, well-formed request of `request_cls` at `version`."""
    return build(request_cls, request_cls._struct._json["fields"], version, rnd)
