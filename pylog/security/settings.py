"""Per-listener security settings from Kafka's keys: TLS contexts, SASL mechanisms and JAAS logins.

A key may be set for one listener as `listener.name.<listener>.<key>` (listener lower-cased), which
wins over the plain key, as in Kafka. A SASL listener's login is the JAAS text of
`listener.name.<listener>.<mechanism>.sasl.jaas.config`: PLAIN's `user_<name>="<password>"` options
are the users the broker accepts, and `username` / `password` are what the broker itself sends when
it connects to another broker with that mechanism. Bad settings raise ConfigError naming the key.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Any

from pylog.common.configdef import ConfigError, Password
from pylog.common.jaas import JaasLogin, parse_jaas  # re-exported: the JAAS text is also the Spark source's
from pylog.security.stores import load_keystore, load_truststore

__all__ = ["SUPPORTED_MECHANISMS", "JaasLogin", "ListenerSecurity", "parse_jaas", "listener_value",
           "build_listener_security", "server_ssl_context", "client_ssl_context"]

SUPPORTED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def listener_value(cfg: Any, listener: str, key: str) -> Any:
    """A key's value for one listener: `listener.name.<l>.<key>` when set, else the broker-wide value."""
    raw = cfg.originals.get(f"listener.name.{listener.lower()}.{key}")
    if raw is not None:
        return raw
    try:
        value = cfg.get(key)
    except KeyError:
        value = cfg.originals.get(key)
    return value.value if isinstance(value, Password) else value


