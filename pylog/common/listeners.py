"""listeners / advertised.listeners / listener.security.protocol.map parsing with Kafka's messages."""

from __future__ import annotations

import re
from typing import NamedTuple

from pylog.common.configdef import ConfigError

__all__ = ["Listener", "SECURITY_PROTOCOLS", "DEFAULT_PROTOCOL_MAP", "parse_protocol_map", "parse_listeners",
           "parse_csv_list"]

# SecurityProtocol enum order; the default map lists them in this order.
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_PROTOCOL_MAP = ",".join(f"{p}:{p}" for p in SECURITY_PROTOCOLS)

# EndPoint.uriParseExp: NAME://host:port, NAME://[ipv6]:port, NAME://:port (empty host = all interfaces).
_URI = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
_CSV = re.compile(r"\s*,\s*")


class Listener(NamedTuple):
    """One endpoint: listener name (upper-case), host (None = bind all / unknown), port."""

    name: str
    host: str | None
    port: int
    security_protocol: str = "PLAINTEXT"

    @property
    def connection_string(self) -> str:
        """EndPoint.connectionString: "PLAINTEXT://host:9092", "PLAINTEXT://:9092", "X://[::1]:9092"."""
        if self.host is None:
            hostport = f":{self.port}"
        elif ":" in self.host:
            hostport = f"[{self.host}]:{self.port}"
        else:
            hostport = f"{self.host}:{self.port}"
        return f"{self.name}://{hostport}"


def parse_csv_list(value: str | None) -> list[str]:
    """CoreUtils.parseCsvList: split on commas with surrounding whitespace, drop empty items."""
    if not value:
        return []
    return [v for v in _CSV.split(value) if v != ""]


def parse_protocol_map(value: str, key: str = "listener.security.protocol.map") -> dict[str, str]:
    """Parse "NAME:PROTOCOL,..." into {NAME: PROTOCOL}; names are upper-cased like ListenerName.normalised."""
    out: dict[str, str] = {}
    for item in parse_csv_list(value.strip()):
        name, sep, proto = item.partition(":")
        if not sep:
            raise ConfigError(f"Error parsing configuration property '{key}': "
                              f"Invalid map entry '{item}', expected NAME:PROTOCOL", key=key)
        proto = proto.strip()
        if proto not in SECURITY_PROTOCOLS:
            raise ConfigError(f"Invalid security protocol `{proto}` defined in {key}", key=key)
        out[name.strip().upper()] = proto
    return out


def parse_listeners(value: str, protocol_map: dict[str, str], require_distinct_ports: bool = True) -> list[Listener]:
    """CoreUtils.listenerListToEndPoints: parse and check names (and ports) are distinct."""
    listeners: list[Listener] = []
    for item in parse_csv_list(value):
        m = _URI.fullmatch(item)
        if m is None:
            raise ConfigError(f"Error creating broker listeners from '{value}': "
                              f"Unable to parse {item} to a broker endpoint")
        name = m.group(1).upper()
        if name not in protocol_map:
            raise ConfigError(f"Error creating broker listeners from '{value}': "
                              f"No security protocol defined for listener {name}")
        host = m.group(2) or None
        listeners.append(Listener(name, host, int(m.group(3)), protocol_map[name]))
    if len({lst.name for lst in listeners}) != len(listeners):
        raise ConfigError(f"requirement failed: Each listener must have a different name, listeners: {value}")
    ports = [lst.port for lst in listeners if lst.port != 0]
    if require_distinct_ports and len(set(ports)) != len(ports):
        raise ConfigError(f"requirement failed: Each listener must have a different port, listeners: {value}")
    return listeners


_HTTP = re.compile(r"http://\[?([0-9a-zA-Z\-%._:]*?)\]?:([0-9]+)/?")


def parse_http_listener(value: str | None, key: str = "prometheus.listener") -> tuple[str, int] | None:
    """`http://host:port` (empty host = all interfaces) as (host, port); None for an empty value."""
    if value is None or not value.strip():
        return None
    m = _HTTP.fullmatch(value.strip())
    if m is None or not 0 <= int(m.group(2)) <= 65535:
        raise ConfigError.invalid(key, value, "Expected http://host:port (empty to disable)")
    return m.group(1) or "0.0.0.0", int(m.group(2))


class HttpListener:
    """Validator for an optional http://host:port key."""

    def __call__(self, name: str, value: object) -> None:
        parse_http_listener(value if isinstance(value, str) else None, name)

    def __str__(self) -> str:
        return "empty or http://host:port"
