"""pylog-configs: kafka-configs.sh for topic and broker configs and users' SCRAM credentials.

Through --zookeeper it writes /config/<type>/<name> and then a /config/changes notification, like
Kafka 2.8's AdminZkClient.changeEntityConfig, and prints 2.8's texts; through --bootstrap-server it
uses DescribeConfigs / IncrementalAlterConfigs and prints 3.x's. Errors are Kafka's one-line messages
on stderr (`Invalid config(s): k`, `Unknown topic config name: k`, ...), exit 1; option mistakes exit 2.
"""

from __future__ import annotations

import re
from typing import Any

import click

from pylog.cli.common import OperationError, OptionRules, command, open_admin, open_zk, require_target, target_options
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


def resolve_entity(rules: OptionRules, opts: dict[str, Any]) -> tuple[str, str | None]:
    """(entity type, name) from --entity-* or the shortcut flags; name '' is the brokers' default entity,
    None means every entity of the type (describe only)."""
    shortcuts = [f for f in ("topic", "broker", "broker-defaults") if rules.has(f)]
    generic = [f for f in ("entity-type", "entity-name", "entity-default") if rules.has(f)]
    if shortcuts and generic:
        raise click.UsageError("--entity-{type,name,default} should not be used in conjunction with specific entity "
                               "flags")
    if len(shortcuts) > 1:
        raise click.UsageError("Only one entity flag may be given: --topic, --broker or --broker-defaults")
    if shortcuts:
        flag = shortcuts[0]
        return ("topics", opts["topic"]) if flag == "topic" else ("brokers", opts["broker"] if flag == "broker"
                                                                  else "")
    types, names = opts["entity_type"], opts["entity_name"]
    if len(types) > 1 or len(names) > 1:
        # Kafka pairs them into a <user, client-id> entity; taking the last pair alone would change another
        # entity's quotas, so refuse until the pair is supported.
        raise OperationError("Only one --entity-type and --entity-name may be given: quotas of a <user, client-id> "
                             "pair are not supported by pylog-configs yet")
    entity_type, name = (types[0] if types else None), (names[0] if names else None)
    if entity_type is None:
        raise click.UsageError("At least one entity type must be specified")
    if rules.has("entity-name") and rules.has("entity-default"):
        raise click.UsageError("Only one of --entity-name or --entity-default may be given")
    if opts["entity_default"]:
        if entity_type not in ("brokers", "users", "clients"):
            raise click.UsageError(f"--entity-default is only supported for --entity-type brokers, users or clients, "
                                   f"not {entity_type}")
        return entity_type, ""
    return entity_type, name


def check_args(rules: OptionRules, entity_type: str, name: str | None, via_zookeeper: bool) -> None:
    """ConfigCommandOptions.checkArgs for the topics and brokers entity types."""
    if rules.count(("alter", "describe")) != 1:
        raise click.UsageError("Command must include exactly one action: --describe, --alter")
    rules.invalid("describe", ["alter", "add-config", "add-config-file", "delete-config"])
    if entity_type not in ENTITY_TYPES:
        connect = "--zookeeper" if via_zookeeper else "--bootstrap-server"
        raise click.UsageError(f"Invalid entity-type {entity_type}, --entity-type must be one of "
                               f"{','.join(ENTITY_TYPES)} with the {connect} argument")
    if rules.has("all") and via_zookeeper:
        raise click.UsageError("--bootstrap-server must be specified for --all")
    if entity_type == "brokers" and name and not re.fullmatch(r"-?\d+", name):
        raise click.UsageError(f"The entity name for brokers must be a valid integer broker id, but it is: {name}")
    if rules.has("alter"):
        if not name and not (entity_type in ("brokers", "users", "clients") and name == ""):
            raise click.UsageError(f"an entity name must be specified with --alter of {entity_type}")
        if rules.has("add-config") and rules.has("add-config-file"):
            raise click.UsageError("Only one of --add-config or --add-config-file must be specified")
        if rules.count(("add-config", "add-config-file", "delete-config")) == 0:
            raise click.UsageError("At least one of --add-config, --add-config-file, or --delete-config must be "
                                   "specified with --alter")


@command("pylog-configs", error_prefix="", help=(
    "Describe and change topic and broker configs (kafka-configs.sh).\n\n"
    "Connect with --bootstrap-server (DescribeConfigs / IncrementalAlterConfigs, Kafka 3.x texts) or --zookeeper "
    "(writes /config/<type>/<name> and a /config/changes notification, Kafka 2.8 texts)."))
@target_options
@click.option("--entity-type", multiple=True,
              help="Type of entity: topics, brokers, users (SCRAM credentials and quotas) or clients (quotas).")
@click.option("--entity-name", multiple=True,
              help="Name of the entity (a topic name, a broker id, a user name or a client id).")
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
    rules = OptionRules(click.get_current_context())
    entity_type, name = resolve_entity(rules, opts)
    check_args(rules, entity_type, name, bool(target.zookeeper))
    to_set: dict[str, str] = {}
    if opts["add_config_file"]:
        to_set.update(properties.load(opts["add_config_file"]))
    if opts["add_config"]:
        to_set.update(parse_add_config(opts["add_config"]))
    to_delete = parse_delete_config(opts["delete_config"])
    if entity_type in ("users", "clients"):  # quotas (configs_quotas), users' SCRAM credentials (configs_users)
        from pylog.cli.configs_quotas import QuotasBrokerService, QuotasZkService
        from pylog.cli.configs_users import UsersBrokerService, UsersZkService
        users = entity_type == "users" and not (opts["describe"] and target.zookeeper)
        if target.zookeeper:
            zk = open_zk(target.zookeeper)
            service: Any = QuotasZkService(zk, UsersZkService(zk) if users else None)
        else:
            admin = open_admin(target.bootstrap_server or "")
            service = QuotasBrokerService(admin, UsersBrokerService(admin) if users else None)
    elif target.zookeeper:
        from pylog.cli.configs_ops import ZkConfigService
        service = ZkConfigService(open_zk(target.zookeeper))
    else:
        from pylog.cli.configs_ops import BrokerConfigService
        service = BrokerConfigService(open_admin(target.bootstrap_server or ""))
    if opts["describe"]:
        return service.describe(entity_type, name, opts["all_"])
    result = service.alter(entity_type, name or "", to_set, to_delete)
    if "message.format.version" in to_set:
        result.warnings.append(MESSAGE_FORMAT_WARNING.format(to_set["message.format.version"]))
    return result


def main() -> None:
    """Console entry point (bin/pylog-configs.sh, `pylog-configs`)."""
    configs_command.main(prog_name="pylog-configs")


if __name__ == "__main__":
    main()
