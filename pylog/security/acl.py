"""Kafka's ACL model and authorization rule (AclAuthorizer), pure: no ZooKeeper, no sockets.

A binding is (resource pattern, entry): the pattern names a resource type, a name and a pattern type
(LITERAL, with `*` for every resource, or PREFIXED); the entry a principal, a host, an operation and
ALLOW/DENY. A request is allowed when no DENY matches and some ALLOW does (DENY wins), counting
Kafka's implied operations (DESCRIBE from READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS from
ALTER_CONFIGS, everything from ALL); super users are allowed everything, and a resource with no ACL
at all is open only with allow.everyone.if.no.acl.found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

__all__ = ["RESOURCE_TYPES", "OPERATIONS", "PERMISSIONS", "PATTERNS", "ResourcePattern", "AclEntry", "AclBinding",
           "BindingFilter", "WILDCARD", "CLUSTER_NAME", "authorize", "authorize_any", "entries_to_json", "entries_from_json",
           "supported_operations"]

# Kafka's enums: code -> NAME (wire codes of the ACL APIs).
RESOURCE_TYPES = {1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "CLUSTER", 5: "TRANSACTIONAL_ID", 6: "DELEGATION_TOKEN",
                  7: "USER"}
OPERATIONS = {1: "ANY", 2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE", 7: "ALTER", 8: "DESCRIBE",
              9: "CLUSTER_ACTION", 10: "DESCRIBE_CONFIGS", 11: "ALTER_CONFIGS", 12: "IDEMPOTENT_WRITE",
              13: "CREATE_TOKENS", 14: "DESCRIBE_TOKENS"}
PERMISSIONS = {1: "ANY", 2: "DENY", 3: "ALLOW"}
PATTERNS = {1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
WILDCARD = "*"
CLUSTER_NAME = "kafka-cluster"
_IMPLIED = {"DESCRIBE": {"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"}, "DESCRIBE_CONFIGS": {"DESCRIBE_CONFIGS",
                                                                                             "ALTER_CONFIGS"}}
# AclEntry.supportedOperations
_SUPPORTED = {
    "TOPIC": {"READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"},
    "GROUP": {"READ", "DESCRIBE", "DELETE"},
    "CLUSTER": {"CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "ALTER",
                "DESCRIBE"},
    "TRANSACTIONAL_ID": {"DESCRIBE", "WRITE"},
    "DELEGATION_TOKEN": {"DESCRIBE"},
    "USER": {"CREATE_TOKENS", "DESCRIBE_TOKENS"},
}


def supported_operations(resource_type: str) -> set[str]:
    """The operations an ACL on this resource type may name (ALL aside)."""
    return set(_SUPPORTED.get(resource_type, ()))


def _camel(name: str) -> str:
    """TOPIC -> Topic, TRANSACTIONAL_ID -> TransactionalId (the ZooKeeper spelling)."""
    return "".join(part.capitalize() for part in name.split("_"))


def _upper(camel: str) -> str:
    out = ""
    for i, ch in enumerate(camel):
        out += ("_" if ch.isupper() and i else "") + ch.upper()
    return out


@dataclass(frozen=True, order=True)
class ResourcePattern:
    """A resource type, a name and how the name matches (LITERAL or PREFIXED)."""

    resource_type: str
    name: str
    pattern_type: str = "LITERAL"

    def __str__(self) -> str:
        return f"ResourcePattern(resourceType={self.resource_type}, name={self.name}, patternType={self.pattern_type})"

    def matches(self, resource_type: str, name: str) -> bool:
        """Whether this pattern covers the concrete resource (type, name)."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == "PREFIXED":
            return name.startswith(self.name)
        return self.name == WILDCARD or self.name == name

    @property
    def zk_type(self) -> str:
        """The resource type as ZooKeeper paths spell it (Topic, Group, Cluster, ...)."""
        return _camel(self.resource_type)


@dataclass(frozen=True, order=True)
class AclEntry:
    """principal, host, operation, permission (ALLOW/DENY)."""

    principal: str
    host: str
    operation: str
    permission: str

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation}, "
                f"permissionType={self.permission})")


@dataclass(frozen=True, order=True)
class AclBinding:
    """An ACL: a pattern and an entry."""

    pattern: ResourcePattern
    entry: AclEntry


