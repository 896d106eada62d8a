"""pylog-acls: kafka-acls.sh (AclCommand 3.3): --add, --remove, --list of ACLs with Kafka's flags and texts.

Through `--authorizer-properties zookeeper.connect=...` it reads and writes /kafka-acl* znodes (with the
change notifications brokers follow), as Kafka's deprecated authorizer path does; through
`--bootstrap-server` it uses CreateAcls / DescribeAcls / DeleteAcls.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

import click

from pylog.cli import render
from pylog.cli.admin_client import check_error
from pylog.cli.common import OperationError, OptionRules, command, open_admin, open_zk
from pylog.protocol.api import ApiKey
from pylog.security.acl import (CLUSTER_NAME, OPERATIONS, PATTERNS, PERMISSIONS, RESOURCE_TYPES, AclBinding, AclEntry,
                                BindingFilter, ResourcePattern, supported_operations)
from pylog.security.acl_store import bindings, read_all, update_resource

_CODE = {name: code for table in (RESOURCE_TYPES, OPERATIONS, PERMISSIONS, PATTERNS) for code, name in table.items()}
NL = "\n"


@dataclass
class AclListing:
    """ACLs by resource pattern, as kafka-acls.sh prints them (headline: Adding/Current ACLs for resource)."""

    sections: list[tuple[str, ResourcePattern | str, list[AclEntry]]] = field(default_factory=list)

    def only(self, principal: str) -> "AclListing":
        """The sections that hold ACLs of this principal, with only those."""
        kept = [(h, p, [e for e in es if e.principal == principal]) for h, p, es in self.sections]
        return AclListing([(h, p, es) for h, p, es in kept if es])


@render.text.register
def _(r: AclListing) -> list[str]:
    # AclCommand's println(s"... `$resource`: $Newline ${acls.map("\t" + _).mkString(Newline)} $Newline")
    return [f"{head} `{pattern}`" if not entries and head.startswith("ACLs for principal") else
            f"{head} `{pattern}`: {NL} {NL.join(chr(9) + str(e) for e in entries)} {NL}"
            for head, pattern, entries in r.sections]


def _pattern_filter_text(f: BindingFilter) -> str:
    return f"ResourcePattern(resourceType={f.resource_type}, name={f.name}, patternType={f.pattern_type})"


class ZkAcls:
    """ACLs straight in ZooKeeper."""

    def __init__(self, zk: Any) -> None:
        self.zk = zk

    def add(self, pattern: ResourcePattern, entries: set[AclEntry]) -> None:
        """Add entries to one resource."""
        update_resource(self.zk, pattern, lambda s: s | entries)

    def matching(self, f: BindingFilter) -> list[AclBinding]:
        """Every binding the filter matches."""
        return [b for b in sorted(bindings(read_all(self.zk))) if f.matches(b)]

    def remove(self, f: BindingFilter) -> None:
        """Remove what the filter matches."""
        doomed = self.matching(f)
        for pattern in {b.pattern for b in doomed}:
            gone = {b.entry for b in doomed if b.pattern == pattern}
            update_resource(self.zk, pattern, lambda s, g=gone: s - g)


class BrokerAcls:
    """ACLs through the ACL APIs of a broker."""

    def __init__(self, admin: Any) -> None:
        self.client = admin.client

    def add(self, pattern: ResourcePattern, entries: set[AclEntry]) -> None:
        """CreateAcls for one resource."""
        def build(cls: type, v: int):
            return cls(creations=[cls.AclCreation(
                resource_type=_CODE[pattern.resource_type], resource_name=pattern.name,
                resource_pattern_type=_CODE[pattern.pattern_type], principal=e.principal, host=e.host,
                operation=_CODE[e.operation], permission_type=_CODE[e.permission]) for e in sorted(entries)])
        for r in self.client.call(ApiKey.CreateAcls, build).results:
            check_error(r.error_code, r.error_message)

    def matching(self, f: BindingFilter) -> list[AclBinding]:
        """DescribeAcls."""
        def build(cls: type, v: int):
            return cls(resource_type_filter=_CODE[f.resource_type], resource_name_filter=f.name,
                       pattern_type_filter=_CODE[f.pattern_type], principal_filter=f.principal, host_filter=f.host,
                       operation=_CODE[f.operation], permission_type=_CODE[f.permission])
        resp = self.client.call(ApiKey.DescribeAcls, build)
        check_error(resp.error_code, resp.error_message)
        return sorted(AclBinding(ResourcePattern(RESOURCE_TYPES[r.resource_type], r.resource_name,
                                                 PATTERNS[r.pattern_type]),
                                 AclEntry(a.principal, a.host, OPERATIONS[a.operation], PERMISSIONS[a.permission_type]))
                      for r in resp.resources for a in r.acls)

    def remove(self, f: BindingFilter) -> None:
        """DeleteAcls with one filter."""
        def build(cls: type, v: int):
            return cls(filters=[cls.DeleteAclsFilter(
                resource_type_filter=_CODE[f.resource_type], resource_name_filter=f.name,
                pattern_type_filter=_CODE[f.pattern_type], principal_filter=f.principal, host_filter=f.host,
                operation=_CODE[f.operation], permission_type=_CODE[f.permission])])
        for r in self.client.call(ApiKey.DeleteAcls, build).filter_results:
            check_error(r.error_code, r.error_message)


def _resources(opts: dict[str, Any], pattern_type: str, required: bool) -> list[tuple[str, str]]:
    out = [("TOPIC", t.strip()) for t in opts["topic"]]
    if opts["cluster"] or opts["idempotent"]:
        if pattern_type == "LITERAL":
            out.append(("CLUSTER", CLUSTER_NAME))
    out += [("GROUP", g.strip()) for g in opts["group"]]
    out += [("TRANSACTIONAL_ID", t) for t in opts["transactional_id"]]
    out += [("DELEGATION_TOKEN", t.strip()) for t in opts["delegation_token"]]
    out += [("USER", u.strip()) for u in opts["user_principal"]]
    if not out and required:
        raise click.UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group "
                               "<group> or --delegation-token <Delegation Token ID>")
    return out


def _entries(opts: dict[str, Any], operations: Iterable[str]) -> set[AclEntry]:
    out = set()
    for principals, hosts, perm in ((opts["allow_principal"], opts["allow_host"], "ALLOW"),
                                    (opts["deny_principal"], opts["deny_host"], "DENY")):
        for p in principals:
            if ":" not in p:
                raise OperationError(f"principalType must be supplied with principal name: {p}")
            for h in (hosts or ("*",)):
                out |= {AclEntry(p.strip(), h.strip(), op, perm) for op in operations}
    return out


_OPS_BY_KEY = {op.replace("_", "").lower(): op for op in OPERATIONS.values() if op != "ANY"}


def _operation(name: str) -> str:
    """Read, read, READ, ClusterAction, CLUSTER_ACTION -> Kafka's operation name."""
    op = _OPS_BY_KEY.get(name.strip().replace("_", "").lower())
    if op is None:
        raise OperationError(f"Unknown operation: {name}")
    return op


