"""pylog-configs: kafka-configs.sh for topic and broker configs, users' SCRAM credentials and client quotas
(users, clients and <user, client-id> pairs: configs_quotas).

Through --zookeeper it writes /config/<type>/<name> and then a /config/changes notification, like
Kafka 2.8's AdminZkClient.changeEntityConfig, and prints 2.8's texts; through --bootstrap-server it
uses DescribeConfigs / IncrementalAlterConfigs and prints 3.x's. Errors are Kafka's one-line messages
on stderr (`Invalid config(s): k`, `Unknown topic config name: k`, ...), exit 1; option mistakes exit 2.
"""

from __future__ import annotations

import re
from typing import Any

import click

from pylog.cli.common import (OperationError, OptionRules, PylogCommand, command, open_admin, open_zk, require_target,
                              target_options)
from pylog.common import properties

ENTITY_TYPES = ("topics", "brokers", "users", "clients")
# Split on commas (and '=') outside [...], so list values can be given as k=[v1,v2] (ConfigCommand's pattern).
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
MESSAGE_FORMAT_WARNING = (
    "WARNING: The configuration message.format.version={} is specified. This configuration will be ignored if the "
    "version is newer than the inter.broker.protocol.version specified in the broker or if the "
    "inter.broker.protocol.version is 3.0 or newer. This configuration is deprecated and it will be removed in "
    "Apache Kafka 4.0.")


def parse_add_config(text: str) -> dict[str, str]:
    """--add-config 'k1=v1,k2=[v1,v2]' (ConfigCommand.parseConfigsToBeAdded)."""
    items = re.split("," + _OUTSIDE_BRACKETS, text)
    while items and items[-1] == "":  # Java's split drops trailing empty strings
        items.pop()
    pairs = [re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, item) for item in items]
    if not all(len(p) == 2 for p in pairs):
        raise OperationError('requirement failed: Invalid entity config: all configs to be added must be in the '
                             'format "key=val".')
    return {k.strip(): re.sub(r"[\[\]]", "", v).strip() for k, v in pairs}


def parse_delete_config(values: tuple[str, ...]) -> list[str]:
    """--delete-config 'k1,k2' (repeatable)."""
    return [k.strip() for v in values for k in v.split(",") if k.strip()]


class ConfigsCommand(PylogCommand):
    """Keeps the command line: each --entity-name or --entity-default pairs with the --entity-type at its place."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Remember the arguments (ordered_names reads them), then parse as usual."""
        ctx.meta[ARGV] = list(args)
        return super().parse_args(ctx, args)


ARGV = "pylog.configs.argv"


