"""The broker's ACL authorizer (`authorizer.class.name=kafka.security.authorizer.AclAuthorizer`).

It keeps every ACL in memory, loaded from ZooKeeper at start and refreshed per resource from the
`/kafka-acl-changes` and `/kafka-acl-extended-changes` notifications, so a change made on any broker
or by the tools takes effect everywhere without a restart. Handlers ask `allowed(ctx, ...)`; the
Create/Describe/DeleteAcls handlers hand their requests to it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from pylog.security.acl import (CLUSTER_NAME, OPERATIONS, PATTERNS, PERMISSIONS, RESOURCE_TYPES, AclBinding, AclEntry,
                                BindingFilter, ResourcePattern, authorize, authorize_any, supported_operations)
from pylog.security.acl_store import PATTERN_TYPES, bindings, decode_change, read_all, read_resource, update_resource
from pylog.security.connection import ANONYMOUS
from pylog.zk import paths
from pylog.zk.errors import NoNodeError

log = logging.getLogger("pylog.authorizer")

__all__ = ["AUTHORIZER_NAMES", "AclAuthorizer", "allowed", "allowed_any", "authorized_operations", "config_refusal", "from_config"]

AUTHORIZER_NAMES = ("kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer",
                    "pylog.security.AclAuthorizer")
_CODE = {name: code for table in (RESOURCE_TYPES, OPERATIONS, PERMISSIONS, PATTERNS) for code, name in table.items()}
INVALID_REQUEST, TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 42, 29, 31
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


def config_refusal(ctx: Any, operation: str, resource_type: int, name: str) -> tuple[int, str] | None:
    """(error code, message) when a Describe/AlterConfigs resource is not allowed: topics need `operation` on
    the topic, brokers on the cluster (ConfigResource types 2 and 4)."""
    if resource_type == 2 and not allowed(ctx, operation, "TOPIC", name):
        return TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
    if resource_type == 4 and not allowed(ctx, operation, "CLUSTER"):
        return CLUSTER_AUTHORIZATION_FAILED, "Authorization failed."
    return None


class AclAuthorizer:
    """ACLs cached from ZooKeeper and Kafka's authorization rule over them."""

    def __init__(self, zk: Any, super_users: frozenset[str], allow_if_no_acl: bool) -> None:
        self.zk, self.super_users, self.allow_if_no_acl = zk, super_users, allow_if_no_acl
        self.acls: dict[ResourcePattern, set[AclEntry]] = {}
        self._bindings: list[AclBinding] = []
        self._seen = {t: -1 for t in PATTERN_TYPES}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watches: list[Any] = []

    def stop(self) -> None:
        """Stop following change notifications."""
        for w in self._watches:
            w.cancel()

    async def _zk(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def start(self) -> None:
        """Load every ACL, then follow both change stores."""
        self._loop = asyncio.get_running_loop()
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
        # kazoo's thread: read the new notifications here (blocking is fine), apply on the loop.
        fresh = sorted(c for c in children if paths.sequence_number(c) > self._seen[pattern_type])
        if not fresh:
            return
        self._seen[pattern_type] = paths.sequence_number(fresh[-1])
        parent = paths.acl_changes(pattern_type)
        updates = {}
        for child in fresh:
            got = self.zk.get_or_none(f"{parent}/{child}")
            try:
                pattern = decode_change(pattern_type, got[0]) if got else None
            except (ValueError, KeyError):
                log.warning("Ignoring an unreadable ACL change notification %s/%s", parent, child)
                continue
            if pattern is not None:
                updates[pattern] = read_resource(self.zk, pattern)[0]
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._apply, updates)
        self._purge(parent, children)

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

    def _apply(self, updates: dict[ResourcePattern, set[AclEntry]]) -> None:
        acls = dict(self.acls)
        for pattern, entries in updates.items():
            if entries:
                acls[pattern] = entries
            else:
                acls.pop(pattern, None)
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

    # -- the ACL APIs ----------------------------------------------------------------------

    async def create_acls_response(self, ctx: Any, req: Any, cls: Any) -> Any:
        """CreateAcls: validate each binding, store it (one conditional write per resource)."""
        results = []
        if not allowed(ctx, "ALTER", "CLUSTER"):
            return cls(throttle_time_ms=0, results=[cls.AclCreationResult(
                error_code=CLUSTER_AUTHORIZATION_FAILED, error_message="Cluster authorization failed.")
                for _ in req.creations])
        for c in req.creations:
            binding, problem = _binding(c)
            if problem is None:
                await self._zk(update_resource, self.zk, binding.pattern, lambda s, e=binding.entry: s | {e})
            results.append(cls.AclCreationResult(error_code=INVALID_REQUEST if problem else 0, error_message=problem))
        return cls(throttle_time_ms=0, results=results)

    async def describe_acls_response(self, ctx: Any, req: Any, cls: Any) -> Any:
        """DescribeAcls: the bindings matching the filter, grouped by resource pattern."""
        if not allowed(ctx, "DESCRIBE", "CLUSTER"):
            return cls(throttle_time_ms=0, error_code=CLUSTER_AUTHORIZATION_FAILED,
                       error_message="Cluster authorization failed.", resources=[])
        f = _filter(req.resource_type_filter, req.resource_name_filter, req.pattern_type_filter, req.principal_filter,
                    req.host_filter, req.operation, req.permission_type)
        acls = await self._zk(read_all, self.zk)  # what ZooKeeper holds now, not the cache
        by_pattern: dict[ResourcePattern, list[AclEntry]] = {}
        for b in sorted(bindings(acls)):
            if f.matches(b):
                by_pattern.setdefault(b.pattern, []).append(b.entry)
        r = cls.DescribeAclsResource
        return cls(throttle_time_ms=0, error_code=0, error_message=None, resources=[
            r(resource_type=_CODE[p.resource_type], resource_name=p.name, pattern_type=_CODE[p.pattern_type],
              acls=[r.AclDescription(principal=e.principal, host=e.host, operation=_CODE[e.operation],
                                     permission_type=_CODE[e.permission]) for e in entries])
            for p, entries in by_pattern.items()])

    async def delete_acls_response(self, ctx: Any, req: Any, cls: Any) -> Any:
        """DeleteAcls: remove what each filter matches; report every binding removed."""
        fr = cls.DeleteAclsFilterResult
        if not allowed(ctx, "ALTER", "CLUSTER"):
            return cls(throttle_time_ms=0, filter_results=[fr(
                error_code=CLUSTER_AUTHORIZATION_FAILED, error_message="Cluster authorization failed.",
                matching_acls=[]) for _ in req.filters])
        results = []
        acls = await self._zk(read_all, self.zk)
        for flt in req.filters:
            f = _filter(flt.resource_type_filter, flt.resource_name_filter, flt.pattern_type_filter,
                        flt.principal_filter, flt.host_filter, flt.operation, flt.permission_type)
            doomed = [b for b in sorted(bindings(acls)) if f.matches(b)]
            for pattern in {b.pattern for b in doomed}:
                gone = {b.entry for b in doomed if b.pattern == pattern}
                await self._zk(update_resource, self.zk, pattern, lambda s, g=gone: s - g)
            results.append(fr(error_code=0, error_message=None, matching_acls=[fr.DeleteAclsMatchingAcl(
                error_code=0, error_message=None, resource_type=_CODE[b.pattern.resource_type],
                resource_name=b.pattern.name, pattern_type=_CODE[b.pattern.pattern_type], principal=b.entry.principal,
                host=b.entry.host, operation=_CODE[b.entry.operation], permission_type=_CODE[b.entry.permission])
                for b in doomed]))
        return cls(throttle_time_ms=0, filter_results=results)


