"""AlterUserScramCredentials / DescribeUserScramCredentials semantics (KIP-554) over ZooKeeper.

Results are per user, not per change: a user's changes are checked together and written together
(one znode write, one notification), and one bad change fails all of that user's changes, with
Kafka's error codes and messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from pylog.common.errors import ErrorCode
from pylog.security.credentials import all_credential_users, read_user_credentials, write_user_credentials
from pylog.security.scram import (MAX_ITERATIONS, MECHANISM_CODES, MECHANISMS, MIN_ITERATIONS,
                                  credential_from_salted)

__all__ = ["Upsertion", "Deletion", "alter_credentials", "describe_credentials", "mechanism_name"]

_NAMES = {code: name for name, code in MECHANISM_CODES.items()}


def mechanism_name(code: int) -> str | None:
    """The mechanism name for an API code (1, 2), None for UNKNOWN."""
    return _NAMES.get(code)


@dataclass(frozen=True)
class Upsertion:
    """Set a credential from a salted password (what the API carries)."""

    user: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes


@dataclass(frozen=True)
class Deletion:
    """Remove one mechanism's credential of a user."""

    user: str
    mechanism: int


def _check(change: Upsertion | Deletion, existing: dict[str, Any]) -> tuple[int, str] | None:
    if not change.user:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    name = mechanism_name(change.mechanism)
    if name is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if isinstance(change, Deletion):
        if name not in existing:
            return ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
    elif change.iterations < MIN_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    elif change.iterations > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


def alter_credentials(zk: Any, changes: Iterable[Upsertion | Deletion]) -> dict[str, tuple[int, str | None]]:
    """Apply the changes; {user: (error code, message)} in the order users first appear (blocking)."""
    by_user: dict[str, list[Upsertion | Deletion]] = {}
    for change in changes:
        by_user.setdefault(change.user, []).append(change)
    results: dict[str, tuple[int, str | None]] = {}
    for user, mine in by_user.items():
        keys = [(c.mechanism) for c in mine]
        if len(set(keys)) != len(keys):
            results[user] = (ErrorCode.DUPLICATE_RESOURCE,
                             "A user credential cannot be altered twice in the same request")
            continue
        existing = read_user_credentials(zk, user) if user else {}
        error = next((e for e in (_check(c, existing) for c in mine) if e is not None), None)
        if error is not None:
            results[user] = error
            continue
        upserts = {mechanism_name(c.mechanism): credential_from_salted(
            mechanism_name(c.mechanism), c.salted_password, c.salt, c.iterations)
            for c in mine if isinstance(c, Upsertion)}
        deletes = [mechanism_name(c.mechanism) for c in mine if isinstance(c, Deletion)]
        try:
            write_user_credentials(zk, user, upserts, deletes)  # type: ignore[arg-type]
        except ValueError as exc:  # a name no znode can have ("." or "..")
            results[user] = (ErrorCode.UNACCEPTABLE_CREDENTIAL, str(exc))
            continue
        results[user] = (ErrorCode.NONE, None)
    return results


def describe_credentials(zk: Any, users: list[str] | None) -> list[tuple[str, int, str | None, list[tuple[int, int]]]]:
    """(user, error code, message, [(mechanism code, iterations)]) per user; None/[] means all (blocking)."""
    if not users:
        everyone = all_credential_users(zk)
        return [(u, ErrorCode.NONE, None, _infos(everyone[u])) for u in sorted(everyone)]
    out = []
    seen: set[str] = set()
    duplicates = {u for u in users if users.count(u) > 1}
    for user in users:
        if user in seen:
            continue
        seen.add(user)
        if user in duplicates:
            out.append((user, ErrorCode.DUPLICATE_RESOURCE,
                        "Cannot describe SCRAM credentials for the same user twice in a single request", []))
            continue
        creds = read_user_credentials(zk, user)
        if not creds:
            out.append((user, ErrorCode.RESOURCE_NOT_FOUND,
                        "Attempt to describe a user credential that does not exist", []))
        else:
            out.append((user, ErrorCode.NONE, None, _infos(creds)))
    return out


def _infos(creds: dict[str, Any]) -> list[tuple[int, int]]:
    return [(MECHANISM_CODES[m], creds[m].iterations) for m in MECHANISMS if m in creds]