def ordered_names(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """ConfigCommandOptions.entityNames: each --entity-name's value, '' for each --entity-default, in order."""
    out, values, skip = [], iter(names), False
    for token in argv:
        if skip:
            skip = False
        elif token == "--":
            break
        elif token == "--entity-default":
            out.append("")
        elif token == "--entity-name" or token.startswith("--entity-name="):
            out.append(next(values, ""))
            skip = token == "--entity-name"  # its value, even one that looks like a flag
    return out


def resolve_entity(rules: OptionRules, opts: dict[str, Any], argv: list[str]) -> tuple[list[str], list[str]]:
    """(entity types, entity names) as ConfigCommand pairs them by position, from --entity-* or the shortcut
    flags; a name '' is the default entity, fewer names than types means every entity (describe only)."""
    shortcuts = [f for f in ("topic", "broker", "broker-defaults") if rules.has(f)]
    generic = [f for f in ("entity-type", "entity-name", "entity-default") if rules.has(f)]
    if shortcuts and generic:
        raise click.UsageError("--entity-{type,name,default} should not be used in conjunction with specific entity "
                               "flags")
    if len(shortcuts) > 1:
        raise click.UsageError("Only one entity flag may be given: --topic, --broker or --broker-defaults")
    if shortcuts:
        flag = shortcuts[0]
        return (["topics"], [opts["topic"]]) if flag == "topic" else (["brokers"], [opts["broker"] if flag == "broker"
                                                                                   else ""])
    types = list(opts["entity_type"])
    names = ordered_names(argv, opts["entity_name"]) if generic else []
    if not types:
        raise click.UsageError("At least one entity type must be specified")
    repeated = [t for i, t in enumerate(types) if t in types[:i]]
    if repeated:
        raise OperationError(f"Duplicate entity type(s) specified: {','.join(repeated)}")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise OperationError("Only 'users' and 'clients' entity types may be specified together")
    if len(names) > len(types):
        raise OperationError("More entity names specified than entity types")
    for entity_type, name in zip(types, names):
        if name == "" and entity_type not in ("brokers", "users", "clients"):
            raise click.UsageError(f"--entity-default is only supported for --entity-type brokers, users or clients, "
                                   f"not {entity_type}")
    return types, names


def check_args(rules: OptionRules, types: list[str], names: list[str], via_zookeeper: bool) -> None:
    """ConfigCommandOptions.checkArgs (and the alter's one-name-per-type check)."""
    if rules.count(("alter", "describe")) != 1:
        raise click.UsageError("Command must include exactly one action: --describe, --alter")
    rules.invalid("describe", ["alter", "add-config", "add-config-file", "delete-config"])
    for entity_type in types:
        if entity_type not in ENTITY_TYPES:
            connect = "--zookeeper" if via_zookeeper else "--bootstrap-server"
            raise click.UsageError(f"Invalid entity-type {entity_type}, --entity-type must be one of "
                                   f"{','.join(ENTITY_TYPES)} with the {connect} argument")
    if rules.has("all") and via_zookeeper:
        raise click.UsageError("--bootstrap-server must be specified for --all")
    if types[0] == "brokers" and names and names[0] and not re.fullmatch(r"-?\d+", names[0]):
        raise click.UsageError(f"The entity name for brokers must be a valid integer broker id, but it is: {names[0]}")
    if rules.has("alter"):
        if not names:
            raise click.UsageError(f"an entity name must be specified with --alter of {','.join(types)}")
        if len(names) != len(types):
            raise OperationError("--entity-name or --entity-default must be specified with each --entity-type for "
                                 "--alter" if via_zookeeper else "An entity name must be specified for every entity "
                                 "type")
        if rules.has("add-config") and rules.has("add-config-file"):
            raise click.UsageError("Only one of --add-config or --add-config-file must be specified")
        if rules.count(("add-config", "add-config-file", "delete-config")) == 0:
            raise click.UsageError("At least one of --add-config, --add-config-file, or --delete-config must be "
                                   "specified with --alter")


@command("pylog-configs", error_prefix="", cls=ConfigsCommand, help=(
    "Describe and change topic and broker configs (kafka-configs.sh).\n\n"
    "Connect with --bootstrap-server (DescribeConfigs / IncrementalAlterConfigs, Kafka 3.x texts) or --zookeeper "
    "(writes /config/<type>/<name> and a /config/changes notification, Kafka 2.8 texts)."))
@target_options
@click.option("--entity-type", multiple=True,
              help="Type of entity: topics, brokers, users (SCRAM credentials and quotas) or clients (quotas); users "
                   "and clients together for a <user, client-id> pair's quotas.")
@click.option("--entity-name", multiple=True,
              help="Name of the entity (a topic name, a broker id, a user name or a client id); the n-th name "
                   "or --entity-default goes with the n-th --entity-type.")
@click.option("--entity-default", is_flag=True, help="The default entity (brokers: cluster-wide defaults; users, "
                                                     "clients: the default quotas).")
@click.option("--topic", help="Shortcut for --entity-type topics --entity-name TOPIC.")
@click.option("--broker", help="Shortcut for --entity-type brokers --entity-name ID.")
@click.option("--broker-defaults", is_flag=True, help="Shortcut for --entity-type brokers --entity-default.")
@click.option("--describe", is_flag=True, help="List configs for the given entity.")
@click.option("--alter", is_flag=True, help="Alter the configuration of the entity.")
@click.option("--all", "all_", is_flag=True,
              help="With --describe: every config, not only the dynamic ones (--bootstrap-server only).")
@click.option("--add-config", metavar="'K1=V1,K2=[V1,V2]'", help="Configs to add or change.")
@click.option("--add-config-file", type=click.Path(dir_okay=False), help="A .properties file of configs to add.")
@click.option("--delete-config", multiple=True, metavar="'K1,K2'", help="Configs to remove.")
def configs_command(zookeeper: str | None, bootstrap_server: str | None, **opts: Any) -> Any:
    """The pylog-configs command."""
    target = require_target(zookeeper, bootstrap_server)
    ctx = click.get_current_context()
    rules = OptionRules(ctx)
    types, names = resolve_entity(rules, opts, ctx.meta.get(ARGV, []))
    check_args(rules, types, names, bool(target.zookeeper))
    to_set: dict[str, str] = {}
    if opts["add_config_file"]:
        to_set.update(properties.load(opts["add_config_file"]))
    if opts["add_config"]:
        to_set.update(parse_add_config(opts["add_config"]))
    to_delete = parse_delete_config(opts["delete_config"])
    if types[0] in ("users", "clients"):
        result = _quotas(target, types, names, bool(opts["describe"]), opts["all_"], to_set, to_delete)
    else:
        if target.zookeeper:
            from pylog.cli.configs_ops import ZkConfigService
            service: Any = ZkConfigService(open_zk(target.zookeeper))
        else:
            from pylog.cli.configs_ops import BrokerConfigService
            service = BrokerConfigService(open_admin(target.bootstrap_server or ""))
        name = names[0] if names else None
        result = service.describe(types[0], name, opts["all_"]) if opts["describe"] else \
            service.alter(types[0], name or "", to_set, to_delete)
    if "message.format.version" in to_set:
        result.warnings.append(MESSAGE_FORMAT_WARNING.format(to_set["message.format.version"]))
    return result


def _quotas(target: Any, types: list[str], names: list[str], describe: bool, all_: bool, to_set: dict[str, str],
            to_delete: list[str]) -> Any:
    """Users and clients: quotas (configs_quotas), a single user's SCRAM credentials (configs_users)."""
    from pylog.cli.configs_quotas import QuotasBrokerService, QuotasZkService
    from pylog.cli.configs_users import UsersBrokerService, UsersZkService
    users = types == ["users"] and not (describe and target.zookeeper)
    if target.zookeeper:
        zk = open_zk(target.zookeeper)
        service: Any = QuotasZkService(zk, UsersZkService(zk) if users else None)
    else:
        admin = open_admin(target.bootstrap_server or "")
        service = QuotasBrokerService(admin, UsersBrokerService(admin) if users else None)
    if describe:
        return service.describe(types, names, all_)
    return service.alter(types, names, to_set, to_delete)


def main() -> None:
    """Console entry point (bin/pylog-configs.sh, `pylog-configs`)."""
    configs_command.main(prog_name="pylog-configs")


if __name__ == "__main__":
    main()