def _requested(opts: dict[str, Any], pattern_type: str) -> dict[tuple[str, str], set[AclEntry]]:
    """AclCommand.getResourceFilterToAcls: the CLI's own ACLs, or the --producer / --consumer sets."""
    resources = _resources(opts, pattern_type, required=True)
    out: dict[tuple[str, str], set[AclEntry]] = {}
    if not opts["producer"] and not opts["consumer"]:
        ops = {_operation(o) for o in (opts["operation"] or ("All",))}
        out = {r: _entries(opts, ops) for r in resources}
    if opts["producer"]:
        for r in resources:
            if r[0] == "TOPIC":
                out[r] = _entries(opts, {"WRITE", "DESCRIBE", "CREATE"})
            elif r[0] == "TRANSACTIONAL_ID":
                out[r] = _entries(opts, {"WRITE", "DESCRIBE"})
        if opts["idempotent"]:
            out[("CLUSTER", CLUSTER_NAME)] = _entries(opts, {"IDEMPOTENT_WRITE"})
    if opts["consumer"]:
        for r in resources:
            if r[0] in ("TOPIC", "GROUP"):
                out.setdefault(r, set()).update(_entries(opts, {"READ", "DESCRIBE"} if r[0] == "TOPIC" else {"READ"}))
    for (rtype, _), entries in out.items():
        bad = sorted({e.operation for e in entries} - supported_operations(rtype) - {"ALL"})
        if bad:
            raise OperationError(f"ResourceType {rtype} only supports operations "
                                 f"{','.join(sorted(supported_operations(rtype) | {'ALL'}))}")
    return out


