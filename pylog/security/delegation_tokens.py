"""Delegation tokens (KIP-48) as ZK-mode Kafka 3.9 keeps and judges them; pure code, no I/O.

A token is its id (a random UUID in URL-safe base64), the owner, the requester, the renewers and
three timestamps. Its password is HMAC-SHA512(secret key, token id), which any broker recomputes
from `delegation.token.secret.key`, so the znode `/delegation_token/tokens/<id>` never holds it.
A client authenticates with SCRAM as user = token id, password = base64(HMAC), sending the SCRAM
extension `tokenauth=true`; it then acts as the token's owner. The decisions here (create, renew,
expire, who may see what) follow DelegationTokenManagerZk and KafkaApis.
"""

from __future__ import annotations

import base64
import hashlib
import hmac as _hmac
import json
import uuid
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from pylog.common.errors import ErrorCode
from pylog.security.credentials import desanitize, sanitize

__all__ = ["TokenInfo", "TokenSettings", "token_hmac", "hmac_text", "new_token_id", "encode_token",
           "decode_token", "create_token", "renew_token", "expire_token", "may_describe", "is_expired",
           "parse_principal", "ZNODE_VERSION"]

ZNODE_VERSION = 3  # DelegationTokenManagerZk.CurrentVersion: v3 added the requester
ERROR_TIMESTAMP = -1  # what a refused renew/expire answers as its expiry timestamp


@dataclass(frozen=True)
class TokenInfo:
    """What ZooKeeper holds for one token (Kafka's TokenInformation); principals as `Type:name`."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int

    def owner_or_renewer(self, principal: str) -> bool:
        """TokenInformation.ownerOrRenewer."""
        return principal == self.owner or principal in self.renewers


@dataclass(frozen=True)
class TokenSettings:
    """The broker keys that shape tokens; `secret` empty means tokens are disabled."""

    secret: str
    max_lifetime_ms: int = 7 * 24 * 3600 * 1000
    expiry_time_ms: int = 24 * 3600 * 1000

    @property
    def enabled(self) -> bool:
        """KafkaConfig.tokenAuthEnabled: a non-empty secret key."""
        return bool(self.secret)


def parse_principal(text: str) -> tuple[str, str]:
    """`Type:name` -> (type, name); ValueError without a type (SecurityUtils.parseKafkaPrincipal)."""
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise ValueError(f"Invalid principal {text!r}: expected Type:name")
    return kind, name


def token_hmac(token_id: str, secret: str) -> bytes:
    """HMAC-SHA512 of the token id with the secret key (DelegationTokenManager.createHmac)."""
    return _hmac.new(secret.encode(), token_id.encode(), hashlib.sha512).digest()


def hmac_text(mac: bytes) -> str:
    """The token's password as clients and tools show it: standard base64."""
    return base64.b64encode(mac).decode()


def new_token_id() -> str:
    """A random UUID as Kafka's Uuid.toString: URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def encode_token(info: TokenInfo) -> bytes:
    """The znode JSON of DelegationTokenManagerZk.toJsonCompatibleMap (principals sanitized)."""
    return json.dumps({
        "version": ZNODE_VERSION, "owner": sanitize(info.owner), "tokenRequester": sanitize(info.requester),
        "renewers": [sanitize(r) for r in info.renewers], "issueTimestamp": info.issue_ms,
        "maxTimestamp": info.max_ms, "expiryTimestamp": info.expiry_ms, "tokenId": info.token_id,
    }, separators=(",", ":")).encode()


def decode_token(data: bytes | None) -> TokenInfo | None:
    """A token znode's JSON (versions 1-3) -> TokenInfo; None for an empty znode, ValueError when malformed."""
    if not data:
        return None
    try:
        js = json.loads(data)
        version = int(js["version"])
        if not 0 < version <= ZNODE_VERSION:
            raise ValueError(f"unsupported version {version}")
        owner = desanitize(js["owner"])
        parse_principal(owner)
        requester = desanitize(js["tokenRequester"]) if version >= 3 else owner
        renewers = tuple(desanitize(r) for r in js["renewers"])
        return TokenInfo(str(js["tokenId"]), owner, requester, renewers, int(js["issueTimestamp"]),
                         int(js["maxTimestamp"]), int(js["expiryTimestamp"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"Invalid delegation token znode: {exc}") from None


def is_expired(info: TokenInfo, now_ms: int) -> bool:
    """Past its expiry or its max lifetime (what the expiry task removes)."""
    return info.max_ms < now_ms or info.expiry_ms < now_ms


def create_token(settings: TokenSettings, owner: str, requester: str, renewers: Iterable[str],
                 max_lifetime_ms: int, now_ms: int, token_id: str | None = None) -> TokenInfo:
    """A new token: max lifetime capped by delegation.token.max.lifetime.ms (<= 0 asks for it), and a
    first expiry delegation.token.expiry.time.ms away (never past the max)."""
    cap = settings.max_lifetime_ms
    lifetime = cap if max_lifetime_ms <= 0 else min(max_lifetime_ms, cap)
    max_ms = now_ms + lifetime
    return TokenInfo(token_id or new_token_id(), owner, requester, tuple(renewers), now_ms, max_ms,
                     min(max_ms, now_ms + settings.expiry_time_ms))


def renew_token(settings: TokenSettings, info: TokenInfo, principal: str, renew_ms: int,
                now_ms: int) -> tuple[ErrorCode, TokenInfo | None, int]:
    """(error, renewed token or None, expiry timestamp) for a RenewDelegationToken from `principal`."""
    if not info.owner_or_renewer(principal):
        return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, None, ERROR_TIMESTAMP
    if is_expired(info, now_ms):
        return ErrorCode.DELEGATION_TOKEN_EXPIRED, None, ERROR_TIMESTAMP
    period = settings.expiry_time_ms if renew_ms < 0 else renew_ms
    expiry = min(info.max_ms, now_ms + period)
    return ErrorCode.NONE, replace(info, expiry_ms=expiry), expiry


def expire_token(info: TokenInfo, principal: str, period_ms: int,
                 now_ms: int) -> tuple[ErrorCode, TokenInfo | None, int]:
    """(error, token with its new expiry or None to delete it, expiry timestamp) for an ExpireDelegationToken.

    A negative period expires the token at once: it is deleted (Kafka answers `now`)."""
    if not info.owner_or_renewer(principal):
        return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, None, ERROR_TIMESTAMP
    if period_ms < 0:
        return ErrorCode.NONE, None, now_ms
    if is_expired(info, now_ms):
        return ErrorCode.DELEGATION_TOKEN_EXPIRED, None, ERROR_TIMESTAMP
    expiry = min(info.max_ms, now_ms + period_ms)
    return ErrorCode.NONE, replace(info, expiry_ms=expiry), expiry


def may_describe(info: TokenInfo, requester: str, owners: list[str] | None,
                 token_allowed: Callable[[str], bool], owner_allowed: Callable[[str], bool]) -> bool:
    """DelegationTokenManager.filterToken: asked for (owners filter), then own or renewable tokens, then
    DESCRIBE on the DelegationToken resource or DESCRIBE_TOKENS on the owner's User resource."""
    if owners is not None and not any(info.owner_or_renewer(o) for o in owners):
        return False
    return info.owner_or_renewer(requester) or token_allowed(info.token_id) or owner_allowed(info.owner)
