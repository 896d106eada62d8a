"""The server side of SASL on one connection: SaslHandshake, then SaslAuthenticate rounds (KIP-152).

Pure state, no I/O: the broker's handlers feed it what the client sent and send back what it
answers. Mechanisms: PLAIN (RFC 4616, users from the listener's JAAS `user_<name>` options) and
SCRAM-SHA-256/512 (credentials from ZooKeeper). Before authentication only ApiVersions,
SaslHandshake and SaslAuthenticate are allowed; a failure answers SASL_AUTHENTICATION_FAILED and
closes the connection. With connections.max.reauth.ms the session expires and the client must
re-authenticate on the same connection (KIP-368) with the same principal.
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Any, Callable

from pylog.common.errors import ErrorCode, KafkaError
from pylog.security.scram import MECHANISMS as SCRAM_MECHANISMS
from pylog.security.scram import ScramError, ScramServer
from pylog.security.settings import ListenerSecurity

log = logging.getLogger("pylog.security")

__all__ = ["SaslSession", "SaslFailure", "PRE_AUTH_APIS"]

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
PRE_AUTH_APIS = frozenset((API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE))


class SaslFailure(KafkaError):
    """Authentication failed: `code` and `message` go to the client, then the connection closes."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message, code=code)


class _Plain:
    """RFC 4616: one message `authzid NUL authcid NUL password`."""

    def __init__(self, users: dict[str, str]) -> None:
        self.users, self.username, self.complete = users, None, False

    def step(self, token: bytes) -> bytes:
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise ScramError("Invalid SASL/PLAIN response: expected 3 tokens, got " + str(len(parts)))
        try:
            authzid, user, password = (p.decode() for p in parts)
        except UnicodeDecodeError:
            raise ScramError("Invalid SASL/PLAIN response: not UTF-8") from None
        if not user or not password:
            raise ScramError("Authentication failed: username or password not specified")
        expected = self.users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise ScramError("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise ScramError("Authentication failed: Client requested an authorization id that is different from "
                             "username")
        self.username, self.complete = user, True
        return b""


class _Scram:
    """Two rounds: client-first -> server-first, client-final -> server-final."""

    def __init__(self, mechanism: str, lookup: Callable[[str, str], Any],
                 token_lookup: Callable[[str, str], Any] | None) -> None:
        tokens = None if token_lookup is None else (lambda token_id: token_lookup(mechanism, token_id))
        self.server = ScramServer(mechanism, lambda user: lookup(mechanism, user), tokens)
        self.round = 0

    @property
    def username(self) -> str | None:
        """Whom the client is: a token's owner (by name, as Kafka's DelegationTokenCache.owner) or the user."""
        owner = self.server.token_owner
        return self.server.username if owner is None else owner.partition(":")[2]

    @property
    def token_expiry_ms(self) -> int | None:
        """With token authentication, when the token expires (the session may not outlive it)."""
        return self.server.token_expiry_ms

    @property
    def complete(self) -> bool:
        return self.server.complete

    def step(self, token: bytes) -> bytes:
        self.round += 1
        return self.server.first(token) if self.round == 1 else self.server.final(token)


def _session_lifetime_ms(reauth_ms: int, credential_expiry_ms: int | None) -> int:
    """SaslServerAuthenticator's session lifetime: connections.max.reauth.ms, and a token's expiry (even
    without re-authentication: a token-authenticated session ends when the token does); 0 = none."""
    if credential_expiry_ms is None:
        return max(reauth_ms, 0)
    left = max(credential_expiry_ms - int(time.time() * 1000), 0)
    return max(min(left, reauth_ms) if reauth_ms > 0 else left, 1)


class SaslSession:
    """SASL state of one connection on a SASL listener."""

    def __init__(self, listener: ListenerSecurity, lookup: Callable[[str, str], Any], peer: str,
                 token_lookup: Callable[[str, str], Any] | None = None) -> None:
        self.listener, self.lookup, self.peer, self.token_lookup = listener, lookup, peer, token_lookup
        self.principal: str | None = None  # "User:<name>" once authenticated
        self.token_authenticated = False  # authenticated with a delegation token (KafkaPrincipal.tokenAuthenticated)
        self.expires_at: float | None = None  # monotonic seconds; None = never
        self._mechanism: Any = None
        self._mechanism_name = ""
        self._reauthenticating = False

    @property
    def authenticated(self) -> bool:
        """Whether requests other than the SASL ones may be served."""
        return self.principal is not None and self._mechanism is None

    def expired(self) -> bool:
        """Whether the session outlived connections.max.reauth.ms without re-authentication."""
        return self.expires_at is not None and time.monotonic() > self.expires_at

    def handshake(self, version: int, mechanism: str) -> tuple[int, list[str]]:
        """SaslHandshake: (error code, enabled mechanisms); starts (re-)authentication."""
        enabled = self.listener.mechanisms
        if self._mechanism is not None:
            return ErrorCode.ILLEGAL_SASL_STATE, enabled
        if self.principal is not None and (version < 1 or self.listener.reauth_ms <= 0):
            return ErrorCode.ILLEGAL_SASL_STATE, enabled
        if mechanism not in enabled:
            raise SaslFailure(ErrorCode.UNSUPPORTED_SASL_MECHANISM, f"Unsupported SASL mechanism {mechanism}")
        if mechanism == "PLAIN":
            self._mechanism = _Plain(self.listener.logins["PLAIN"].users)
        elif mechanism in SCRAM_MECHANISMS:
            self._mechanism = _Scram(mechanism, self.lookup, self.token_lookup)
        self._mechanism_name = mechanism
        self._reauthenticating = self.principal is not None
        return ErrorCode.NONE, enabled

    def authenticate(self, token: bytes) -> tuple[bytes, int]:
        """One SaslAuthenticate round: (server bytes, session lifetime ms); SaslFailure when it fails."""
        mech = self._mechanism
        if mech is None:
            raise SaslFailure(ErrorCode.ILLEGAL_SASL_STATE,
                              "Unexpected SaslAuthenticate request: no SaslHandshake first")
        try:
            reply = mech.step(bytes(token))
        except (ScramError, ValueError) as exc:
            log.info("Failed authentication with %s (%s)", self.peer, exc)
            self._mechanism = None
            raise SaslFailure(ErrorCode.SASL_AUTHENTICATION_FAILED, str(exc)) from None
        if not mech.complete:
            return reply, 0
        principal = f"User:{mech.username}"
        self._mechanism = None
        if self._reauthenticating and principal != self.principal:
            log.info("Failed re-authentication with %s: principal changed from %s to %s", self.peer,
                     self.principal, principal)
            raise SaslFailure(ErrorCode.SASL_AUTHENTICATION_FAILED,
                              f"Cannot change principals during re-authentication from {self.principal}: {principal}")
        self.principal = principal
        token_expiry = getattr(mech, "token_expiry_ms", None)
        self.token_authenticated = token_expiry is not None
        lifetime = _session_lifetime_ms(self.listener.reauth_ms, token_expiry)
        self.expires_at = time.monotonic() + lifetime / 1000 if lifetime > 0 else None
        log.debug("Authenticated %s as %s with %s", self.peer, principal, self._mechanism_name)
        return reply, lifetime