def _check_args(rules: OptionRules, opts: dict[str, Any]) -> None:
    if rules.count(("list", "add", "remove")) != 1:
        raise click.UsageError("Command must include exactly one action: --list, --add, --remove. ")
    if not opts["bootstrap_server"] and not opts["authorizer_properties"]:
        raise click.UsageError("One of --bootstrap-server or --authorizer-properties must be specified")
    if opts["bootstrap_server"] and opts["authorizer_properties"]:
        raise click.UsageError("Only one of --bootstrap-server or --authorizer-properties must be specified")
    rules.invalid("list", ["producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"])
    if opts["producer"] and not opts["topic"] and not opts["transactional_id"]:
        raise click.UsageError("With --producer you must specify a --topic")
    if opts["idempotent"] and not opts["producer"]:
        raise click.UsageError("The --idempotent option is only available if --producer is set")
    if opts["consumer"] and (not opts["topic"] or not opts["group"] or opts["cluster"] or opts["transactional_id"]):
        raise click.UsageError("With --consumer you must specify a --topic and a --group and no --cluster or "
                               "--transactional-id option should be specified.")


def _service(opts: dict[str, Any]) -> Any:
    if opts["bootstrap_server"]:  # open_admin applies --command-config (TLS, SASL)
        return BrokerAcls(open_admin(opts["bootstrap_server"]))
    props = dict(p.split("=", 1) for p in opts["authorizer_properties"] if "=" in p)
    if "zookeeper.connect" not in props:
        raise click.UsageError("--authorizer-properties must include zookeeper.connect=<host:port>")
    click.echo("Warning: support for ACL configuration directly through the authorizer is deprecated and will be "
               "removed in a future release. Please use --bootstrap-server instead to set ACLs through the admin "
               "client.", err=True)
    return ZkAcls(open_zk(props["zookeeper.connect"]))


def _current(service: Any, filters: list[BindingFilter], principals: tuple[str, ...] = ()) -> AclListing:
    """Current ACLs for the filters' resources (all when there are no filters)."""
    if principals:  # AclCommand prints the principal first, then only its ACLs
        out = AclListing()
        for p in principals:
            out.sections.append(("ACLs for principal", p, []))
            out.sections += _current(service, filters).only(p).sections
        return out
    found: dict[ResourcePattern, list[AclEntry]] = {}
    for f in filters or [BindingFilter()]:
        for b in service.matching(f):
            found.setdefault(b.pattern, []).append(b.entry)
    return AclListing([("Current ACLs for resource", p, sorted(set(e))) for p, e in sorted(found.items())])


@command("pylog-acls", error_prefix="Error while executing ACL command: ", help=(
    "Add, remove and list ACLs (kafka-acls.sh), through a broker (--bootstrap-server) or ZooKeeper "
    "(--authorizer-properties zookeeper.connect=HOST:PORT[/chroot])."))
