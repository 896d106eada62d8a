"""The ACL APIs' wire codes as the ACL model's names: a CreateAcls creation as a binding (or why Kafka refuses
it), a Describe/DeleteAcls filter, and the code of a name for the responses. Pure; the handlers use it."""

from __future__ import annotations

from typing import Any

from pylog.security.acl import (CLUSTER_NAME, OPERATIONS, PATTERNS, PERMISSIONS, RESOURCE_TYPES, AclBinding, AclEntry,
                                BindingFilter, ResourcePattern)

__all__ = ["code_of", "binding_filter", "creation_binding"]

_CODE = {name: code for table in (RESOURCE_TYPES, OPERATIONS, PERMISSIONS, PATTERNS) for code, name in table.items()}


def code_of(name: str) -> int:
    """The wire code of a resource type, operation, permission or pattern type name."""
    return _CODE[name]


def _name(table: dict[int, str], code: int) -> str:
    return table.get(code, "UNKNOWN")


def binding_filter(rtype: int, name: str | None, ptype: int, principal: str | None, host: str | None, op: int,
                   perm: int) -> BindingFilter:
    """A DescribeAcls request's or a DeleteAcls filter's fields as a BindingFilter."""
    return BindingFilter(_name(RESOURCE_TYPES, rtype), name, _name(PATTERNS, ptype), principal, host,
                         _name(OPERATIONS, op), _name(PERMISSIONS, perm))


def creation_binding(c: Any) -> tuple[AclBinding | None, str | None]:
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
