"""The broker's ACL authorizer (`authorizer.class.name=kafka.security.authorizer.AclAuthorizer`).

It keeps every ACL in memory, loaded from ZooKeeper at start and refreshed per resource from the
`/kafka-acl-changes` and `/kafka-acl-extended-changes` notifications, so a change made on any broker
or by the tools takes effect everywhere without a restart. Handlers ask `allowed(ctx, ...)`; the
Create/Describe/DeleteAcls handlers store, read and remove bindings through it and build their own responses.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

from pylog.common.errors import ErrorCode
from pylog.security.acl import (CLUSTER_NAME, OPERATIONS, AclBinding, AclEntry, BindingFilter, ResourcePattern,
                                authorize, authorize_any, supported_operations)
from pylog.security.acl_store import PATTERN_TYPES, bindings, decode_change, read_all, read_resource, update_resource
from pylog.security.connection import ANONYMOUS
from pylog.zk import paths
from pylog.zk.errors import NoNodeError

log = logging.getLogger("pylog.authorizer")

__all__ = ["AUTHORIZER_NAMES", "AclAuthorizer", "allowed", "allowed_any", "authorized_operations", "config_refusal", "from_config"]

AUTHORIZER_NAMES = ("kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer",
                    "pylog.security.AclAuthorizer")
NOTIFICATION_EXPIRY_MS = 15 * 60 * 1000  # Kafka's changeExpirationMs


def from_config(cfg: Any, zk: Any) -> "AclAuthorizer | None":
    """The authorizer authorizer.class.name asks for (None when empty); ValueError for an unknown class."""
    name = str(cfg.get("authorizer.class.name") or "").strip()
    if not name:
        return None
    if name not in AUTHORIZER_NAMES:
        raise ValueError(f"authorizer.class.name={name} is not available in pylog; use "
                         "kafka.security.authorizer.AclAuthorizer")
    supers = frozenset(s.strip() for s in str(cfg.get("super.users") or "").split(";") if s.strip())
    return AclAuthorizer(zk, supers, bool(cfg.get("allow.everyone.if.no.acl.found")))


def _asker(ctx: Any) -> tuple["AclAuthorizer", str, str] | None:
    """(authorizer, principal, host) of a request, or None without ACLs or for the broker's own in-process call."""
    authorizer = getattr(ctx.broker, "authorizer", None)
    security = getattr(ctx, "security", None)
    if authorizer is None or security is None:
        return None
    return authorizer, security.principal or ANONYMOUS, ctx.peer.rpartition(":")[0] or ctx.peer


def allowed(ctx: Any, operation: str, resource_type: str, name: str = CLUSTER_NAME) -> bool:
    """Whether the request's principal may do `operation` on the resource (always, without an authorizer)."""
    asker = _asker(ctx)
    if asker is None:
        return True
    authorizer, principal, host = asker
    return authorizer.authorize(principal, host, operation, resource_type, name)


def allowed_any(ctx: Any, operation: str, resource_type: str) -> bool:
    """Whether the principal may do `operation` on some resource of the type (Kafka's authorizeByResourceType)."""
    asker = _asker(ctx)
    if asker is None:
        return True
    authorizer, principal, host = asker
    return authorize_any(authorizer.bindings, principal, host, operation, resource_type,
                         authorizer.super_users, authorizer.allow_if_no_acl)


def authorized_operations(ctx: Any, resource_type: str, name: str = CLUSTER_NAME) -> frozenset[int]:
    """The AclOperation codes the principal may use on a resource (every supported one without ACLs), for the
    authorized-operations fields of Metadata and DescribeCluster."""
    return frozenset(code for code, op in OPERATIONS.items()
                     if op in supported_operations(resource_type) and allowed(ctx, op, resource_type, name))