@click.option("--bootstrap-server", help="A broker to talk to.")
@click.option("--command-config", type=click.Path(dir_okay=False), help="Client properties for the admin connection.")
@click.option("--authorizer-properties", multiple=True, help="zookeeper.connect=HOST:PORT[/chroot] (deprecated path).")
@click.option("--authorizer", help="Kafka's authorizer class (accepted; pylog has one).")
@click.option("--add", is_flag=True, help="Add ACLs.")
@click.option("--remove", is_flag=True, help="Remove ACLs.")
@click.option("--list", "list_", is_flag=True, help="List ACLs.")
@click.option("--topic", multiple=True, help="Topic (repeatable; * for all).")
@click.option("--group", multiple=True, help="Consumer group (repeatable).")
@click.option("--cluster", is_flag=True, help="The cluster resource.")
@click.option("--transactional-id", multiple=True, help="Transactional id (repeatable).")
@click.option("--delegation-token", multiple=True, help="Delegation token id.")
@click.option("--user-principal", multiple=True, help="A user resource.")
@click.option("--resource-pattern-type", default="LITERAL", help="ANY, MATCH, LITERAL or PREFIXED.")
@click.option("--allow-principal", multiple=True, help="Principal to allow, e.g. User:alice.")
@click.option("--deny-principal", multiple=True, help="Principal to deny.")
@click.option("--principal", multiple=True, help="With --list: only this principal's ACLs.")
@click.option("--allow-host", multiple=True, help="Host to allow from (default *).")
@click.option("--deny-host", multiple=True, help="Host to deny from (default *).")
@click.option("--operation", multiple=True, help="Operation (Read, Write, Create, Delete, Alter, Describe, "
              "ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, All).")
@click.option("--producer", is_flag=True, help="WRITE, DESCRIBE, CREATE on the topics.")
@click.option("--consumer", is_flag=True, help="READ, DESCRIBE on the topics, READ on the group.")
@click.option("--idempotent", is_flag=True, help="With --producer: IDEMPOTENT_WRITE on the cluster.")
@click.option("--force", is_flag=True, help="Assume yes to every prompt.")
def acls_command(**opts: Any) -> Any:
    """The pylog-acls command."""
    rules = OptionRules(click.get_current_context())
    _check_args(rules, opts)
    pattern_type = opts["resource_pattern_type"].upper()
    if pattern_type not in ("ANY", "MATCH", "LITERAL", "PREFIXED"):
        raise click.UsageError(f"Unknown resource pattern type: {opts['resource_pattern_type']}")
    if opts["add"] and pattern_type not in ("LITERAL", "PREFIXED"):
        raise click.UsageError(f"A '--resource-pattern-type' value of '{pattern_type}' is not valid when adding acls.")
    service = _service(opts)
    if opts["list_"]:
        filters = [BindingFilter(t, n, pattern_type) for t, n in _resources(opts, pattern_type, required=False)]
        return _current(service, filters, tuple(opts["principal"]))
    requested = _requested(opts, pattern_type)
    filters = [BindingFilter(t, n, pattern_type) for t, n in requested]
    if opts["add"]:
        if any(not entries for entries in requested.values()):
            raise click.UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add "
                                   "ACLs.")
        out = AclListing()
        for (rtype, name), entries in requested.items():
            pattern = ResourcePattern(rtype, name, pattern_type)
            out.sections.append(("Adding ACLs for resource", pattern, sorted(entries)))
            service.add(pattern, entries)
        out.sections += _current(service, filters).sections
        return out
    for (rtype, name), entries in requested.items():
        f = BindingFilter(rtype, name, pattern_type)
        text = (f"Are you sure you want to delete all ACLs for resource filter `{_pattern_filter_text(f)}`? (y/n)"
                if not entries else
                f"Are you sure you want to remove ACLs: {NL} {NL.join(chr(9) + str(e) for e in sorted(entries))} {NL}"
                f" from resource filter `{_pattern_filter_text(f)}`? (y/n)")
        if not opts["force"]:
            click.echo(text)
            if sys.stdin.readline().strip().lower() != "y":
                continue
        if not entries:
            service.remove(f)
        for e in entries:
            service.remove(BindingFilter(rtype, name, pattern_type, e.principal, e.host, e.operation, e.permission))
    return _current(service, filters)


def main() -> None:
    """Console entry point (bin/pylog-acls.sh)."""
    acls_command.main(prog_name="pylog-acls")


if __name__ == "__main__":
    main()
