"""ZooKeeper authentication for brokers and tools, found where ZK-mode Kafka looks for it.

Kafka's broker and tools log in to ZooKeeper with the JAAS file named by the JVM system property
`java.security.auth.login.config`, passed in `KAFKA_OPTS` (`-Djava.security.auth.login.config=/etc/kafka/jaas.conf`),
section `Client` (or the one named by `-Dzookeeper.sasl.clientconfig=...`; `-Dzookeeper.sasl.client=false`
switches the login off). pylog reads the same variable and file. The section's
`org.apache.zookeeper.server.auth.DigestLoginModule required username="..." password="...";` becomes
ZooKeeper's built-in `digest` authentication (kazoo's `auth_data`), which every ZooKeeper accepts
without server-side SASL set-up; the znodes' creator ACLs then name `digest:<username>:<hash>`.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping

from pylog.common.configdef import ConfigError
from pylog.security.settings import parse_jaas
from pylog.zk.acls import secure_policy

__all__ = ["DIGEST_MODULE", "LOGIN_CONFIG", "ZkLogin", "zk_login", "jvm_properties", "zk_security"]

DIGEST_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"
LOGIN_CONFIG = "java.security.auth.login.config"


@dataclass(frozen=True)
class ZkLogin:
    """Who a ZooKeeper session authenticates as (the password is never shown)."""

    username: str
    password: str = field(repr=False)
    source: str = ""  # the JAAS file and section, for messages

    @property
    def auth_data(self) -> list[tuple[str, str]]:
        """kazoo's auth_data for this login: ZooKeeper's digest scheme."""
        return [("digest", f"{self.username}:{self.password}")]


def jvm_properties(opts: str) -> dict[str, str]:
    """The `-Dkey=value` system properties in a KAFKA_OPTS-style string."""
    out: dict[str, str] = {}
    for word in shlex.split(opts or ""):
        if word.startswith("-D") and "=" in word:
            key, value = word[2:].split("=", 1)
            out[key] = value
    return out


def _section(text: str, name: str) -> str | None:
    """The body of `name { ... };` in a JAAS file, or None if the file has no such section."""
    # Comments go, quoted values (a password may hold "//") stay.
    text = re.sub(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    m = re.search(r"(?:^|[;}\s])" + re.escape(name) + r"\s*\{(.*?)\}\s*;", text, flags=re.S)
    return None if m is None else m.group(1)


def zk_login(environ: Mapping[str, str] | None = None) -> ZkLogin | None:
    """The ZooKeeper login KAFKA_OPTS names, None when there is none; ConfigError when it is unusable."""
    env = os.environ if environ is None else environ
    props = jvm_properties(env.get("KAFKA_OPTS", ""))
    location = props.get(LOGIN_CONFIG)
    if not location or props.get("zookeeper.sasl.client", "true").lower() == "false":
        return None
    name = props.get("zookeeper.sasl.clientconfig", "Client")
    try:
        with open(location, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"Could not read the JAAS file {location} ({LOGIN_CONFIG} in KAFKA_OPTS): "
                          f"{e.strerror}", key=LOGIN_CONFIG) from None
    where = f"section {name} of {location}"
    body = _section(text, name)
    if body is None:
        return None
    login = parse_jaas(body.strip(), key=f"{LOGIN_CONFIG} ({where})")
    if login.module != DIGEST_MODULE:
        raise ConfigError(f"Unsupported ZooKeeper login module {login.module} in {where}: pylog authenticates "
                          f"to ZooKeeper with {DIGEST_MODULE} (username/password, ZooKeeper's digest scheme)",
                          key=LOGIN_CONFIG)
    if login.client_login is None:
        raise ConfigError(f"{DIGEST_MODULE} in {where} needs username and password", key=LOGIN_CONFIG)
    user, password = login.client_login
    return ZkLogin(user, password, where)


def zk_security(set_acl: bool | None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """ZkClient's auth_data/acl_policy keywords from KAFKA_OPTS; ConfigError when unusable.

    A broker passes its zookeeper.set.acl, and is refused when that is true without a login, as Kafka's
    broker is at start. A tool passes None: like Kafka's tools (JaasUtils.isZkSaslEnabled), it creates
    znodes with ACLs exactly when it has a login.
    """
    login = zk_login(environ)
    if set_acl and login is None:
        raise ConfigError("zookeeper.set.acl is true, but the verification of the JAAS login file failed: "
                          f"set KAFKA_OPTS=-D{LOGIN_CONFIG}=<file> with a Client section "
                          f"({DIGEST_MODULE} required username=\"...\" password=\"...\";)",
                          key="zookeeper.set.acl")
    secure = login is not None if set_acl is None else set_acl
    return {"auth_data": login.auth_data if login else (), "acl_policy": secure_policy if secure else None}
