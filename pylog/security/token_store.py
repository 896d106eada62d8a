"""Delegation tokens in ZooKeeper, as DelegationTokenManagerZk keeps them, and the broker's cache.

`/delegation_token/tokens/<tokenId>` holds each token's JSON; every write or delete is announced
with a sequential `/delegation_token/token_changes/token_change_<seq>` whose data is the token id,
so every broker re-reads that token. The cache keeps, per token, SCRAM credentials made from its
HMAC (Kafka's DelegationTokenCache: a random salt, 4096 iterations, both mechanisms), which is what
a `tokenauth=true` SCRAM exchange checks against. ZooKeeper calls block: the broker runs them in its
executor; the cache is read on the event loop (dict reads, no lock needed for them).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

from pylog.security.delegation_tokens import TokenInfo, decode_token, encode_token, hmac_text, token_hmac
from pylog.security.scram import MECHANISMS, MIN_ITERATIONS, ScramCredential, make_credential
from pylog.zk.errors import NoNodeError

log = logging.getLogger("pylog.security")

__all__ = ["TOKENS_PATH", "CHANGES_PATH", "CHANGE_PREFIX", "TokenCache", "TokenAuth", "read_token",
           "write_token", "delete_token", "all_token_ids", "purge_notifications"]

ROOT_PATH = "/delegation_token"
TOKENS_PATH = f"{ROOT_PATH}/tokens"
CHANGES_PATH = f"{ROOT_PATH}/token_changes"
CHANGE_PREFIX = "token_change_"
NOTIFICATION_EXPIRY_MS = 15 * 60 * 1000  # Kafka's changeExpirationMs


def _token_path(token_id: str) -> str:
    if not token_id or "/" in token_id or token_id in (".", ".."):
        raise ValueError(f"Invalid token id {token_id!r}")
    return f"{TOKENS_PATH}/{token_id}"


def all_token_ids(zk: Any) -> list[str]:
    """The ids under /delegation_token/tokens ([] before any token)."""
    return zk.get_children(TOKENS_PATH) if zk.exists(TOKENS_PATH) is not None else []


def read_token(zk: Any, token_id: str) -> TokenInfo | None:
    """One token from ZooKeeper, None when it is gone (or its znode is unreadable, which is logged)."""
    got = zk.get_or_none(_token_path(token_id))
    if got is None:
        return None
    try:
        return decode_token(got[0])
    except ValueError as exc:
        log.error("Ignoring delegation token %s: %s", token_id, exc)
        return None


def _notify(zk: Any, token_id: str) -> None:
    zk.ensure_path(CHANGES_PATH)
    zk.create(f"{CHANGES_PATH}/{CHANGE_PREFIX}", token_id.encode(), sequence=True)


def write_token(zk: Any, info: TokenInfo) -> None:
    """KafkaZkClient.setOrCreateDelegationToken, then the change notification."""
    path, data = _token_path(info.token_id), encode_token(info)
    if zk.exists(path) is None:
        zk.ensure_path(TOKENS_PATH)
        zk.create(path, data)
    else:
        zk.set(path, data)
    _notify(zk, info.token_id)


def delete_token(zk: Any, token_id: str) -> None:
    """Delete a token's znode (absent is fine), then the change notification."""
    path = _token_path(token_id)
    if zk.exists(path) is not None:
        zk.delete(path)
    _notify(zk, token_id)


@dataclass(frozen=True)
class TokenAuth:
    """What a tokenauth SCRAM exchange needs: the credential, whom it authenticates, until when."""

    credential: ScramCredential
    owner: str
    expiry_ms: int


