"""The ACLs Kafka gives the znodes it creates (ZkData.defaultAcls), and ZooKeeper's digest login.

With `zookeeper.set.acl=true` a ZK-mode Kafka broker creates every znode with
creator-all + world-read, except under the sensitive roots (SCRAM credentials in /config/users,
dynamic broker configs that may hold passwords in /config/brokers, delegation tokens), which get
creator-all only, and the old consumers' /consumers, which stays open because every consumer
wrote below it. "Creator" is ZooKeeper's `auth` scheme: whoever the session authenticated as.
"""

from __future__ import annotations

from typing import Callable

from kazoo.security import ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

from pylog.zk import paths

__all__ = ["SENSITIVE_ROOT_PATHS", "AclPolicy", "default_acls", "is_sensitive", "secure_policy"]

SENSITIVE_ROOT_PATHS = (
    paths.config_entity_type("users"),
    paths.config_entity_type("brokers"),
    "/delegation_token/tokens",
)

AclPolicy = Callable[[str], list[ACL]]


def is_sensitive(path: str) -> bool:
    """True for znodes only their creator may read (Kafka's ZkData.sensitivePath: a prefix match)."""
    return any(path.startswith(root) for root in SENSITIVE_ROOT_PATHS)


def default_acls(secure: bool, path: str) -> list[ACL]:
    """The ACL for a znode created at path (relative to the chroot), as Kafka's ZkData.defaultAcls."""
    if not secure or path == paths.consumers():
        return list(OPEN_ACL_UNSAFE)
    acls = list(CREATOR_ALL_ACL)
    if not is_sensitive(path):
        acls += READ_ACL_UNSAFE
    return acls


def secure_policy(path: str) -> list[ACL]:
    """default_acls(True, path): the policy a client authenticated to ZooKeeper creates znodes with."""
    return default_acls(True, path)