@dataclass(frozen=True)
class BindingFilter:
    """DescribeAcls/DeleteAcls filter; None or ANY matches everything in that field."""

    resource_type: str = "ANY"
    name: str | None = None
    pattern_type: str = "ANY"
    principal: str | None = None
    host: str | None = None
    operation: str = "ANY"
    permission: str = "ANY"

    def matches(self, b: AclBinding) -> bool:
        """AclBindingFilter.matches, including MATCH (every pattern that covers the named resource)."""
        p, e = b.pattern, b.entry
        if self.resource_type != "ANY" and p.resource_type != self.resource_type:
            return False
        if self.pattern_type == "MATCH":
            if self.name is not None and not p.matches(p.resource_type, self.name):
                return False
        else:
            if self.pattern_type != "ANY" and p.pattern_type != self.pattern_type:
                return False
            if self.name is not None and p.name != self.name:
                return False
        return ((self.principal is None or e.principal == self.principal)
                and (self.host is None or e.host == self.host)
                and (self.operation == "ANY" or e.operation == self.operation)
                and (self.permission == "ANY" or e.permission == self.permission))


def _entry_matches(e: AclEntry, principal: str, host: str) -> bool:
    return e.principal in (principal, "User:*") and e.host in (host, WILDCARD)


def authorize(bindings: Iterable[AclBinding], principal: str, host: str, operation: str, resource_type: str,
              name: str, super_users: frozenset[str] = frozenset(), allow_if_no_acl: bool = False) -> bool:
    """AclAuthorizer.authorize for one action."""
    if principal in super_users:
        return True
    relevant = [b.entry for b in bindings if b.pattern.matches(resource_type, name)]
    if not relevant:
        return allow_if_no_acl
    mine = [e for e in relevant if _entry_matches(e, principal, host)]
    if any(e.permission == "DENY" and e.operation in (operation, "ALL") for e in mine):
        return False
    allowed = _IMPLIED.get(operation, {operation}) | {"ALL"}
    return any(e.permission == "ALLOW" and e.operation in allowed for e in mine)


def authorize_any(bindings: Iterable[AclBinding], principal: str, host: str, operation: str, resource_type: str,
                  super_users: frozenset[str] = frozenset(), allow_if_no_acl: bool = False) -> bool:
    """AclAuthorizer.authorizeByResourceType: may the principal do `operation` on at least one resource of the
    type (an ALLOW not covered by a DENY of the same principal)? Kafka asks it for InitProducerId without a
    transactional id, which WRITE on any topic permits."""
    if principal in super_users:
        return True
    mine = [b for b in bindings if b.pattern.resource_type == resource_type
            and _entry_matches(b.entry, principal, host) and b.entry.operation in (operation, "ALL")]
    if not any(b.pattern.resource_type == resource_type for b in bindings):
        return allow_if_no_acl
    denied = [b.pattern for b in mine if b.entry.permission == "DENY"]
    if any(d.pattern_type == "LITERAL" and d.name == WILDCARD for d in denied):
        return False

    def covered(p: ResourcePattern) -> bool:
        return any((d.pattern_type == "PREFIXED" and p.name.startswith(d.name))
                   or (d.pattern_type == "LITERAL" and p.pattern_type == "LITERAL" and d.name == p.name) for d in denied)

    return any(b.entry.permission == "ALLOW" and not covered(b.pattern) for b in mine)


def entries_to_json(entries: Iterable[AclEntry]) -> bytes:
    """A resource znode's JSON: {"version":1,"acls":[{"principal","permissionType","operation","host"}]}."""
    return json.dumps({"version": 1, "acls": [
        {"principal": e.principal, "permissionType": _camel(e.permission), "operation": _camel(e.operation),
         "host": e.host} for e in sorted(entries)]}, separators=(",", ":")).encode()


def entries_from_json(data: bytes) -> set[AclEntry]:
    """Parse a resource znode (ValueError when it is not Kafka's format)."""
    doc = json.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("acls"), list):
        raise ValueError("expected {\"version\":1,\"acls\":[...]}")
    return {AclEntry(a["principal"], a["host"], _upper(a["operation"]), _upper(a["permissionType"]))
            for a in doc["acls"]}
