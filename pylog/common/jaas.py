"""Kafka's `sasl.jaas.config` text: one login module entry and its options (Kafka's JaasConfig).

Pure parsing, shared by the broker's listeners, the tools' --command-config and the Spark data source
(which takes Spark's `kafka.sasl.jaas.config`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pylog.common.configdef import ConfigError

__all__ = ["JaasLogin", "parse_jaas"]

_JAAS_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')


@dataclass(frozen=True)
class JaasLogin:
    """One JAAS login module entry: its class, and its options (never logged: they hold passwords)."""

    module: str
    options: dict[str, str] = field(repr=False)

    @property
    def users(self) -> dict[str, str]:
        """PlainLoginModule's `user_<name>` options: the users a PLAIN listener accepts."""
        return {k[5:]: v for k, v in self.options.items() if k.startswith("user_")}

    @property
    def client_login(self) -> tuple[str, str] | None:
        """The username and password this broker sends as a client, if both are set."""
        u, p = self.options.get("username"), self.options.get("password")
        return (u, p) if u is not None and p is not None else None


def parse_jaas(text: str, key: str = "sasl.jaas.config") -> JaasLogin:
    """Parse `<LoginModule> required k="v" ...;` (Kafka's JaasConfig for a single module)."""
    m = re.match(r"\s*([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\b", text)
    if m is None:
        raise ConfigError(f"Invalid value for configuration {key}: expected '<LoginModule> required "
                          "<option>=\"<value>\" ...;'", key=key)
    rest, options = text[m.end():], {}
    while True:
        om = _JAAS_OPTION.match(rest)
        if om is None:
            break
        value = om.group(2) if om.group(2) is not None else om.group(3)
        options[om.group(1)] = re.sub(r"\\(.)", r"\1", value)
        rest = rest[om.end():]
    if rest.strip() != ";":
        raise ConfigError(f"Invalid value for configuration {key}: JAAS config entry not terminated by semi-colon",
                          key=key)
    return JaasLogin(m.group(1), options)