def _as_list(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [v.strip() for v in str(value or "").split(",") if v.strip()]


def _tls_bounds(ctx: ssl.SSLContext, protocols: list[str], key: str) -> None:
    versions = []
    for p in protocols:
        if p not in _TLS_VERSIONS:
            raise ConfigError(f"Invalid value {','.join(protocols)} for configuration {key}: pylog supports "
                              f"{', '.join(_TLS_VERSIONS)}", key=key)
        versions.append(_TLS_VERSIONS[p])
    if versions:
        ctx.minimum_version, ctx.maximum_version = min(versions), max(versions)


def _ciphers(ctx: ssl.SSLContext, suites: list[str], key: str) -> None:
    if suites:
        try:
            ctx.set_ciphers(":".join(suites))
        except ssl.SSLError:
            raise ConfigError(f"Invalid value {','.join(suites)} for configuration {key}: no usable cipher suite",
                              key=key) from None


def _keystore(ctx: ssl.SSLContext, cfg: Any, listener: str) -> bool:
    """Load the listener's keystore (PEM or PKCS12) into ctx; False when none is configured."""
    location = listener_value(cfg, listener, "ssl.keystore.location")
    if location:
        load_keystore(ctx, listener_value(cfg, listener, "ssl.keystore.type"), location,
                      listener_value(cfg, listener, "ssl.keystore.password"),
                      listener_value(cfg, listener, "ssl.key.password"))
    return bool(location)


def _truststore(ctx: ssl.SSLContext, cfg: Any, listener: str, purpose: ssl.Purpose) -> None:
    """Trust the listener's truststore (PEM or PKCS12), or the system's CAs when none is configured."""
    location = listener_value(cfg, listener, "ssl.truststore.location")
    if location:
        load_truststore(ctx, listener_value(cfg, listener, "ssl.truststore.type"), location,
                        listener_value(cfg, listener, "ssl.truststore.password"))
    else:
        ctx.load_default_certs(purpose)


def server_ssl_context(cfg: Any, listener: str) -> ssl.SSLContext:
    """The TLS context of an SSL or SASL_SSL listener (its key, trust, client auth, versions, ciphers)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    if not _keystore(ctx, cfg, listener):
        raise ConfigError(f"Listener {listener} uses TLS but ssl.keystore.location is not set", key="ssl.keystore.location")
    auth = str(listener_value(cfg, listener, "ssl.client.auth")).lower()
    if auth not in ("none", "requested", "required"):
        raise ConfigError(f"Invalid value {auth} for configuration ssl.client.auth", key="ssl.client.auth")
    if auth != "none":
        _truststore(ctx, cfg, listener, ssl.Purpose.CLIENT_AUTH)
        ctx.verify_mode = ssl.CERT_REQUIRED if auth == "required" else ssl.CERT_OPTIONAL
    _tls_bounds(ctx, _as_list(listener_value(cfg, listener, "ssl.enabled.protocols")), "ssl.enabled.protocols")
    _ciphers(ctx, _as_list(listener_value(cfg, listener, "ssl.cipher.suites")), "ssl.cipher.suites")
    return ctx


def client_ssl_context(cfg: Any, listener: str) -> ssl.SSLContext:
    """The TLS context this broker uses to reach another broker's `listener` (trust, own key, host check)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _truststore(ctx, cfg, listener, ssl.Purpose.SERVER_AUTH)
    _keystore(ctx, cfg, listener)
    ctx.check_hostname = bool(listener_value(cfg, listener, "ssl.endpoint.identification.algorithm"))
    _tls_bounds(ctx, _as_list(listener_value(cfg, listener, "ssl.enabled.protocols")), "ssl.enabled.protocols")
    return ctx


@dataclass
class ListenerSecurity:
    """How one listener authenticates its connections."""

    name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = None
    mechanisms: list[str] = field(default_factory=list)
    logins: dict[str, JaasLogin] = field(default_factory=dict, repr=False)  # by mechanism
    reauth_ms: int = 0

    @property
    def uses_sasl(self) -> bool:
        """Whether connections must authenticate with SASL first."""
        return self.protocol.startswith("SASL_")


def _sasl_settings(cfg: Any, sec: ListenerSecurity) -> None:
    sec.mechanisms = [m.upper() for m in _as_list(listener_value(cfg, sec.name, "sasl.enabled.mechanisms"))]
    unsupported = [m for m in sec.mechanisms if m not in SUPPORTED_MECHANISMS]
    if unsupported or not sec.mechanisms:
        raise ConfigError(f"Listener {sec.name} ({sec.protocol}): sasl.enabled.mechanisms="
                          f"{','.join(sec.mechanisms)} is not supported by pylog; use "
                          f"{', '.join(SUPPORTED_MECHANISMS)}", key="sasl.enabled.mechanisms")
    for mech in sec.mechanisms:
        key = f"listener.name.{sec.name.lower()}.{mech.lower()}.sasl.jaas.config"
        text = cfg.originals.get(key) or cfg.originals.get("sasl.jaas.config")
        if text is not None:
            sec.logins[mech] = parse_jaas(text, key)
        elif mech == "PLAIN":
            raise ConfigError(f"Could not find a 'KafkaServer' or '{sec.name.lower()}.KafkaServer' entry in the JAAS "
                              f"configuration. Set {key} with the PLAIN users (user_<name>=\"<password>\")", key=key)
    sec.reauth_ms = int(listener_value(cfg, sec.name, "connections.max.reauth.ms") or 0)


def build_listener_security(cfg: Any) -> dict[str, ListenerSecurity]:
    """Security settings of every listener, by name; ConfigError when one is unusable."""
    out = {}
    for lst in cfg.listeners:
        sec = ListenerSecurity(lst.name, lst.security_protocol)
        if sec.protocol in ("SSL", "SASL_SSL"):
            sec.ssl_context = server_ssl_context(cfg, lst.name)
        if sec.uses_sasl:
            _sasl_settings(cfg, sec)
        out[lst.name] = sec
    inter = out.get(cfg.inter_broker_listener_name)
    if inter is not None and inter.uses_sasl:
        mech = str(cfg.get("sasl.mechanism.inter.broker.protocol")).upper()
        if mech not in inter.mechanisms:
            raise ConfigError("sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms "
                              "when SASL is used for inter-broker communication",
                              key="sasl.mechanism.inter.broker.protocol")
        if mech not in inter.logins or inter.logins[mech].client_login is None:
            raise ConfigError(f"The inter-broker listener {inter.name} needs username and password in "
                              f"listener.name.{inter.name.lower()}.{mech.lower()}.sasl.jaas.config",
                              key="sasl.jaas.config")
    return out
