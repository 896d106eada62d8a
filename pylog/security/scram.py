"""SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677): credentials and both sides of the exchange.

Pure code, no I/O. A credential is what Kafka stores in ZooKeeper (salt, stored key, server key,
iterations; never the password) in ScramCredentialUtils' text form
`salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`. The server side checks a client's
proof against a stored credential; the client side (the broker talking to another broker, tools,
tests) proves knowledge of a password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from dataclasses import dataclass

__all__ = ["MECHANISMS", "MECHANISM_CODES", "MIN_ITERATIONS", "MAX_ITERATIONS", "ScramCredential",
           "ScramError", "ScramServer", "ScramClient", "make_credential", "credential_from_salted",
           "TOKEN_AUTH_EXTENSION"]

# Kafka's ScramMechanism: name -> hash, and the codes the admin APIs carry.
MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISM_CODES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384  # ScramMechanism.minIterations / Kafka's upper bound
DEFAULT_ITERATIONS = 4096  # ConfigCommand's default when --add-config gives none
TOKEN_AUTH_EXTENSION = "tokenauth"  # ScramLoginModule's extension: authenticate with a delegation token


class ScramError(Exception):
    """The exchange failed; the message is safe to log (it never holds a secret)."""


@dataclass(frozen=True)
class ScramCredential:
    """What the server keeps for one user and mechanism."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_text(self) -> str:
        """Kafka's ScramCredentialUtils.credentialToString form."""
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        return (f"salt={b64(self.salt)},stored_key={b64(self.stored_key)},server_key={b64(self.server_key)},"
                f"iterations={self.iterations}")

    @classmethod
    def from_text(cls, text: str) -> "ScramCredential":
        """Parse ScramCredentialUtils' form; ValueError when a field is missing or malformed."""
        fields = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
        try:
            return cls(base64.b64decode(fields["salt"], validate=True),
                       base64.b64decode(fields["stored_key"], validate=True),
                       base64.b64decode(fields["server_key"], validate=True), int(fields["iterations"]))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"Invalid SCRAM credential: {exc}") from None


def _h(mechanism: str) -> str:
    try:
        return MECHANISMS[mechanism]
    except KeyError:
        raise ScramError(f"Unsupported SCRAM mechanism {mechanism}") from None


def _hmac(algo: str, key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, algo).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, i): PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(_h(mechanism), password.encode(), salt, iterations)