class TokenCache:
    """Every live token by id and by HMAC, with its SCRAM credentials; followed through ZooKeeper."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.tokens: dict[str, TokenInfo] = {}
        self._by_hmac: dict[str, str] = {}
        self._credentials: dict[str, dict[str, ScramCredential]] = {}
        self._lock = threading.Lock()  # loads and notifications run on executor/kazoo threads
        self._notes_lock = threading.Lock()  # one notification batch at a time, in sequence order
        self._seen_seq = -1

    def hmac_of(self, token_id: str) -> bytes:
        """The token's HMAC (its password, before base64)."""
        return token_hmac(token_id, self.secret)

    def put(self, info: TokenInfo) -> None:
        """Cache a token (new or changed); credentials are made once per token id."""
        with self._lock:
            if info.token_id not in self._credentials:
                password = hmac_text(self.hmac_of(info.token_id))
                self._credentials[info.token_id] = {m: make_credential(m, password, MIN_ITERATIONS)
                                                    for m in MECHANISMS}
                self._by_hmac[password] = info.token_id
            self.tokens[info.token_id] = info

    def remove(self, token_id: str) -> None:
        """Forget a token."""
        with self._lock:
            self.tokens.pop(token_id, None)
            self._credentials.pop(token_id, None)
            self._by_hmac = {h: t for h, t in self._by_hmac.items() if t != token_id}

    def by_hmac(self, mac: bytes) -> TokenInfo | None:
        """The token a Renew/Expire request names by its HMAC."""
        token_id = self._by_hmac.get(hmac_text(mac))
        return None if token_id is None else self.tokens.get(token_id)

    def auth(self, mechanism: str, token_id: str) -> TokenAuth | None:
        """The credential a `tokenauth=true` exchange for `token_id` checks, or None."""
        info, creds = self.tokens.get(token_id), self._credentials.get(token_id, {})
        cred = creds.get(mechanism)
        return None if info is None or cred is None else TokenAuth(cred, info.owner, info.expiry_ms)

    # -- ZooKeeper (blocking) ------------------------------------------------------------------

    def load(self, zk: Any) -> None:
        """Read every token (start-up), then follow the change notifications."""
        zk.ensure_path(TOKENS_PATH)
        zk.ensure_path(CHANGES_PATH)
        existing = zk.get_children(CHANGES_PATH)
        self._seen_seq = max((_seq(c) for c in existing), default=-1)
        ids = all_token_ids(zk)
        for token_id in ids:
            info = read_token(zk, token_id)
            if info is not None:
                self.put(info)
        log.info("Loaded the delegation token cache: %d tokens", len(self.tokens))

    def watch(self, zk: Any, run_blocking: Callable[[Callable[[], None]], Any]) -> None:
        """Re-read each token a new notification names (`run_blocking` moves the reads off kazoo's thread)."""
        zk.watch_children(CHANGES_PATH, lambda children: run_blocking(lambda: self._on_changes(zk, children)))

    def _on_changes(self, zk: Any, children: list[str]) -> None:
        with self._notes_lock:
            self._apply_changes(zk, children)

    def _apply_changes(self, zk: Any, children: list[str]) -> None:
        fresh = sorted((s, c) for c in children if (s := _seq(c)) > self._seen_seq)
        for seq, child in fresh:
            got = zk.get_or_none(f"{CHANGES_PATH}/{child}")
            self._seen_seq = max(self._seen_seq, seq)
            if got is None:
                continue
            token_id = got[0].decode()
            info = read_token(zk, token_id)
            if info is None:
                self.remove(token_id)
            else:
                self.put(info)
            log.info("Processed delegation token notification for %s (%s)", token_id,
                     "removed" if info is None else "updated")


def purge_notifications(zk: Any, now_ms: int, max_age_ms: int = NOTIFICATION_EXPIRY_MS) -> int:
    """Delete token change notifications older than 15 minutes (ZkNodeChangeNotificationListener's purge);
    how many. Every broker purges; one that finds a notification already gone skips it."""
    gone = 0
    for child in zk.get_children(CHANGES_PATH) if zk.exists(CHANGES_PATH) is not None else []:
        stat = zk.exists(f"{CHANGES_PATH}/{child}")
        if stat is not None and now_ms - stat.ctime > max_age_ms:
            try:
                zk.delete(f"{CHANGES_PATH}/{child}")
                gone += 1
            except NoNodeError:
                continue
    return gone


def _seq(child: str) -> int:
    digits = child[len(CHANGE_PREFIX):]
    return int(digits) if child.startswith(CHANGE_PREFIX) and digits.isdigit() else -1
