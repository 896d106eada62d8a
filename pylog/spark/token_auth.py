"""Delegation tokens for the data source's kafka-python clients (Spark's `kafka.sasl.jaas.config`).

Spark's Kafka connector hands its executors a delegation token as a JAAS login:
`ScramLoginModule required tokenauth=true username="<token id>" password="<HMAC>";`. Kafka's Java client
then adds the SCRAM extension `tokenauth=true` to its first message, which tells the broker to check the
token instead of a user. kafka-python has no such option, so the token id travels as a `DelegationTokenId`
(a str, so every other use of the username is unchanged) and the SCRAM mechanisms registered here add the
extension for it. Importing this module registers them (an unpickled DelegationTokenId imports it too, so
executors get them without further set-up); other usernames authenticate exactly as before.
"""

from __future__ import annotations

from typing import Any

from kafka.net.sasl import register_sasl_mechanism
from kafka.net.sasl.scram import SaslMechanismScram, ScramClient

from pylog.common.jaas import parse_jaas

__all__ = ["DelegationTokenId", "TokenAwareScram", "jaas_client_config"]

TOKEN_AUTH = b",tokenauth=true"


class DelegationTokenId(str):
    """A SCRAM username that is a delegation token's id."""

    __slots__ = ()


class _TokenScramClient(ScramClient):
    """kafka-python's SCRAM client with the extension in client-first (it is part of the signed message)."""

    def first_message(self) -> bytes:
        bare = b"n=" + self.user + b",r=" + self.nonce + TOKEN_AUTH
        self.auth_message += bare
        return b"n,," + bare


class TokenAwareScram(SaslMechanismScram):
    """SCRAM-SHA-256/512 that authenticates with a delegation token when the username is a DelegationTokenId."""

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        user = config.get("sasl_plain_username")
        if isinstance(user, DelegationTokenId):
            self._scram_client = _TokenScramClient(user, config["sasl_plain_password"], config["sasl_mechanism"])


def jaas_client_config(text: str) -> dict[str, Any]:
    """`sasl.jaas.config` (PLAIN or SCRAM login module) -> kafka-python's sasl_plain_username/password."""
    login = parse_jaas(text, "kafka.sasl.jaas.config")
    if login.client_login is None:
        raise ValueError(f"option \"kafka.sasl.jaas.config\" ({login.module}) names no username and password")
    user, password = login.client_login
    if str(login.options.get("tokenauth", "")).lower() == "true":
        user = DelegationTokenId(user)
    return {"sasl_plain_username": user, "sasl_plain_password": password}


for _mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
    register_sasl_mechanism(_mechanism, TokenAwareScram, overwrite=True)
