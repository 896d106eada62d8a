"""The client side of SASL mechanisms, for connections this broker (or a tool) opens to a broker.

Each object answers `step(challenge)` with the next token to send, or None when the exchange is
over; a bad server answer raises ScramError.
"""

from __future__ import annotations

from pylog.security.scram import ScramClient, ScramError

__all__ = ["PlainClient", "ScramClientMechanism", "client_mechanism"]


class PlainClient:
    """PLAIN: one token, `NUL user NUL password`."""

    def __init__(self, username: str, password: str) -> None:
        self.mechanism = "PLAIN"
        self._token: bytes | None = b"\x00" + username.encode() + b"\x00" + password.encode()

    def step(self, challenge: bytes | None) -> bytes | None:
        """The credentials first, then nothing."""
        token, self._token = self._token, None
        return token


class ScramClientMechanism:
    """SCRAM-SHA-256/512: client-first, client-final, then check the server's signature."""

    def __init__(self, mechanism: str, username: str, password: str, token_auth: bool = False) -> None:
        self.mechanism = mechanism
        self._client = ScramClient(mechanism, username, password, token_auth)
        self._round = 0

    def step(self, challenge: bytes | None) -> bytes | None:
        """client-first; client-final for the server-first; None after verifying server-final."""
        self._round += 1
        if self._round == 1:
            return self._client.first()
        if self._round == 2 and challenge is not None:
            return self._client.final(challenge)
        if self._round == 3 and challenge is not None:
            self._client.verify(challenge)
            return None
        raise ScramError("Unexpected SCRAM server message")


def client_mechanism(mechanism: str, username: str, password: str,
                     token_auth: bool = False) -> PlainClient | ScramClientMechanism:
    """A fresh client mechanism object by name (SCRAM with `tokenauth=true` when token_auth)."""
    if mechanism == "PLAIN":
        return PlainClient(username, password)
    return ScramClientMechanism(mechanism, username, password, token_auth)
