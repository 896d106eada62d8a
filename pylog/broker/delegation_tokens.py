"""The broker's delegation token manager (Kafka's DelegationTokenManagerZk): create, renew, expire, describe.

Any broker serves the token APIs (ZK mode forwards nothing to the controller): it decides with the
pure rules of `security/delegation_tokens.py`, writes `/delegation_token/tokens/<id>` with a change
notification, and updates its own cache at once; the other brokers follow the notification. A
background task removes expired tokens every `delegation.token.expiry.check.interval.ms`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Coroutine

from pylog.common.configdef import Password
from pylog.common.errors import ErrorCode
from pylog.security.connection import ANONYMOUS
from pylog.security.delegation_tokens import (
    ERROR_TIMESTAMP, TokenInfo, TokenSettings, create_token, expire_token, is_expired, renew_token,
)
from pylog.security.token_store import TokenAuth, TokenCache, delete_token, purge_notifications, write_token

log = logging.getLogger("pylog.broker")

__all__ = ["DelegationTokenManager", "token_settings", "token_requests_allowed"]


def _secret(value: Any) -> str:
    return (value.value if isinstance(value, Password) else value) or ""


def token_settings(cfg: Any) -> TokenSettings:
    """The token keys of a broker config; the old `delegation.token.master.key` when the secret key is unset."""
    secret = _secret(cfg.get("delegation.token.secret.key")) or _secret(cfg.get("delegation.token.master.key"))
    return TokenSettings(secret, int(cfg.get("delegation.token.max.lifetime.ms")),
                         int(cfg.get("delegation.token.expiry.time.ms")))


def _now_ms() -> int:
    return int(time.time() * 1000)


class DelegationTokenManager:
    """Tokens of the cluster as this broker sees them, and the changes its handlers make."""

    def __init__(self, cfg: Any, zk: Any, spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task]) -> None:
        self.settings = token_settings(cfg)
        self.check_interval_ms = int(cfg.get("delegation.token.expiry.check.interval.ms"))
        self.zk, self.spawn = zk, spawn
        self.cache = TokenCache(self.settings.secret)
        self._lock = asyncio.Lock()  # one change at a time on this broker, as Kafka's manager lock

    @property
    def enabled(self) -> bool:
        """Whether a secret key is set (otherwise every token API answers DELEGATION_TOKEN_AUTH_DISABLED)."""
        return self.settings.enabled

    async def _blocking(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def start(self) -> None:
        """Load the tokens and follow their changes (only with a secret key, as Kafka)."""
        if not self.enabled:
            return
        await self._blocking(self.cache.load, self.zk)
        loop = asyncio.get_running_loop()

        def run_blocking(fn: Callable[[], None]) -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(lambda: self.spawn(self._locked(fn)))
        await self._blocking(self.cache.watch, self.zk, run_blocking)
        self.spawn(self._expiry_loop())

    async def _locked(self, fn: Callable[[], None]) -> None:
        # A notification is applied under the lock of this broker's own changes, as Kafka's handler is: read
        # before a renewal or an expiry and cached after it, a token would come back with its old expiry, or
        # come back at all, until the next notification.
        async with self._lock:
            await self._blocking(fn)

    def auth(self, mechanism: str, token_id: str) -> TokenAuth | None:
        """For SCRAM's `tokenauth=true`: the token's credential and owner (None when disabled or unknown)."""
        return self.cache.auth(mechanism, token_id) if self.enabled else None

    async def _store(self, info: TokenInfo) -> None:
        await self._blocking(write_token, self.zk, info)
        self.cache.put(info)

    async def _remove(self, token_id: str) -> None:
        await self._blocking(delete_token, self.zk, token_id)
        self.cache.remove(token_id)

    async def create(self, owner: str, requester: str, renewers: list[str], max_lifetime_ms: int) -> TokenInfo:
        """A new token, stored and announced."""
        async with self._lock:
            info = create_token(self.settings, owner, requester, renewers, max_lifetime_ms, _now_ms())
            await self._store(info)
        log.info("Created a delegation token: %s for owner: %s", info.token_id, owner)
        return info

    async def renew(self, principal: str, mac: bytes, period_ms: int) -> tuple[ErrorCode, int]:
        """(error, new expiry) for a renewal by `principal`."""
        async with self._lock:
            info = self.cache.by_hmac(mac)
            if info is None:
                return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, ERROR_TIMESTAMP
            code, renewed, expiry = renew_token(self.settings, info, principal, period_ms, _now_ms())
            if renewed is not None:
                await self._store(renewed)
                log.info("Delegation token renewed for token: %s for owner: %s", info.token_id, info.owner)
            return code, expiry

    async def expire(self, principal: str, mac: bytes, period_ms: int) -> tuple[ErrorCode, int]:
        """(error, new expiry) for an expiry by `principal`; a negative period deletes the token now."""
        async with self._lock:
            info = self.cache.by_hmac(mac)
            if info is None:
                return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, ERROR_TIMESTAMP
            code, changed, expiry = expire_token(info, principal, period_ms, _now_ms())
            if code == ErrorCode.NONE and changed is None:
                await self._remove(info.token_id)
                log.info("Token expired for token: %s for owner: %s", info.token_id, info.owner)
            elif changed is not None:
                await self._store(changed)
                log.info("Updated expiry time for token: %s for owner: %s", info.token_id, info.owner)
            return code, expiry

    def tokens(self) -> list[TokenInfo]:
        """Every cached token."""
        return list(self.cache.tokens.values())

    async def remove_expired(self) -> int:
        """Delete the tokens past their expiry or max lifetime; how many."""
        async with self._lock:
            now = _now_ms()
            gone = [t for t in self.cache.tokens.values() if is_expired(t, now)]
            for info in gone:
                log.info("Delegation token expired for token: %s for owner: %s", info.token_id, info.owner)
                await self._remove(info.token_id)
        return len(gone)

    async def _expiry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.check_interval_ms / 1000)
            try:
                await self.remove_expired()
                await self._blocking(purge_notifications, self.zk, _now_ms())
            except Exception:  # ZooKeeper away: the next round retries
                log.warning("Could not remove expired delegation tokens", exc_info=True)


def token_requests_allowed(security: Any) -> bool:
    """KafkaApis.allowTokenRequests: not on PLAINTEXT, not from 1-way SSL (anonymous), not with a token."""
    if security is None:  # the broker's own in-process call
        return True
    protocol = security.protocol
    if protocol is None or security.token_authenticated or protocol == "PLAINTEXT":
        return False
    return not (protocol == "SSL" and security.principal == ANONYMOUS)
