"""Who is on the other end of one connection: its listener, principal and SASL state.

Principals follow Kafka's DefaultKafkaPrincipalBuilder: `User:ANONYMOUS` on PLAINTEXT (and on TLS
without a client certificate), `User:<subject DN>` for a TLS client certificate (RFC 2253 order,
as Java's X500Principal.getName() prints it), `User:<name>` after SASL.
"""

from __future__ import annotations

from typing import Any, Callable

from pylog.protocol.api import api_name
from pylog.security.sasl import PRE_AUTH_APIS, SaslSession
from pylog.security.settings import ListenerSecurity

__all__ = ["ANONYMOUS", "ConnectionSecurity", "certificate_principal"]

ANONYMOUS = "User:ANONYMOUS"
_DN_KEYS = {"commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O", "localityName": "L",
            "stateOrProvinceName": "ST", "countryName": "C", "streetAddress": "STREET", "domainComponent": "DC",
            "userId": "UID"}


def _escape_dn_value(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;=' else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    return out[:-1] + "\\ " if out.endswith(" ") else out


def certificate_principal(cert: dict | None) -> str:
    """`User:CN=alice,OU=eng,O=org` from ssl.getpeercert(), ANONYMOUS without a certificate."""
    if not cert or not cert.get("subject"):
        return ANONYMOUS
    rdns = []
    for rdn in reversed(cert["subject"]):  # RFC 2253 lists the most specific RDN first
        rdns.append("+".join(f"{_DN_KEYS.get(k, k)}={_escape_dn_value(v)}" for k, v in rdn))
    return "User:" + ",".join(rdns)


class ConnectionSecurity:
    """A connection's security state; the socket server asks it before serving each request."""

    __slots__ = ("listener", "principal", "sasl", "close_after_reply")

    def __init__(self, listener: ListenerSecurity | None, peer: str, peercert: dict | None,
                 lookup: Callable[[str, str], Any], token_lookup: Callable[[str, str], Any] | None = None) -> None:
        self.listener = listener
        self.principal = ANONYMOUS
        if listener is not None and listener.protocol == "SSL":
            self.principal = certificate_principal(peercert)
        self.sasl = (SaslSession(listener, lookup, peer, token_lookup)
                     if listener is not None and listener.uses_sasl else None)
        self.close_after_reply = False  # a failed authentication: answer, then close

    @property
    def listener_name(self) -> str | None:
        """The listener the connection came in on (None for the broker's own in-process calls)."""
        return None if self.listener is None else self.listener.name

    @property
    def token_authenticated(self) -> bool:
        """Whether the client authenticated with a delegation token (it may not manage tokens then)."""
        return self.sasl is not None and self.sasl.token_authenticated

    @property
    def protocol(self) -> str | None:
        """The listener's security protocol (None for in-process calls)."""
        return None if self.listener is None else self.listener.protocol

    def refuse(self, api_key: int) -> str | None:
        """Why a request may not be served now (the connection then closes), or None."""
        sasl = self.sasl
        if sasl is None or api_key in PRE_AUTH_APIS:
            return None
        if not sasl.authenticated:
            return f"Unexpected Kafka request of type {api_name(api_key).upper()} during SASL handshake"
        if sasl.expired():
            return "the SASL session expired (connections.max.reauth.ms) without re-authentication"
        self.principal = sasl.principal or ANONYMOUS
        return None
