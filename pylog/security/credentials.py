"""SCRAM credentials in ZooKeeper, as ZK-mode Kafka keeps them, and the broker's cache of them.

A user's credentials live in its config entity `/config/users/<sanitized user>` as
`{"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,server_key=...,iterations=4096"}}`
next to any quota keys, and every change is announced with a `/config/changes` notification for
`users/<user>`, so brokers pick it up without a restart. Functions here block (kazoo); the broker
runs them in its executor.
"""

from __future__ import annotations

import logging
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable

from pylog.security.scram import MECHANISMS, ScramCredential

log = logging.getLogger("pylog.security")

__all__ = ["sanitize", "desanitize", "CredentialStore", "read_user_credentials", "write_user_credentials",
           "all_credential_users"]


def sanitize(user: str) -> str:
    """Kafka's Sanitizer.sanitize: the znode name for a user (URL-encoding, '*' too, '~' kept)."""
    return urllib.parse.quote(user, safe="")


def desanitize(name: str) -> str:
    """Sanitizer.desanitize: the user name of a /config/users child."""
    return urllib.parse.unquote(name)


def _credentials_of(config: dict[str, str]) -> dict[str, ScramCredential]:
    out = {}
    for mechanism in MECHANISMS:
        text = config.get(mechanism)
        if text is None:
            continue
        try:
            out[mechanism] = ScramCredential.from_text(text)
        except ValueError as exc:
            log.warning("Ignoring an unreadable %s credential in ZooKeeper: %s", mechanism, exc)
    return out


def read_user_credentials(zk: Any, user: str) -> dict[str, ScramCredential]:
    """The SCRAM credentials stored for one user, by mechanism ({} for a name no znode can have)."""
    try:
        return _credentials_of(zk.get_entity_config("users", sanitize(user)))
    except ValueError:  # "", ".", "..": not a znode name, so no credentials either
        return {}


def all_credential_users(zk: Any) -> dict[str, dict[str, ScramCredential]]:
    """Every user with at least one SCRAM credential (users nested for quotas are skipped)."""
    names = zk.get_all_entities_with_config("users")
    configs = zk.get_entity_configs("users", names)
    out = {}
    for name, config in configs.items():
        creds = _credentials_of(config)
        if creds:
            out[desanitize(name)] = creds
    return out


def write_user_credentials(zk: Any, user: str, upserts: dict[str, ScramCredential],
                           deletes: Iterable[str]) -> None:
    """Change one user's credentials, keeping its other config keys, then notify the brokers."""
    name = sanitize(user)
    config = zk.get_entity_config("users", name)
    for mechanism in deletes:
        config.pop(mechanism, None)
    for mechanism, cred in upserts.items():
        config[mechanism] = cred.to_text()
    zk.set_or_create_entity_config("users", name, config)
    zk.create_config_change_notification(f"users/{name}")


@dataclass
class CredentialStore:
    """The broker's copy of every user's SCRAM credentials, refreshed on change notifications."""

    users: dict[str, dict[str, ScramCredential]]

    @classmethod
    def empty(cls) -> "CredentialStore":
        """A store before the first load."""
        return cls({})

    def load(self, zk: Any) -> None:
        """Read every user's credentials (start-up)."""
        self.users = all_credential_users(zk)

    def reload(self, zk: Any, user_znode: str) -> None:
        """Re-read one user after a `users/<name>` notification (blocking)."""
        if "/" in user_znode:  # users/<u>/clients/<c>: a quota entity, no credentials
            return
        user = desanitize(user_znode)
        creds = read_user_credentials(zk, user)
        if creds:
            self.users[user] = creds
        else:
            self.users.pop(user, None)
        log.info("Updated SCRAM credentials of user %s (%s)", user, ", ".join(sorted(creds)) or "none")

    def lookup(self, mechanism: str, user: str) -> ScramCredential | None:
        """The credential a SCRAM exchange checks against, or None."""
        return self.users.get(user, {}).get(mechanism)
