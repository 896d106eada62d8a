"""ACLs in ZooKeeper exactly as ZK-mode Kafka keeps them (blocking kazoo calls; brokers run them in an executor).

`/kafka-acl/<Type>/<name>` (literal) and `/kafka-acl-extended/prefixed/<Type>/<name>` hold
`{"version":1,"acls":[...]}`; after each change a sequential `acl_changes_<n>` znode under
`/kafka-acl-changes` (text `TOPIC:name`) or `/kafka-acl-extended-changes` (JSON with resourceType,
name and patternType) tells every broker which resource to reload. Writes are conditional on the
znode version and retried, as AclAuthorizer's updateResourceAcls.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from pylog.security.acl import AclBinding, AclEntry, ResourcePattern, entries_from_json, entries_to_json
from pylog.zk import paths
from pylog.zk.errors import BadVersionError, NodeExistsError, NoNodeError

__all__ = ["read_resource", "read_all", "update_resource", "notify", "decode_change", "PATTERN_TYPES"]

PATTERN_TYPES = ("LITERAL", "PREFIXED")
_ZK_TYPES = ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User")


def _path(p: ResourcePattern) -> str:
    return paths.acl_resource(p.pattern_type, p.zk_type, p.name)


def read_resource(zk: Any, pattern: ResourcePattern) -> tuple[set[AclEntry], int]:
    """The entries of one resource pattern and the znode version (-1 when there is none)."""
    got = zk.get_or_none(_path(pattern))
    if got is None:
        return set(), -1
    try:
        return entries_from_json(got[0]), got[1].version
    except (ValueError, KeyError, TypeError):
        return set(), got[1].version


def read_all(zk: Any) -> dict[ResourcePattern, set[AclEntry]]:
    """Every ACL in the cluster, by resource pattern."""
    out: dict[ResourcePattern, set[AclEntry]] = {}
    for pattern_type in PATTERN_TYPES:
        for zk_type in _ZK_TYPES:
            try:
                names = zk.get_children(paths.acl_type_dir(pattern_type, zk_type))
            except NoNodeError:
                continue
            rtype = ResourcePattern(_upper_type(zk_type), "", pattern_type).resource_type
            for name in names:
                pattern = ResourcePattern(rtype, name, pattern_type)
                entries, _ = read_resource(zk, pattern)
                if entries:
                    out[pattern] = entries
    return out


def _upper_type(zk_type: str) -> str:
    return "".join(("_" + c if c.isupper() and i else c.upper()) for i, c in enumerate(zk_type)).upper()


def update_resource(zk: Any, pattern: ResourcePattern, change: Callable[[set[AclEntry]], set[AclEntry]]) -> bool:
    """Apply `change` to a resource's entries with a version-conditional write; True when something changed."""
    path = _path(pattern)
    for _ in range(20):
        current, version = read_resource(zk, pattern)
        wanted = change(set(current))
        if wanted == current:
            return False
        try:
            if not wanted:
                zk.delete(path, version)
            elif version < 0:
                zk.create(path, entries_to_json(wanted), make_parents=True)
            else:
                zk.set(path, entries_to_json(wanted), version)
        except (BadVersionError, NodeExistsError, NoNodeError):
            continue  # someone else changed it: read again
        notify(zk, pattern)
        return True
    raise RuntimeError(f"Failed to update ACLs for {pattern} after retries")


def notify(zk: Any, pattern: ResourcePattern) -> None:
    """Write the change notification brokers follow."""
    if pattern.pattern_type == "LITERAL":
        data = f"{pattern.resource_type}:{pattern.name}".encode()
    else:
        data = json.dumps({"version": 1, "resourceType": pattern.resource_type, "name": pattern.name,
                           "patternType": pattern.pattern_type}, separators=(",", ":")).encode()
    parent = paths.acl_changes(pattern.pattern_type)
    zk.ensure_path(parent)
    zk.create(f"{parent}/{paths.ACL_CHANGE_PREFIX}", data, sequence=True)


def decode_change(pattern_type: str, data: bytes) -> ResourcePattern:
    """The resource a change notification names (ValueError when unreadable)."""
    text = data.decode()
    if pattern_type == "LITERAL":
        rtype, sep, name = text.partition(":")
        if not sep:
            raise ValueError(f"expected a string in format ResourceType:ResourceName but got {text}")
        return ResourcePattern(rtype.upper(), name, "LITERAL")
    doc = json.loads(text)
    return ResourcePattern(doc["resourceType"].upper(), doc["name"], doc["patternType"].upper())


def bindings(acls: dict[ResourcePattern, set[AclEntry]]) -> Iterable[AclBinding]:
    """Flatten {pattern: entries} into bindings."""
    for pattern, entries in acls.items():
        for e in entries:
            yield AclBinding(pattern, e)