def _name(table: dict[int, str], code: int) -> str:
    return table.get(code, "UNKNOWN")


def _filter(rtype: int, name: str | None, ptype: int, principal: str | None, host: str | None, op: int,
            perm: int) -> BindingFilter:
    return BindingFilter(_name(RESOURCE_TYPES, rtype), name, _name(PATTERNS, ptype), principal, host,
                         _name(OPERATIONS, op), _name(PERMISSIONS, perm))


def _binding(c: Any) -> tuple[AclBinding | None, str | None]:
    """A CreateAcls creation as a binding, or why it is invalid (Kafka's messages where it has them)."""
    rtype, ptype = _name(RESOURCE_TYPES, c.resource_type), _name(PATTERNS, c.resource_pattern_type)
    op, perm = _name(OPERATIONS, c.operation), _name(PERMISSIONS, c.permission_type)
    if rtype in ("ANY", "UNKNOWN") or ptype not in ("LITERAL", "PREFIXED") or op in ("ANY", "UNKNOWN") \
            or perm in ("ANY", "UNKNOWN"):
        return None, "Invalid ACL creation: the binding has an ANY or UNKNOWN field"
    if rtype == "CLUSTER" and c.resource_name != CLUSTER_NAME:
        return None, f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not c.resource_name or "/" in c.resource_name or c.resource_name in (".", ".."):
        return None, f"Invalid resource name: {c.resource_name!r}"
    if not c.principal or ":" not in c.principal:
        return None, f"Invalid principal: {c.principal!r} (expected <type>:<name>, e.g. User:alice)"
    return AclBinding(ResourcePattern(rtype, c.resource_name, ptype),
                      AclEntry(c.principal, c.host or "*", op, perm)), None
