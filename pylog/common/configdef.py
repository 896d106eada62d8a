"""Declarative config keys in the spirit of Kafka's ConfigDef: types, validators, parsing, errors.

Error texts are Kafka's (`ConfigException(name, value, message)` renders
"Invalid value <value> for configuration <name>: <message>"), so operators see the same lines
they know from Kafka and tests can compare them verbatim.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Sequence

__all__ = [
    "ConfigError", "Type", "Importance", "Password", "ConfigKey", "Validator",
    "Range", "at_least", "between", "ValidString", "ValidList", "CaseInsensitiveValidString",
    "NonEmptyString", "LambdaValidator", "CompositeValidator",
    "parse_type", "to_string", "java_str", "INT_MAX", "LONG_MAX",
]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
SHORT_MIN, SHORT_MAX = -(2**15), 2**15 - 1


class ConfigError(ValueError):
    """An invalid configuration. `key` names the offending config when there is one."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key

    @classmethod
    def invalid(cls, name: str, value: Any, message: str | None = None) -> "ConfigError":
        """Kafka's ConfigException(name, value, message) wording."""
        text = f"Invalid value {java_str(value)} for configuration {name}"
        return cls(text + (f": {message}" if message is not None else ""), key=name)


class Type(enum.Enum):
    """ConfigDef.Type; `.id` is DescribeConfigsResponse.ConfigType's wire id."""

    BOOLEAN = ("boolean", 1)
    STRING = ("string", 2)
    INT = ("int", 3)
    SHORT = ("short", 4)
    LONG = ("long", 5)
    DOUBLE = ("double", 6)
    LIST = ("list", 7)
    CLASS = ("class", 8)
    PASSWORD = ("password", 9)

    @property
    def label(self) -> str:
        """Lower-case name used in docs ("int", "long", ...)."""
        return self.value[0]

    @property
    def id(self) -> int:
        """DescribeConfigs ConfigType id."""
        return self.value[1]

    @property
    def is_sensitive(self) -> bool:
        """Only passwords are hidden in DescribeConfigs (KafkaConfig.maybeSensitive)."""
        return self is Type.PASSWORD