def config_refusal(ctx: Any, operation: str, resource_type: int, name: str) -> tuple[ErrorCode, str] | None:
    """(error code, message) when a Describe/AlterConfigs resource is not allowed: topics need `operation` on
    the topic, brokers on the cluster (ConfigResource types 2 and 4)."""
    if resource_type == 2 and not allowed(ctx, operation, "TOPIC", name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
    if resource_type == 4 and not allowed(ctx, operation, "CLUSTER"):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Authorization failed."
    return None


class AclAuthorizer:
    """ACLs cached from ZooKeeper and Kafka's authorization rule over them."""

    def __init__(self, zk: Any, super_users: frozenset[str], allow_if_no_acl: bool) -> None:
        self.zk, self.super_users, self.allow_if_no_acl = zk, super_users, allow_if_no_acl
        self.acls: dict[ResourcePattern, set[AclEntry]] = {}
        self._bindings: list[AclBinding] = []
        self._seen = {t: -1 for t in PATTERN_TYPES}
        self._watches: list[Any] = []
        # Held across each read of a resource and its swap into the cache, by the notification thread and by this
        # broker's own writes alike (Kafka's AclAuthorizer lock): an older read can never land after a newer one.
        self._lock = threading.Lock()

    def stop(self) -> None:
        """Stop following change notifications."""
        for w in self._watches:
            w.cancel()

    async def _zk(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def start(self) -> None:
        """Load every ACL, then follow both change stores."""
        self._set(await self._zk(read_all, self.zk))
        for pattern_type in PATTERN_TYPES:
            parent = paths.acl_changes(pattern_type)
            self._watches.append(await self._zk(self.zk.watch_children, parent,
                                                lambda ch, t=pattern_type: self._changed(t, ch)))
        log.info("ACL authorizer loaded %d ACLs on %d resources (super users: %s)", len(self._bindings),
                 len(self.acls), ", ".join(sorted(self.super_users)) or "none")

    def _set(self, acls: dict[ResourcePattern, set[AclEntry]]) -> None:
        self.acls = acls
        self._bindings = list(bindings(acls))

    def _changed(self, pattern_type: str, children: list[str]) -> None:
        # kazoo's thread: read the new notifications and the resources they name here (blocking is fine).
        fresh = sorted(c for c in children if paths.sequence_number(c) > self._seen[pattern_type])
        if not fresh:
            return
        self._seen[pattern_type] = paths.sequence_number(fresh[-1])
        parent = paths.acl_changes(pattern_type)
        changed: set[ResourcePattern] = set()
        for child in fresh:
            got = self.zk.get_or_none(f"{parent}/{child}")
            try:
                pattern = decode_change(pattern_type, got[0]) if got else None
            except (ValueError, KeyError):
                log.warning("Ignoring an unreadable ACL change notification %s/%s", parent, child)
                continue
            if pattern is not None:
                changed.add(pattern)
        self._reload(changed, notified=True)
        self._purge(parent, children)

    def _reload(self, patterns: set[ResourcePattern], notified: bool) -> None:
        """Read the resources from ZooKeeper and swap them into the cache, under the lock (blocking)."""
        with self._lock:
            self._apply({p: read_resource(self.zk, p)[0] for p in patterns}, notified)

    def _purge(self, parent: str, children: list[str]) -> None:
        """Delete notifications older than 15 minutes, as Kafka's change listener does (any broker may)."""
        now = time.time() * 1000
        for child in children:
            stat = self.zk.exists(f"{parent}/{child}")
            if stat is not None and now - stat.ctime > NOTIFICATION_EXPIRY_MS:
                try:
                    self.zk.delete(f"{parent}/{child}")
                except NoNodeError:
                    pass  # another broker purged it first

    def _apply(self, updates: dict[ResourcePattern, set[AclEntry]], notified: bool = True) -> None:
        acls = dict(self.acls)
        for pattern, entries in updates.items():
            if entries:
                acls[pattern] = entries
            else:
                acls.pop(pattern, None)
            if notified:
                    log.info("Processing ACL change notification for %s, versionedAcls : %s", pattern,
                         ", ".join(str(e) for e in sorted(entries)) or "none")
        self._set(acls)

    @property
    def bindings(self) -> list[AclBinding]:
        """Every ACL now in force."""
        return self._bindings

    def authorize(self, principal: str, host: str, operation: str, resource_type: str, name: str) -> bool:
        """Kafka's rule: super users, DENY first, ALLOW with implied operations, the no-ACL default."""
        ok = authorize(self._bindings, principal, host, operation, resource_type, name, self.super_users,
                       self.allow_if_no_acl)
        if not ok:
            log.debug("Principal = %s is Denied Operation = %s from host = %s on resource = %s:%s", principal,
                      operation, host, resource_type, name)
        return ok

    # -- what the ACL APIs change and read (their handlers build the responses) ------------------

    async def create_acls(self, created: list[AclBinding]) -> None:
        """Store bindings, in order: one conditional write per binding's resource."""
        for binding in created:
            await self._zk(update_resource, self.zk, binding.pattern, lambda s, e=binding.entry: s | {e})
        await self._refresh({b.pattern for b in created})

    async def _refresh(self, patterns: set[ResourcePattern]) -> None:
        """Re-read changed resources into this broker's cache now, as Kafka's AclAuthorizer does after its
        write: a client told "created" must not be refused by the same broker while the notification is
        still on its way."""
        if patterns:
            await self._zk(self._reload, patterns, False)

    async def matching_acls(self, f: BindingFilter) -> list[AclBinding]:
        """The bindings matching `f` in what ZooKeeper holds now (not the cache), sorted."""
        acls = await self._zk(read_all, self.zk)
        return [b for b in sorted(bindings(acls)) if f.matches(b)]

    async def delete_acls(self, filters: list[BindingFilter]) -> list[list[AclBinding]]:
        """Remove what each filter matches in one read of ZooKeeper; the bindings removed, per filter."""
        acls = await self._zk(read_all, self.zk)
        removed = []
        for f in filters:
            doomed = [b for b in sorted(bindings(acls)) if f.matches(b)]
            for pattern in {b.pattern for b in doomed}:
                gone = {b.entry for b in doomed if b.pattern == pattern}
                await self._zk(update_resource, self.zk, pattern, lambda s, g=gone: s - g)
            removed.append(doomed)
        await self._refresh({b.pattern for doomed in removed for b in doomed})
        return removed
