"""Kafka's ZkSecurityMigrator: set every Kafka znode's ACL to what zookeeper.set.acl would have made.

A cluster that ran without ZooKeeper ACLs keeps its open znodes when the brokers restart with
zookeeper.set.acl=true (ACLs apply only at creation); this walks Kafka's secure root paths and their
whole subtrees and sets Kafka's default ACLs (`secure`) or opens them again (`unsecure`). /consumers,
the old consumers' tree, is not among the roots and stays as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pylog.zk import paths
from pylog.zk.acls import default_acls
from pylog.zk.core import ZkConnection
from pylog.zk.errors import NoNodeError

__all__ = ["SECURE_ROOT_PATHS", "MigrationResult", "missing_roots", "migrate"]

# ZkData.SecureRootPaths ++ ZkAclStore.securePaths (the KRaft /migration root aside: pylog has no KRaft).
SECURE_ROOT_PATHS: tuple[str, ...] = (
    paths.admin(), paths.brokers(), paths.cluster(), paths.config(), paths.controller(), paths.controller_epoch(),
    paths.isr_change_notifications(), paths.latest_producer_id_block(), paths.log_dir_event_notifications(),
    "/delegation_token", "/kafka-acl-extended", paths.feature(),
    "/kafka-acl", paths.acl_changes("LITERAL"), "/kafka-acl-extended/prefixed", paths.acl_changes("PREFIXED"),
)


@dataclass
class MigrationResult:
    """What the migration changed."""

    secure: bool
    znodes: int = 0  # znodes whose ACL was set
    failed: dict[str, str] = field(default_factory=dict)  # path -> error (NoAuth: created by another login)


def missing_roots(zk: ZkConnection) -> list[str]:
    """The secure root paths that do not exist (usually: a wrong chroot)."""
    found = zk.get_children_many(SECURE_ROOT_PATHS)
    return [p for p in SECURE_ROOT_PATHS if found[p] is None]


def migrate(zk: ZkConnection, secure: bool) -> MigrationResult:
    """Set the chroot's and every secure root's subtree ACLs (creating missing roots, but not /controller)."""
    result = MigrationResult(secure)
    _apply(zk, ["/"], secure, result)
    for root in SECURE_ROOT_PATHS:
        if root == paths.controller() and zk.exists(root) is None:
            continue  # ephemeral: only a controller creates it
        zk.ensure_path(root)
        for level in zk.tree_levels(root):
            _apply(zk, level, secure, result)
    return result


def _apply(zk: ZkConnection, level: list[str], secure: bool, result: MigrationResult) -> None:
    """Set one level's ACLs; errors are collected (a znode may vanish meanwhile: that is fine)."""
    for path, err in zk.set_acls_many({p: default_acls(secure, p) for p in level}).items():
        if err is None:
            result.znodes += 1
        elif not isinstance(err, NoNodeError):
            result.failed[path] = str(err) or type(err).__name__