def credential_from_salted(mechanism: str, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
    """The stored credential for a salted password (AlterUserScramCredentials sends only that)."""
    algo = _h(mechanism)
    client_key = _hmac(algo, salted, b"Client Key")
    return ScramCredential(salt, hashlib.new(algo, client_key).digest(), _hmac(algo, salted, b"Server Key"),
                           iterations)


def make_credential(mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS,
                    salt: bytes | None = None) -> ScramCredential:
    """A new credential for a password, with a random salt unless one is given."""
    salt = os.urandom(32) if salt is None else salt
    return credential_from_salted(mechanism, salted_password(mechanism, password, salt, iterations), salt,
                                  iterations)


def _escape(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def _unescape(name: str) -> str:
    if re.search(r"=(?!2C|3D)", name):
        raise ScramError("Invalid username encoding")
    return name.replace("=2C", ",").replace("=3D", "=")


def _attrs(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"Invalid SCRAM message attribute {part[:1]!r}")
        out.setdefault(part[0], part[2:])
    return out


def _first_bare(bare: str) -> tuple[dict[str, str], dict[str, str]]:
    """client-first-message-bare: `[m=...,]n=user,r=nonce[,ext=value]*` -> (attributes, extensions)."""
    parts = bare.split(",")
    if parts and parts[0].startswith("m="):  # reserved-mext: Kafka's pattern allows and ignores it
        parts = parts[1:]
    attrs = _attrs(",".join(parts[:2]))
    extensions = {}
    for part in parts[2:]:
        key, sep, value = part.partition("=")
        if not sep or not key.isalpha():
            raise ScramError("Invalid SCRAM client first message")
        extensions[key] = value
    return attrs, extensions


_NONCE = re.compile(r"[\x21-\x2b\x2d-\x7e]+")  # printable except ','


def _nonce() -> str:
    return base64.b64encode(os.urandom(24)).decode().rstrip("=").replace("+", "-").replace("/", "_")


class ScramServer:
    """The broker's side of one exchange: feed each client message, get the reply.

    `lookup(username)` returns the user's credential for this mechanism or None. An unknown user
    gets the same kind of server-first message as a known one (a random salt), so a client cannot
    tell "no such user" from "wrong password"; both fail at the proof.
    """

    def __init__(self, mechanism: str, lookup, token_lookup=None) -> None:
        self.mechanism, self.algo, self.lookup = mechanism, _h(mechanism), lookup
        self.token_lookup = token_lookup  # token id -> TokenAuth-like (credential, owner, expiry_ms) or None
        self.username: str | None = None
        self.extensions: dict[str, str] = {}
        self.token_owner: str | None = None  # with tokenauth=true: the token's owner, whom the client acts as
        self.token_expiry_ms: int | None = None
        self._cred: ScramCredential | None = None
        self._first_bare = self._server_first = self._nonce = ""
        self.complete = False

    def first(self, message: bytes) -> bytes:
        """client-first-message -> server-first-message."""
        try:
            text = message.decode()
        except UnicodeDecodeError:
            raise ScramError("Invalid SCRAM client first message") from None
        gs2, sep, bare = text.partition(",")
        authzid, sep2, bare = bare.partition(",")
        if not sep or not sep2 or gs2 not in ("n", "y") or (authzid and not authzid.startswith("a=")):
            raise ScramError("Invalid SCRAM client first message")
        attrs, self.extensions = _first_bare(bare)
        if "n" not in attrs or "r" not in attrs or not _NONCE.fullmatch(attrs["r"]):
            raise ScramError("Invalid SCRAM client first message")
        self.username = _unescape(attrs["n"])
        if authzid and _unescape(authzid[2:]) != self.username:
            raise ScramError("Authentication failed: Client requested an authorization id that is different "
                             "from username")
        cred = self._token_credential() if self.token_authenticated else self.lookup(self.username)
        self._cred = cred
        salt, iterations = (cred.salt, cred.iterations) if cred else (os.urandom(32), MIN_ITERATIONS)
        self._first_bare = bare
        self._nonce = attrs["r"] + _nonce()
        self._server_first = f"r={self._nonce},s={base64.b64encode(salt).decode()},i={iterations}"
        return self._server_first.encode()

    @property
    def token_authenticated(self) -> bool:
        """Whether the client asked to authenticate with a delegation token (the `tokenauth=true` extension)."""
        return self.extensions.get(TOKEN_AUTH_EXTENSION, "").lower() == "true"

    def _token_credential(self) -> ScramCredential:
        """A token's credential: an unknown token fails at once, as Kafka's ScramSaslServer does."""
        auth = None if self.token_lookup is None else self.token_lookup(self.username)
        if auth is None:
            raise ScramError(f"Token Authentication failed: Invalid tokenId : {self.username}")
        self.token_owner, self.token_expiry_ms = auth.owner, auth.expiry_ms
        return auth.credential

    def final(self, message: bytes) -> bytes:
        """client-final-message -> server-final-message; ScramError when the proof is wrong."""
        try:
            text = message.decode()
        except UnicodeDecodeError:
            raise ScramError("Invalid SCRAM client final message") from None
        without_proof, sep, proof_part = text.rpartition(",p=")
        attrs = _attrs(without_proof) if sep else {}
        if not sep or "c" not in attrs:
            raise ScramError("Invalid SCRAM client final message")
        # Kafka's check is endsWith, not equality: librdkafka sends the client nonce again in front of
        # the combined nonce, and its proof covers the message as sent.
        if not attrs.get("r", "").endswith(self._nonce):
            raise ScramError("Invalid SCRAM client final message: the nonce does not match")
        cred = self._cred
        if cred is None:
            raise ScramError(f"Authentication failed during authentication due to invalid credentials with SASL "
                             f"mechanism {self.mechanism}")
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise ScramError("Invalid SCRAM client final message: the proof is not base64") from None
        signature = _hmac(self.algo, cred.stored_key, auth_message)
        if len(proof) != len(signature):
            raise ScramError("Invalid SCRAM client final message: the proof has the wrong length")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(self.algo, client_key).digest(), cred.stored_key):
            raise ScramError(f"Authentication failed during authentication due to invalid credentials with SASL "
                             f"mechanism {self.mechanism}")
        self.complete = True
        server_sig = _hmac(self.algo, cred.server_key, auth_message)
        return f"v={base64.b64encode(server_sig).decode()}".encode()


class ScramClient:
    """A client's side of one exchange (broker-to-broker connections, tools)."""

    def __init__(self, mechanism: str, username: str, password: str, token_auth: bool = False) -> None:
        self.mechanism, self.algo = mechanism, _h(mechanism)
        self.username, self.password = username, password
        self._nonce = _nonce()
        # A delegation token's id and HMAC are sent as user and password, with Kafka's extension.
        extension = f",{TOKEN_AUTH_EXTENSION}=true" if token_auth else ""
        self._first_bare = f"n={_escape(username)},r={self._nonce}{extension}"
        self._auth_message = b""
        self._salted = b""

    def first(self) -> bytes:
        """client-first-message."""
        return f"n,,{self._first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        """server-first-message -> client-final-message."""
        attrs = _attrs(server_first.decode())
        nonce, salt, iterations = attrs.get("r", ""), base64.b64decode(attrs.get("s", "")), int(attrs.get("i", "0"))
        if not nonce.startswith(self._nonce) or iterations < 1:
            raise ScramError("Invalid SCRAM server first message")
        self._salted = salted_password(self.mechanism, self.password, salt, iterations)
        without_proof = f"c=biws,r={nonce}"
        self._auth_message = f"{self._first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = _hmac(self.algo, self._salted, b"Client Key")
        signature = _hmac(self.algo, hashlib.new(self.algo, client_key).digest(), self._auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        """Check the server's signature (mutual authentication); ScramError if it is wrong."""
        attrs = _attrs(server_final.decode())
        if "e" in attrs:
            raise ScramError(f"SCRAM authentication failed: {attrs['e']}")
        expected = _hmac(self.algo, _hmac(self.algo, self._salted, b"Server Key"), self._auth_message)
        if not hmac.compare_digest(base64.b64decode(attrs.get("v", "")), expected):
            raise ScramError("Invalid server signature in SCRAM server final message")