class Importance(enum.Enum):
    """ConfigDef.Importance."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Password:
    """A secret value; never printed by accident (Kafka's Password prints "[hidden]")."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "[hidden]"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


def java_double_str(x: float) -> str:
    """Double.toString: plain in [1e-3, 1e7), else "d.dddE<exp>"; always at least one decimal."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        r = repr(x)
        return r if "e" not in r else format(Decimal(r), "f")
    sign, digits, exp = Decimal(repr(x)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    e10 = len(ds) - 1 + int(exp)
    mantissa = ds[0] + "." + (ds[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{e10}"


def java_str(value: Any) -> str:
    """String.valueOf as Kafka's messages print parsed values (Lists as "[a, b]", null as "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


Validator = Callable[[str, Any], None]


@dataclass(frozen=True)
class Range:
    """Numeric bounds, inclusive (ConfigDef.Range)."""

    min: int | float | None = None
    max: int | float | None = None

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError.invalid(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigError.invalid(name, value, f"Value must be at least {java_str(self.min)}")
        if self.max is not None and value > self.max:
            raise ConfigError.invalid(name, value, f"Value must be no more than {java_str(self.max)}")

    def __str__(self) -> str:
        lo = "" if self.min is None else java_str(self.min)
        hi = "" if self.max is None else java_str(self.max)
        if self.min is None and self.max is None:
            return "[...]"
        if self.min is None:
            return f"[...,{hi}]"
        if self.max is None:
            return f"[{lo},...]"
        return f"[{lo},...,{hi}]"


def at_least(minimum: int | float) -> Range:
    """Range.atLeast."""
    return Range(minimum, None)


def between(minimum: int | float, maximum: int | float) -> Range:
    """Range.between (inclusive)."""
    return Range(minimum, maximum)


@dataclass(frozen=True)
class ValidString:
    """One of a fixed set of strings, case-sensitive (ConfigDef.ValidString)."""

    values: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        if value not in self.values:
            raise ConfigError.invalid(name, value, "String must be one of: " + ", ".join(self.values))

    def __str__(self) -> str:
        return "[" + ", ".join(self.values) + "]"


@dataclass(frozen=True)
class CaseInsensitiveValidString:
    """One of a fixed set of strings, ignoring case."""

    values: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        if value is None or value.upper() not in {v.upper() for v in self.values}:
            raise ConfigError.invalid(name, value, "String must be one of (case insensitive): "
                                      + ", ".join(v.upper() for v in self.values))

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(v.upper() for v in self.values) + "]"


@dataclass(frozen=True)
class ValidList:
    """Every list element is one of the given strings (ConfigDef.ValidList)."""

    values: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        for item in value:
            ValidString(self.values)(name, item)

    def __str__(self) -> str:
        return "[" + ", ".join(self.values) + "]"


class NonEmptyString:
    """A string that is not "" (null is allowed)."""

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and value == "":
            raise ConfigError.invalid(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


@dataclass(frozen=True)
class LambdaValidator:
    """A custom check with its own "valid values" text for the docs."""

    check: Callable[[str, Any], None]
    description: str

    def __call__(self, name: str, value: Any) -> None:
        self.check(name, value)

    def __str__(self) -> str:
        return self.description


@dataclass(frozen=True)
class CompositeValidator:
    """All of several validators, in order."""

    validators: tuple[Validator, ...]

    def __call__(self, name: str, value: Any) -> None:
        for v in self.validators:
            v(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


_INT_RE = re.compile(r"[+-]?[0-9]+")
# Double.parseDouble's decimal forms (with optional f/d suffix) plus NaN/Infinity.
_DOUBLE_RE = re.compile(r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)")
_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")
_INT_BOUNDS = {Type.INT: (INT_MIN, INT_MAX), Type.SHORT: (SHORT_MIN, SHORT_MAX), Type.LONG: (LONG_MIN, LONG_MAX)}


def parse_type(name: str, value: str | None, type_: Type) -> Any:
    """ConfigDef.parseType for string input: trims, converts, raises Kafka's messages."""
    if value is None:
        return None
    trimmed = value.strip()
    if type_ is Type.BOOLEAN:
        low = trimmed.lower()
        if low in ("true", "false"):
            return low == "true"
        raise ConfigError.invalid(name, value, "Expected value to be either true or false")
    if type_ is Type.STRING or type_ is Type.CLASS:
        return trimmed
    if type_ is Type.PASSWORD:
        return Password(trimmed)
    if type_ in _INT_BOUNDS:
        lo, hi = _INT_BOUNDS[type_]
        if _INT_RE.fullmatch(trimmed) and lo <= int(trimmed) <= hi:
            return int(trimmed)
        raise ConfigError.invalid(name, value, f"Not a number of type {type_.name}")
    if type_ is Type.DOUBLE:
        if _DOUBLE_RE.fullmatch(trimmed):
            return float(trimmed.rstrip("fFdD"))
        raise ConfigError.invalid(name, value, f"Not a number of type {type_.name}")
    if type_ is Type.LIST:
        return [] if trimmed == "" else _COMMA_WITH_WHITESPACE.split(trimmed)
    raise AssertionError(f"unknown type {type_}")


def to_string(value: Any, type_: Type | None = None) -> str | None:
    """ConfigDef.convertToString: how DescribeConfigs and effective configs render a typed value."""
    if value is None:
        return None
    if isinstance(value, Password):
        return value.value
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return java_str(value)


@dataclass(frozen=True)
class ConfigKey:
    """One config: name, type, typed default (None = no value), validator, doc and update mode.

    dynamic_scope is None (read-only: server.properties only), "per-broker" (settable only for one
    broker) or "cluster-wide" (settable per broker or as the cluster default), as in Kafka's docs.
    `used` is False for keys pylog accepts for compatibility but does not act on.
    """

    name: str
    type: Type
    default: Any
    validator: Validator | None = None
    doc: str = ""
    importance: Importance = Importance.MEDIUM
    dynamic_scope: str | None = None
    group: str = ""
    used: bool = True

    def __post_init__(self) -> None:
        if self.dynamic_scope not in (None, "per-broker", "cluster-wide"):
            raise AssertionError(f"{self.name}: bad dynamic_scope {self.dynamic_scope!r}")
        # Like ConfigDef.define: a default that fails its own validator is a programming error.
        if self.default is not None and self.validator is not None:
            self.validator(self.name, self.default)

    def parse(self, raw: str | None) -> Any:
        """Parse and validate a string value; None means "not set" and yields the default."""
        if raw is None:
            return self.default
        value = parse_type(self.name, raw, self.type)
        if self.validator is not None and value is not None:
            self.validator(self.name, value)
        return value

    @property
    def default_string(self) -> str | None:
        """The default as Kafka renders it (convertToString), None when there is none."""
        return to_string(self.default, self.type)

    @property
    def valid_values(self) -> str:
        """The validator's description for docs ("[1,...]", "[CreateTime, LogAppendTime]")."""
        return "" if self.validator is None else str(self.validator)


def define(keys: Sequence[ConfigKey]) -> dict[str, ConfigKey]:
    """Build a registry keeping definition order; a name defined twice is a programming error."""
    out: dict[str, ConfigKey] = {}
    for k in keys:
        if k.name in out:
            raise AssertionError(f"Configuration {k.name} is defined twice.")
        out[k.name] = k
    return out
