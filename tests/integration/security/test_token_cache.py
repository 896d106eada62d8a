"""The delegation token manager's own writes reach its cache at once, as Kafka's DelegationTokenManager does
(updateToken and removeToken: the ZooKeeper write, then its cache, then the notification): a client given a
token, or told it was renewed or expired, must find the broker that answered already agreeing, while the change
notification is still on its way."""

from __future__ import annotations

import asyncio

import pytest

from pylog.broker.delegation_tokens import DelegationTokenManager
from pylog.common.config import BrokerConfig
from pylog.common.errors import ErrorCode
from pylog.zk.client import ZkClient

pytestmark = pytest.mark.integration


def test_create_renew_and_expire_take_effect_on_this_broker_without_a_notification(zk: ZkClient,
                                                                                   zk_connect: str) -> None:
    cfg = BrokerConfig.from_props({"broker.id": "0", "zookeeper.connect": zk_connect,
                                   "delegation.token.secret.key": "token-secret-key"})

    async def run() -> None:
        # No start(): nothing follows the change notifications, so only the write path can update the cache.
        tokens = DelegationTokenManager(cfg, zk, asyncio.ensure_future)
        made = await tokens.create("User:alice", "User:alice", ["User:bob"], -1)
        auth = tokens.auth("SCRAM-SHA-256", made.token_id)
        assert auth is not None and (auth.owner, auth.expiry_ms) == ("User:alice", made.expiry_ms)
        assert [t.token_id for t in tokens.tokens()] == [made.token_id]

        hmac = tokens.cache.hmac_of(made.token_id)
        code, expiry = await tokens.renew("User:bob", hmac, 60_000)
        assert code == ErrorCode.NONE and expiry != made.expiry_ms
        assert tokens.auth("SCRAM-SHA-512", made.token_id).expiry_ms == expiry

        code, _ = await tokens.expire("User:alice", hmac, -1)
        assert code == ErrorCode.NONE
        assert tokens.auth("SCRAM-SHA-256", made.token_id) is None and tokens.tokens() == []
        code, _ = await tokens.renew("User:bob", hmac, 60_000)
        assert code == ErrorCode.DELEGATION_TOKEN_NOT_FOUND

    asyncio.run(run())
