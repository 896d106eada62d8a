"""The authorizer's own writes reach its cache at once, as Kafka's AclAuthorizer updates its cache after
the ZooKeeper write: a client told "created" must not be refused by the broker that created it while the
change notification is still on its way (CI saw init_transactions refused right after CreateAcls)."""

from __future__ import annotations

import asyncio

import pytest

from pylog.security.acl import AclBinding, AclEntry, BindingFilter, ResourcePattern
from pylog.security.authorizer import AclAuthorizer
from pylog.zk.client import ZkClient

pytestmark = pytest.mark.integration


def _binding(name: str) -> AclBinding:
    return AclBinding(ResourcePattern("TRANSACTIONAL_ID", name, "LITERAL"),
                      AclEntry("User:bob", "*", "WRITE", "ALLOW"))


def test_create_and_delete_take_effect_on_this_broker_without_a_notification(zk: ZkClient) -> None:
    # No start(): nothing follows the change notifications, so only the write path can update the cache.
    authorizer = AclAuthorizer(zk, frozenset(), allow_if_no_acl=False)
    assert not authorizer.authorize("User:bob", "10.0.0.1", "WRITE", "TRANSACTIONAL_ID", "bob-tx")

    asyncio.run(authorizer.create_acls([_binding("bob-tx")]))
    assert authorizer.authorize("User:bob", "10.0.0.1", "WRITE", "TRANSACTIONAL_ID", "bob-tx")
    assert authorizer.authorize("User:bob", "10.0.0.1", "DESCRIBE", "TRANSACTIONAL_ID", "bob-tx")
    assert not authorizer.authorize("User:bob", "10.0.0.1", "WRITE", "TRANSACTIONAL_ID", "eve-tx")

    gone = asyncio.run(authorizer.delete_acls([BindingFilter(resource_type="TRANSACTIONAL_ID", name="bob-tx")]))
    assert gone == [[_binding("bob-tx")]]
    assert not authorizer.authorize("User:bob", "10.0.0.1", "WRITE", "TRANSACTIONAL_ID", "bob-tx")
